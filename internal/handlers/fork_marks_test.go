package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// fork forks run runID from checkpoint cp through the API.
func (w *web) fork(t *testing.T, runID, cp string) handlers.ForkCreated {
	t.Helper()
	res := w.postJSON(t, "/api/runs/"+runID+"/fork", map[string]any{"checkpoint_id": cp})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	defer res.Body.Close()
	var f handlers.ForkCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&f))
	return f
}

// TestForkKeepsTheMarksMadeUpToItsCheckpoint: marks live outside the
// run's state, so a fork used to start its review unmarked. A fork from
// the second review has the marks of both reviews; a fork from the first
// has the first's only; a fork of that fork keeps what it was given. The
// original's marks are untouched.
func TestForkKeepsTheMarksMadeUpToItsCheckpoint(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 3,
		"strategy_checkpoint": false, "sources": testapp.Sources})
	first := w.waitForCheckpoint(t, created.ID, "result_review", 1)
	require.GreaterOrEqual(t, len(first.Collection.Papers), 2)
	a, b := first.Collection.Papers[0].ID, first.Collection.Papers[1].ID
	w.putMark(t, created.ID, a, "relevant", "on topic")
	res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": first.Checkpoint.ID, "action": "edit",
		"revised_data": map[string]any{"marked_relevant": []string{a}, "free_text_feedback": "more like this"}})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	second := w.nextReview(t, created.ID, first.Checkpoint.ID)
	w.putMark(t, created.ID, b, "irrelevant", "")
	want := w.storedMarks(t, created.ID)
	require.Equal(t, map[string]string{a: "relevant", b: "irrelevant"}, want)

	late := w.fork(t, created.ID, second.Checkpoint.ID)
	w.nextReview(t, late.ID, "")
	require.Equal(t, want, w.storedMarks(t, late.ID), "a fork from the second review has every mark made up to it")

	early := w.fork(t, created.ID, first.Checkpoint.ID)
	firstAgain := w.nextReview(t, early.ID, "")
	require.Equal(t, map[string]string{a: "relevant"}, w.storedMarks(t, early.ID), "a fork from the first review has only its marks")

	again := w.fork(t, early.ID, firstAgain.Checkpoint.ID)
	w.nextReview(t, again.ID, "")
	require.Equal(t, map[string]string{a: "relevant"}, w.storedMarks(t, again.ID), "a fork of a fork keeps the marks it was given")
	require.Equal(t, want, w.storedMarks(t, created.ID), "the original's marks are untouched")
}

// TestForkSearchesTheFilesItsOriginAttached: a fork from the strategy
// checkpoint whose strategy names a file attached to the original reads
// that file when it searches; it used to fail the search (the file
// belonged to another run).
func TestForkSearchesTheFilesItsOriginAttached(t *testing.T) {
	t.Parallel()
	w, c, runID, st := startAtStrategyWithFiles(t)
	action := "/runs/" + runID + "/checkpoints/" + st.Checkpoint.ID + "/strategy"
	_, page := w.get(t, c, "/runs/"+runID)
	att := formValues(page.Find(`[data-testid="strategy-form"]`))
	att.Set("op", "attach")
	res, doc := w.postMultipart(t, c, action, att, "attach", "embase.ris", embaseRIS)
	require.Equal(t, http.StatusOK, res.StatusCode)
	// Approve with the file ticked, then iterate: the second strategy
	// checkpoint's state names the file, attached to the original.
	approve := formValues(doc.Find(`[data-testid="strategy-form"]`))
	approve.Set("action", "approve")
	res, _ = w.postMultipart(t, c, action, approve, "", "", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	review := w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", review.Checkpoint.Kind)

	res = w.postJSON(t, "/api/runs/"+runID+"/decisions", map[string]any{"checkpoint_id": review.Checkpoint.ID, "action": "edit",
		"revised_data": map[string]any{"free_text_feedback": "again"}})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	strategy2 := w.waitForCheckpoint(t, runID, "strategy_confirmation", 2)

	f := w.fork(t, runID, strategy2.Checkpoint.ID)
	fst := w.waitForCheckpoint(t, f.ID, "strategy_confirmation", 2)
	res = w.postJSON(t, "/api/runs/"+f.ID+"/decisions", map[string]any{"checkpoint_id": fst.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	got := w.waitForCheckpoint(t, f.ID, "result_review", 2)
	var payload struct {
		Collection struct {
			Sources map[string]struct {
				Count int
				Error string
			} `json:"sources"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal(got.Checkpoint.Payload, &payload))
	file := payload.Collection.Sources["file: embase.ris"]
	require.Empty(t, file.Error, "the fork reads the original's file")
	require.Equal(t, 2, file.Count)
}
