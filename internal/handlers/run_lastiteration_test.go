package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
)

// decisionButtons lists the decisions a page's buttons post: value → label.
func decisionButtons(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	doc.Find(`button[name="action"]`).Each(func(_ int, s *goquery.Selection) {
		out[s.AttrOr("value", "")] = strings.TrimSpace(s.Text())
	})
	return out
}

// requireLastReview checks a page shows the review as the run's last
// iteration: said plainly, only Finish offered, feedback said not searched.
func requireLastReview(t *testing.T, doc *goquery.Document) {
	t.Helper()
	notice := doc.Find(`[data-testid="checkpoint-review"] [data-testid="last-iteration"]`)
	require.Contains(t, notice.Text(), "iteration 1 of 1")
	require.Contains(t, notice.Text(), "ends the run")
	require.Equal(t, map[string]string{"approve": "Finish the run"}, decisionButtons(doc))
	label := doc.Find(`label[for="feedback"]`).Text()
	require.NotContains(t, label, "next iteration")
	require.Contains(t, label, "not searched")
}

// TestReviewAtLastIterationOnlyFinishes: with max_iterations=1 the review
// says it is iteration 1 of 1 and offers only "Finish the run" — also when
// the form comes back from Enter or a refused mark — and finishing keeps
// the marks and records the feedback with the iteration.
func TestReviewAtLastIterationOnlyFinishes(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "1")
	runID := strings.TrimPrefix(runPath, "/runs/")
	requireLastReview(t, doc)
	ids := paperIDs(doc)
	require.GreaterOrEqual(t, len(ids), 2)
	action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")

	res, kept := w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "op": {"keep"}, "mark:" + ids[0]: {"relevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	requireLastReview(t, kept)
	enter := kept.Find(`[data-testid="enter-notice"]`).Text()
	require.Contains(t, enter, "Finish the run")
	require.NotContains(t, enter, "Iterate")

	res, bad := w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}, "mark:" + ids[0]: {"maybe"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	requireLastReview(t, bad)

	res, _ = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "action": {"approve"},
		"mark:" + ids[0]: {"relevant"}, "mark:" + ids[1]: {"irrelevant"}, "free_text_feedback": {"fewer rodent studies"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	w.waitFor(t, runID, "completed")
	_, doc = w.get(t, w.client, runPath)
	row := doc.Find(`[data-testid="history-row"]`)
	require.Equal(t, 1, row.Length())
	require.Equal(t, "1 relevant, 1 irrelevant. fewer rodent studies", strings.Join(strings.Fields(row.Find("td").Eq(3).Text()), " "),
		"the marks and feedback are recorded")
	require.Equal(t, 1, doc.Find(`[data-testid="accumulated-paper"][data-paper-id="`+ids[0]+`"]`).Length())
	require.Equal(t, 1, doc.Find(`[data-testid="rejected-paper"][data-paper-id="`+ids[1]+`"]`).Length())
}

// TestReviewBeforeLastIterationOffersIterate: below the bound the review
// is unchanged: it counts the iterations and offers all three decisions.
func TestReviewBeforeLastIterationOffersIterate(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	_, doc := w.startReview(t, "2")
	require.Contains(t, doc.Find(`[data-testid="checkpoint-review"] h2`).First().Text(), "iteration 1 of 2")
	require.Empty(t, doc.Find(`[data-testid="last-iteration"]`).Nodes)
	require.Equal(t, map[string]string{"approve": "Approve and finish", "edit": "Iterate with this feedback", "reject": "Reject these results"},
		decisionButtons(doc))
}

// TestStrategyRejectAtLastIteration: with max_iterations=1 the strategy
// checkpoint says rejecting ends the run with no papers and labels the
// button so; rejecting completes the run, whose history says the
// iteration was not searched (not "0") and whose report says no source
// was searched because the run ended first (not "none yet").
func TestStrategyRejectAtLastIteration(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	_, home := w.get(t, w.client, "/")
	res, _ := w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"},
		"max_iterations": {"1"}, "strategy_checkpoint": {"true"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runID := strings.TrimPrefix(res.Request.URL.Path, "/runs/")
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)
	_, doc := w.get(t, w.client, "/runs/"+runID)

	requireLastStrategy := func(doc *goquery.Document) {
		t.Helper()
		notice := doc.Find(`[data-testid="checkpoint-strategy"] [data-testid="last-iteration"]`)
		require.Contains(t, notice.Text(), "iteration 1 of 1")
		require.Contains(t, notice.Text(), "no papers")
		require.Equal(t, "Reject and end the run", decisionButtons(doc)["reject"])
	}
	requireLastStrategy(doc)
	action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
	// "Add query" without JavaScript re-renders the whole page.
	add := strategyValues(doc)
	add.Set("op", "add")
	res, doc = w.post(t, w.client, action, add)
	require.Equal(t, http.StatusOK, res.StatusCode)
	requireLastStrategy(doc)

	res, _ = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "action": {"reject"}, "note": {"wrong population"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	w.waitFor(t, runID, "completed")
	_, doc = w.get(t, w.client, "/runs/"+runID)
	cells := doc.Find(`[data-testid="history-row"] td`)
	require.Equal(t, "not searched (strategy rejected)", strings.TrimSpace(cells.Eq(2).Text()))
	require.Contains(t, cells.Eq(3).Text(), "wrong population")

	res, md := w.download(t, "/runs/"+runID+"/report.md")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, md, "- Databases and sources searched: none: the run ended before searching\n")
	require.NotContains(t, md, "none yet")
}
