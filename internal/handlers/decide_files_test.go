package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
	"quarry/internal/store"
)

// TestStrategyRefusesFilesNotAttachedToTheRun: a strategy naming an
// attached file by anything but the store's ID shape ("../../etc/passwd"),
// or by the ID of another run's file, is refused at the decision with 422
// naming files[i].id, through the API and the form, and the checkpoint
// stays pending.
func TestStrategyRefusesFilesNotAttachedToTheRun(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 2,
		"strategy_checkpoint": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	strategy := func(files string) json.RawMessage {
		return json.RawMessage(`{"queries":[{"text":"memory consolidation"}],"sources":["` + testapp.Sources[0] +
			`"],"max_results_per_source":10,"files":` + files + `}`)
	}
	for _, tt := range []struct{ name, action, files, field string }{
		{"PathTraversal", "edit", `[{"id":"../../etc/passwd","name":"passwd"}]`, "files[0].id"},
		{"OnApprove", "approve", `[{"id":"../../etc/passwd","name":"passwd"}]`, "files[0].id"},
		{"Second", "edit", `[{"id":"0123456789abcdef01234567","name":"a.ris"},{"id":"0123456789ABCDEF01234567","name":"b.ris"}]`, "files[1].id"},
		{"TooShort", "edit", `[{"id":"0123456789abcdef","name":"a.ris"}]`, "files[0].id"},
		{"Slash", "edit", `[{"id":"0123456789abcdef0123456/","name":"a.ris"}]`, "files[0].id"},
	} {
		t.Run("API"+tt.name, func(t *testing.T) {
			res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID,
				"action": tt.action, "revised_data": strategy(tt.files)})
			require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
			var eb handlers.ErrorBody
			require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
			require.Equal(t, fault.EInvalid, eb.Error.Code)
			require.Contains(t, eb.Error.Fields, tt.field, "%v", eb.Error.Fields)
		})
	}

	t.Run("Form", func(t *testing.T) {
		w.signIn(t, w.client, "Ada")
		_, page := w.get(t, w.client, "/runs/"+created.ID)
		v := strategyValues(page)
		v.Add("file", `{"id":"../../etc/passwd","name":"passwd","format":"ris","records":1}`)
		v.Set("action", "approve")
		res, doc := w.post(t, w.client, "/runs/"+created.ID+"/checkpoints/"+st.Checkpoint.ID+"/strategy", v)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		require.Contains(t, doc.Find(`[data-testid="error"]`).Text(), "files[0].id")
	})

	t.Run("APIAnotherRunsFile", func(t *testing.T) {
		// A well-formed ID of a file attached to another run.
		other := w.startAPIRun(t, map[string]any{"question": "naps", "max_iterations": 1, "strategy_checkpoint": true, "sources": testapp.Sources})
		f, err := w.app.Store().AttachRunFile(t.Context(), store.RunFile{RunID: other.ID, Name: "theirs.ris", Format: "ris",
			Papers: []research.RawPaper{{ID: "doi:10.1/x", Title: "Theirs"}}})
		require.NoError(t, err)
		res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID,
			"action": "edit", "revised_data": strategy(`[{"id":"` + f.ID + `","name":"theirs.ris"}]`)})
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		var eb handlers.ErrorBody
		require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
		require.Contains(t, eb.Error.Fields, "files[0].id", "%v", eb.Error.Fields)
	})

	again := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	require.Equal(t, st.Checkpoint.ID, again.Checkpoint.ID, "nothing was decided")
}
