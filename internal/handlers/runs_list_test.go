package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// hostileQuestion is a question carrying markup: the run list must show it
// as text.
const hostileQuestion = `<script>window.pwned=1</script> & "sleep" <b>bold</b>`

// seedRuns stores n runs of the search workflow directly, newest last,
// each in a status that the engine leaves alone (so no job moves them
// while the test reads), and returns their IDs by status. Run i asks
// "question i about sleep" when i is even and "… about raft" when odd.
func (w *web) seedRuns(t *testing.T, n int) map[engine.Status][]string {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)
	statuses := []engine.Status{engine.StatusCompleted, engine.StatusWaiting, engine.StatusFailed}
	out := map[engine.Status][]string{}
	for i := range n {
		topic := "sleep"
		if i%2 == 1 {
			topic = "raft"
		}
		q := fmt.Sprintf("Question %02d about %s", i, topic)
		if i == n-1 {
			q = hostileQuestion
		}
		st := statuses[i%len(statuses)]
		id := fmt.Sprintf("seed%02d", i)
		at := t0.Add(time.Duration(i) * time.Minute)
		// A waiting run waits at a gate: without a checkpoint the advance
		// job CreateRun schedules would take it for a timer's, run step ""
		// and fail it (within ~3 s on SQLite, at once on PostgreSQL).
		var cp string
		if st == engine.StatusWaiting {
			cp = "cp-" + id
		}
		require.NoError(t, w.app.Store().CreateRun(ctx, engine.Run{ID: id, Workflow: "search", Params: engine.Params{"question": q},
			Status: st, Iteration: 1 + i%3, CheckpointID: cp, CreatedAt: at, UpdatedAt: at}))
		out[st] = append(out[st], id)
	}
	return out
}

func runRows(doc *goquery.Document) []string {
	return doc.Find(`[data-testid="runs-row"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-run-id", "") })
}

func pagerOf(doc *goquery.Document, name string) (summary, prev, next string) {
	p := doc.Find(`[data-testid="` + name + `"]`)
	return strings.TrimSpace(p.Find(`[data-testid="pager-summary"]`).Text()),
		p.Find(`[data-testid="pager-prev"]`).AttrOr("href", ""), p.Find(`[data-testid="pager-next"]`).AttrOr("href", "")
}

// TestRunsPage: GET /runs lists every run on the server, newest first, 25 a
// page with "runs 1–25 of 31" and previous/next links that keep the
// filter; filters by status and by a case-insensitive piece of the
// question; shows a question's markup as text; says so past the last page;
// refuses an unknown status or a page that is not a number with a 422
// naming the field; and is linked from every page's navigation. (On the
// old code GET /runs was a 405.)
func TestRunsPage(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	byStatus := w.seedRuns(t, 31)

	res, doc := w.get(t, w.client, "/runs")
	require.Equal(t, http.StatusOK, res.StatusCode)
	rows := runRows(doc)
	require.Len(t, rows, 25)
	require.Equal(t, "seed30", rows[0], "newest first")
	require.Equal(t, "seed06", rows[24])
	sum, prev, next := pagerOf(doc, "runs-pager")
	require.Equal(t, "runs 1–25 of 31", sum)
	require.Empty(t, prev)
	require.Equal(t, "/runs?page=2", next)
	first := doc.Find(`[data-testid="runs-row"]`).Eq(1) // seed29
	require.Equal(t, "Question 29 about raft", strings.TrimSpace(first.Find(`[data-testid="runs-link"]`).Text()))
	require.Equal(t, "/runs/seed29", first.Find(`[data-testid="runs-link"]`).AttrOr("href", ""))
	require.Equal(t, "failed", first.AttrOr("data-status", ""))
	require.Contains(t, first.Text(), "2025-06-01 08:29 UTC")
	require.Equal(t, 1, doc.Find(`[data-testid="nav-runs"][href="/runs"]`).Length(), "the navigation links the list")

	hostile := doc.Find(`[data-testid="runs-row"][data-run-id="seed30"] [data-testid="runs-link"]`)
	require.Equal(t, hostileQuestion, strings.TrimSpace(hostile.Text()), "markup shown as text")
	require.Zero(t, doc.Find(`main script, main b`).Length(), "no markup from a question reaches the page")

	_, doc = w.get(t, w.client, next)
	require.Equal(t, []string{"seed05", "seed04", "seed03", "seed02", "seed01", "seed00"}, runRows(doc))
	sum, prev, next = pagerOf(doc, "runs-pager")
	require.Equal(t, "runs 26–31 of 31", sum)
	require.Equal(t, "/runs", prev)
	require.Empty(t, next, "the last page has no next")

	res, doc = w.get(t, w.client, "/runs?page=3")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, runRows(doc))
	sum, prev, _ = pagerOf(doc, "runs-pager")
	require.Equal(t, "no runs on this page (31 in all)", sum)
	require.Equal(t, "/runs?page=2", prev, "past the end, previous is the last page")

	// Status filter: waiting runs are 1, 4, 7, … 28 (10 of them), kept
	// selected in the form.
	_, doc = w.get(t, w.client, "/runs?status=waiting")
	require.Len(t, runRows(doc), len(byStatus[engine.StatusWaiting]))
	doc.Find(`[data-testid="runs-row"]`).Each(func(_ int, s *goquery.Selection) {
		require.Equal(t, "waiting", s.AttrOr("data-status", ""))
	})
	require.Equal(t, "waiting", doc.Find(`[data-testid="runs-status"] option[selected]`).AttrOr("value", ""))
	sum, _, _ = pagerOf(doc, "runs-pager")
	require.Equal(t, fmt.Sprintf("runs 1–%d of %d", len(byStatus[engine.StatusWaiting]), len(byStatus[engine.StatusWaiting])), sum)

	// Search: "RAFT" matches the 15 odd runs; with a status, both apply,
	// and the pager keeps both.
	_, doc = w.get(t, w.client, "/runs?q=RAFT")
	require.Len(t, runRows(doc), 15)
	require.Equal(t, "RAFT", doc.Find(`[data-testid="runs-q"]`).AttrOr("value", ""))
	_, doc = w.get(t, w.client, "/runs?q=raft&status=completed")
	require.Equal(t, []string{"seed27", "seed21", "seed15", "seed09", "seed03"}, runRows(doc))
	_, doc = w.get(t, w.client, "/runs?q="+url.QueryEscape(`<script>`))
	require.Equal(t, []string{"seed30"}, runRows(doc))
	require.Equal(t, "<script>", doc.Find(`[data-testid="runs-q"]`).AttrOr("value", ""))
	_, doc = w.get(t, w.client, "/runs?q=nothing+like+this")
	require.Empty(t, runRows(doc))
	require.Contains(t, doc.Find(`[data-testid="runs-none"]`).Text(), "No run matches")

	// Exactly a page's worth: "about" is in 30 questions; page 2 has 5 and
	// no next.
	_, doc = w.get(t, w.client, "/runs?q=about")
	sum, _, next = pagerOf(doc, "runs-pager")
	require.Equal(t, "runs 1–25 of 30", sum)
	require.Equal(t, "/runs?page=2&q=about", next)
	_, doc = w.get(t, w.client, next)
	require.Len(t, runRows(doc), 5)

	for _, bad := range []struct{ query, field string }{
		{"status=sleeping", "status"}, {"page=0", "page"}, {"page=two", "page"}, {"page=-1", "page"},
	} {
		res, doc := w.get(t, w.client, "/runs?"+bad.query)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, bad.query)
		require.Equal(t, 1, doc.Find(`[data-testid="error-field"][data-field="`+bad.field+`"]`).Length(), bad.query)
	}
}

// TestRunsPageEmpty: a server with no runs says so and links the home page.
func TestRunsPageEmpty(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	res, doc := w.get(t, w.client, "/runs")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, runRows(doc))
	sum, prev, next := pagerOf(doc, "runs-pager")
	require.Equal(t, "no runs on this page (0 in all)", sum)
	require.Empty(t, prev+next)
	require.Contains(t, doc.Find(`[data-testid="runs-none"]`).Text(), "No runs yet")
}
