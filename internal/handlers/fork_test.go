package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// TestForkFromAPastReview: a finished search forks from its review
// checkpoint: the fork is a new run waiting at that review again, with
// the same papers, and records its origin; the original is untouched. A
// checkpoint of another run is 404, a missing one 422.
func TestForkFromAPastReview(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": false, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "result_review", 1)
	cp := st.Checkpoint.ID
	res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": cp, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	w.waitFor(t, created.ID, "completed")

	res = w.postJSON(t, "/api/runs/"+created.ID+"/fork", map[string]any{"checkpoint_id": cp, "forked_by": "ada"})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var fork handlers.ForkCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&fork))
	res.Body.Close()
	require.NotEqual(t, created.ID, fork.ID)
	require.Equal(t, created.ID, fork.ForkedFrom.Run)
	require.Equal(t, cp, fork.ForkedFrom.Checkpoint)

	again := w.waitForCheckpoint(t, fork.ID, "result_review", 1)
	require.NotEqual(t, cp, again.Checkpoint.ID, "the fork asks anew")
	ids := func(r handlers.RunJSON) []string {
		var out []string
		for _, p := range r.Collection.Papers {
			out = append(out, p.ID)
		}
		return out
	}
	require.NotEmpty(t, ids(st))
	require.Equal(t, ids(st), ids(again), "the same papers as at the original review")
	require.Equal(t, &engine.ForkOrigin{Run: created.ID, Checkpoint: cp, By: "ada"}, again.ForkedFrom)
	orig := w.getRun(t, created.ID)
	require.Equal(t, "completed", orig.Status, "the original is untouched")
	require.Nil(t, orig.ForkedFrom)

	other := w.startAPIRun(t, map[string]any{"question": "bees and pollination", "strategy_checkpoint": false, "sources": testapp.Sources})
	res = w.postJSON(t, "/api/runs/"+other.ID+"/fork", map[string]any{"checkpoint_id": cp})
	require.Equal(t, http.StatusNotFound, res.StatusCode, "a checkpoint of another run")
	res.Body.Close()
	res = w.postJSON(t, "/api/runs/"+created.ID+"/fork", map[string]any{})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	res.Body.Close()
}
