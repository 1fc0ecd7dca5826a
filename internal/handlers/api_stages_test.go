package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
)

// TestAPIRunStagesAndResumeContext: GET /api/runs/:id names the run's
// workflow and lays out its stages with their states, and its resume
// context: at the review, every stage before it completed, the review
// waiting, the search's large output only sized.
func TestAPIRunStagesAndResumeContext(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": false, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "result_review", 1)
	require.Equal(t, "search", st.Workflow)
	states := map[string]string{}
	types := map[string]string{}
	var ids []string
	for _, s := range st.Stages {
		states[s.ID], types[s.ID] = s.State, s.Type
		ids = append(ids, s.ID)
	}
	require.Equal(t, []string{"parse", "clarify", "build", "confirm_strategy", "search", "dedup", "score", "organize", "review", "more", "finalize"}, ids, "every stage, in the workflow's order")
	for _, id := range []string{"parse", "build", "search", "dedup", "score", "organize"} {
		require.Equal(t, engine.StageCompleted, states[id], id)
	}
	require.Equal(t, engine.StageSkipped, states["confirm_strategy"], "the strategy checkpoint was off")
	require.Equal(t, engine.StageSkipped, states["clarify"], "clarifying questions are off by default")
	require.Equal(t, engine.StageWaiting, states["review"])
	require.Equal(t, engine.StagePending, states["finalize"])
	require.Equal(t, "gate", types["review"])
	require.Equal(t, "skill", types["search"])

	rc := st.ResumeContext
	require.NotNil(t, rc)
	require.Equal(t, "review", rc.Current)
	require.Equal(t, []string{"parse", "build", "search", "dedup", "score", "organize"}, rc.Completed)
	require.Nil(t, rc.PendingRetry)
	require.NotNil(t, rc.LastOutput)
	require.Equal(t, "organize", rc.LastOutput.Stage)
	require.Positive(t, rc.LastOutput.Bytes)
}

// TestRunPageWorkflowPanel: a run's page ends with its workflow, folded:
// each stage with its state, and the drawing (graph.svg) with the current
// stage outlined and every stage coloured by its state, drawn from the
// search's definition file (search.yaml) as its runs are compiled from it.
func TestRunPageWorkflowPanel(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	panel := doc.Find(`[data-testid="run-workflow"]`)
	require.Equal(t, 1, panel.Length())
	require.Equal(t, "review", panel.Find(`[data-testid="run-current-stage"]`).Text())
	require.Equal(t, "waiting", panel.Find(`[data-stage="review"]`).AttrOr("data-state", ""))
	require.Equal(t, "completed", panel.Find(`[data-stage="search"]`).AttrOr("data-state", ""))
	src := panel.Find(`img[data-testid="run-graph"]`).AttrOr("src", "")
	require.Contains(t, src, runPath+"/graph.svg?v=")

	res, body := w.download(t, src)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "image/svg+xml; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, body, `xmlns="http://www.w3.org/2000/svg"`, "a standalone image")
	svg, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	review := svg.Find(`[data-node="review"]`)
	require.Equal(t, "true", review.AttrOr("data-current", ""))
	require.Equal(t, "waiting", review.AttrOr("data-state", ""))
	require.Equal(t, "completed", svg.Find(`[data-node="organize"]`).AttrOr("data-state", ""))
	require.Equal(t, "pending", svg.Find(`[data-node="finalize"]`).AttrOr("data-state", ""))
	require.Equal(t, "skill", svg.Find(`[data-node="search"]`).AttrOr("data-kind", ""), "drawn from search.yaml, its native steps and form gates allowed")
	require.Equal(t, "gate", review.AttrOr("data-kind", ""))

	res, _ = w.download(t, "/runs/nosuchrun/graph.svg")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
