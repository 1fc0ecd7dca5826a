package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// noPolls stops the run page's 2-second status poll on page, and on every
// page it goes to, before the request is sent (htmx sends nothing when
// htmx:configRequest is cancelled), and counts in sessionStorage the polls
// it stopped and the status requests the event stream triggered. With the
// poll gone only the event stream can bring the page a new form, so a test
// using it shows that the stream alone keeps the page up to date, without
// timing anything against the poll's interval.
func noPolls(t *testing.T, page playwright.Page) {
	t.Helper()
	require.NoError(t, page.AddInitScript(playwright.Script{Content: playwright.String(`
		document.addEventListener("htmx:configRequest", function (ev) {
			var elt = ev.detail.elt;
			if (!elt || (elt.id !== "run-status" && elt.id !== "run-watch")) return;
			var how = ev.detail.triggeringEvent ? ev.detail.triggeringEvent.type : "poll";
			var seen = JSON.parse(sessionStorage.getItem("quarryStatusRequests") || "[]");
			seen.push(how);
			sessionStorage.setItem("quarryStatusRequests", JSON.stringify(seen));
			if (how === "poll") ev.preventDefault();
		});
	`)}))
}

// statusRequests lists how each status request of the pages noPolls
// watched was triggered: "poll" (stopped) or "sse:status" (sent).
func statusRequests(t *testing.T, page playwright.Page) []string {
	t.Helper()
	v, err := page.Evaluate(`() => sessionStorage.getItem("quarryStatusRequests") || "[]"`)
	require.NoError(t, err)
	var out []string
	require.NoError(t, json.Unmarshal([]byte(v.(string)), &out))
	return out
}

// TestStreamBringsFormsWithoutPolling (issue 16, defect 3): a page drawn
// at the strategy checkpoint connects to the event stream only after the
// run has moved on to the review (here its stream request is held until
// then; in life the strategy checkpoint comes milliseconds after a start,
// before the page has loaded). The stream's first message is the run's
// current state and, since the page was drawn at another, a ping: the
// page swaps in the review at once. Every status poll is stopped
// (noPolls), so only the stream can bring the review; on the old code,
// whose stream said nothing about the state at connect, it never came.
func TestStreamBringsFormsWithoutPolling(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	page, expect := openPage(t, s.url)
	noPolls(t, page)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	runID := runIDOf(t, page)

	// The stream's first message is the current state, for any client.
	first, err := page.Evaluate(`() => new Promise((resolve, reject) => {
		const es = new EventSource(location.pathname + "/events");
		const seen = [];
		es.onmessage = () => seen.push("message");
		es.addEventListener("progress", () => seen.push("progress"));
		es.addEventListener("status", () => seen.push("status"));
		es.addEventListener("state", (ev) => { es.close(); resolve({before: seen, data: JSON.parse(ev.data)}); });
		setTimeout(() => { es.close(); reject(new Error("no state event")); }, 5000);
	})`)
	require.NoError(t, err)
	got := first.(map[string]any)
	require.Empty(t, got["before"], "the state is the stream's first message")
	state := got["data"].(map[string]any)
	require.Equal(t, "waiting", state["status"])
	cp, _ := state["checkpoint_id"].(string)
	require.NotEmpty(t, cp)

	// Draw the strategy page again, holding its stream's request.
	held := make(chan playwright.Route, 1)
	require.NoError(t, page.Route("**/runs/*/events*", func(r playwright.Route) {
		select {
		case held <- r:
		default:
			_ = r.Continue()
		}
	}))
	unrouteOnCleanup(t, page)
	_, err = page.Reload()
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())
	var stream playwright.Route
	select {
	case stream = <-held:
	case <-time.After(workTimeout):
		t.Fatal("the page never asked for its event stream")
	}

	// Grace approves through the API; the run reaches the review.
	body, err := json.Marshal(map[string]any{"checkpoint_id": cp, "action": "approve", "decided_by": "Grace"})
	require.NoError(t, err)
	res, err := http.Post(s.url+"/api/runs/"+runID+"/decisions", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	require.Eventually(t, func() bool {
		run, err := s.app.Store().Run(context.Background(), runID)
		return err == nil && run.Status == engine.StatusWaiting && run.CheckpointID != cp
	}, workTimeout, 20*time.Millisecond)

	// Only now does the page connect: the stream's first messages bring it
	// the review.
	require.NoError(t, stream.Continue())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	require.Contains(t, statusRequests(t, page), "sse:status", "the stream asked for the new form")
}
