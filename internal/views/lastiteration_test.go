package views_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/views"
)

func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	return doc
}

// actions lists the decisions a form's buttons post: value → label.
func actions(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	doc.Find(`button[name="action"]`).Each(func(_ int, s *goquery.Selection) {
		out[s.AttrOr("value", "")] = strings.TrimSpace(s.Text())
	})
	return out
}

func reviewPage(iteration, maxIterations int, enterNotice string) views.RunData {
	paper := research.ScoredPaper{RawPaper: research.RawPaper{ID: "p1", Title: "Sleep and memory"}}
	return views.RunData{
		MaxIterations: maxIterations,
		Status:        views.RunStatus{ID: "r1", Status: "waiting", Iteration: iteration},
		// The decision handlers build the form from its checkpoint alone
		// (no bound): the page's bound must reach it.
		Review: &views.ReviewForm{RunID: "r1", CheckpointID: "c1", Iteration: iteration, EnterNotice: enterNotice,
			Groups: []views.PaperGroup{{Label: "Papers", Papers: []research.ScoredPaper{paper}}}},
	}
}

// TestReviewCheckpointAtLastIteration: at iteration N of N the review says
// the run ends with this decision and offers only to finish (marks kept);
// the feedback box says it is recorded, not searched. Before the bound the
// form is unchanged.
func TestReviewCheckpointAtLastIteration(t *testing.T) {
	t.Parallel()
	doc := render(t, views.RunPage(reviewPage(3, 3, "")))
	review := doc.Find(`[data-testid="checkpoint-review"]`)
	require.Contains(t, review.Find("h2").Text(), "iteration 3 of 3")
	notice := review.Find(`[data-testid="last-iteration"]`)
	require.Equal(t, 1, notice.Length())
	require.Contains(t, notice.Text(), "iteration 3 of 3")
	require.Contains(t, notice.Text(), "cannot iterate again")
	require.Contains(t, notice.Text(), "ends the run")
	require.Equal(t, map[string]string{"approve": "Finish the run"}, actions(doc),
		"iterate and reject would finish the run too: only Finish is offered")
	label := strings.TrimSpace(doc.Find(`label[for="feedback"]`).Text())
	require.NotContains(t, label, "next iteration")
	require.Contains(t, label, "recorded")
	require.Contains(t, label, "not searched")
	require.Equal(t, "keep", doc.Find(`form[data-testid="review-form"] button[type="submit"]`).First().AttrOr("value", ""),
		"Enter still only keeps the marks")

	// Enter brought the form back: the notice names the one button there is.
	doc = render(t, views.RunPage(reviewPage(3, 3, "Nothing was decided: … Use Approve and finish, Iterate with this feedback or Reject these results to decide.")))
	enter := doc.Find(`[data-testid="enter-notice"]`).Text()
	require.Contains(t, enter, "Nothing was decided")
	require.Contains(t, enter, "Finish the run")
	require.NotContains(t, enter, "Iterate")

	doc = render(t, views.RunPage(reviewPage(2, 3, "")))
	require.Contains(t, doc.Find(`[data-testid="checkpoint-review"] h2`).Text(), "iteration 2 of 3")
	require.Empty(t, doc.Find(`[data-testid="last-iteration"]`).Nodes)
	require.Equal(t, map[string]string{"approve": "Approve and finish", "edit": "Iterate with this feedback", "reject": "Reject these results"}, actions(doc))
	require.Equal(t, "Feedback for the next iteration", strings.TrimSpace(doc.Find(`label[for="feedback"]`).Text()))
}

func strategyPage(iteration, maxIterations int) views.RunData {
	return views.RunData{
		MaxIterations: maxIterations,
		Status:        views.RunStatus{ID: "r1", Status: "waiting", Iteration: iteration},
		Strategy:      &views.StrategyForm{RunID: "r1", CheckpointID: "c1", Iteration: iteration, Queries: []string{"sleep memory"}},
	}
}

// TestStrategyCheckpointAtLastIteration: at iteration N of N rejecting the
// strategy ends the run without a search, and the form says so before the
// researcher decides; the buttons stay outside the form the add/remove
// buttons swap, so a swapped-in form cannot lose their wording.
func TestStrategyCheckpointAtLastIteration(t *testing.T) {
	t.Parallel()
	doc := render(t, views.RunPage(strategyPage(1, 1)))
	cp := doc.Find(`[data-testid="checkpoint-strategy"]`)
	require.Contains(t, cp.Find("h2").Text(), "iteration 1 of 1")
	notice := cp.Find(`[data-testid="last-iteration"]`)
	require.Equal(t, 1, notice.Length())
	require.Contains(t, notice.Text(), "iteration 1 of 1")
	require.Contains(t, notice.Text(), "without searching")
	require.Contains(t, notice.Text(), "no papers")
	require.Equal(t, map[string]string{"approve": "Approve", "edit": "Save edits & continue", "reject": "Reject and end the run"}, actions(doc))
	doc.Find(`button[name="action"]`).Each(func(_ int, s *goquery.Selection) {
		require.Equal(t, "strategy-form", s.AttrOr("form", ""), "each decision submits the strategy form")
		require.Empty(t, s.Closest("form").Nodes, "decisions are outside the form htmx swaps")
	})
	require.Equal(t, notice.AttrOr("id", ""), doc.Find(`button[value="reject"]`).AttrOr("aria-describedby", ""))

	// A later last iteration ends with what was found before.
	doc = render(t, views.RunPage(strategyPage(3, 3)))
	notice = doc.Find(`[data-testid="last-iteration"]`)
	require.Contains(t, notice.Text(), "iteration 3 of 3")
	require.Contains(t, notice.Text(), "last search")
	require.NotContains(t, notice.Text(), "no papers")

	doc = render(t, views.RunPage(strategyPage(1, 3)))
	require.Empty(t, doc.Find(`[data-testid="last-iteration"]`).Nodes)
	require.Equal(t, map[string]string{"approve": "Approve", "edit": "Save edits & continue", "reject": "Reject"}, actions(doc))
}

// TestHistoryTableSaysWhenAStrategyWasRejected: an iteration whose strategy
// was rejected was never searched; it shows no count, not "0".
func TestHistoryTableSaysWhenAStrategyWasRejected(t *testing.T) {
	t.Parallel()
	doc := render(t, views.HistoryTable([]views.IterationRow{
		{Iteration: 1, Queries: []string{"sleep"}, Searched: true, StrategyRejected: true, Feedback: "too broad"},
		{Iteration: 2, Queries: []string{"sleep memory"}, ResultCount: 0, Searched: true},
	}))
	cells := doc.Find(`[data-testid="history-row"] td:nth-child(3)`)
	require.Equal(t, 2, cells.Length())
	require.Equal(t, "not searched (strategy rejected)", strings.TrimSpace(cells.Eq(0).Text()))
	require.Equal(t, "0", strings.TrimSpace(cells.Eq(1).Text()), "a search that found nothing still shows 0")
}
