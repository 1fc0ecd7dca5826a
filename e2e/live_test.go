package e2e

import (
	"encoding/json"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
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

// TestStreamBringsFormsWithoutPolling (issue 16, defect 3): the run
// reaches its strategy checkpoint milliseconds after it starts, before the
// page that shows it has connected to the event stream; the stream's first
// message carries the run's current state, so the page swaps in the
// strategy form at once instead of at the next 2-second poll. The same
// for the review after Approve. The test stops every poll (noPolls): on
// the old code, whose stream said nothing about the state at connect, the
// strategy form never appeared.
func TestStreamBringsFormsWithoutPolling(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	noPolls(t, page)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, expect.Locator(page.GetByTestId("run-state")).ToHaveText("waiting"))

	// The stream's first message is the current state, for any client.
	first, err := page.Evaluate(`() => new Promise((resolve, reject) => {
		const id = location.pathname.split("/").pop();
		const es = new EventSource("/runs/" + id + "/events");
		const seen = [];
		es.onmessage = (ev) => seen.push("message");
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
	require.NotEmpty(t, state["checkpoint_id"])

	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	require.Contains(t, statusRequests(t, page), "sse:status", "the stream asked for the new form")
}
