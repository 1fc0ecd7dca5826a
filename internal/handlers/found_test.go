package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
)

// TestAPISaysWhatTheLimitCut: with the limit per source (2) below what
// the library matches, GET /api/runs/:id says per source of each
// searched iteration how many were shown of how many found, and each
// query's total is in its query_results.
func TestAPISaysWhatTheLimitCut(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, string(pipeline.KindStrategyConfirmation), 1)
	var p pipeline.StrategyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &p))
	p.Strategy.MaxResultsPerSource = 2
	res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "edit", "revised_data": p.Strategy})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	w.waitForCheckpoint(t, created.ID, string(pipeline.KindResultReview), 1)

	_, body := w.download(t, "/api/runs/"+created.ID)
	var got struct {
		History []struct {
			Found   []runview.SourceFound `json:"found"`
			Sources map[string]struct {
				Count        int `json:"count"`
				QueryResults []struct {
					Count int `json:"count"`
					Total int `json:"total"`
				} `json:"query_results"`
			} `json:"sources"`
		} `json:"history"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Len(t, got.History, 1)
	h := got.History[0]
	require.Len(t, h.Found, 2)
	lib := h.Found[0]
	require.Equal(t, "library", lib.Source)
	require.Equal(t, h.Sources["library"].Count, lib.Shown)
	sum := 0
	for _, q := range h.Sources["library"].QueryResults {
		require.LessOrEqual(t, q.Count, 2)
		require.GreaterOrEqual(t, q.Total, q.Count)
		sum += q.Total
	}
	require.Greater(t, sum, lib.Shown, "the library matched more than the limit let through")
	require.Equal(t, lib.Found.String(), lib.Text)
	require.Regexp(t, `^2 shown of (up to )?\d+ found$`, lib.Text)
}
