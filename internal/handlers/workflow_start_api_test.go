package handlers_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

const tallyYAML = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: tally}
params:
  - {name: who, type: string, default: "ada"}
stages:
  - id: count
    type: set
    set: {n: "3"}
  - id: double
    type: set
    set: {twice: "context.n * 2"}
  - id: ask
    type: gate
    context: [twice]
    options:
      - {label: Done, next: complete}
`

// TestStartAWorkflowAtAStage: POST /api/workflows/:name/runs with from
// starts a definition file's run at that stage with the context given;
// what the stage needs and was not given is named (422 with fields), an
// unknown stage too; GET /api/runs/:id and the run page say where it
// started. The search, whose steps read the run's state in Go, refuses
// to start past its first stage, saying why.
func TestStartAWorkflowAtAStage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tally.yaml"), []byte(tallyYAML), 0o644))
	w := setupWebWithWorkflows(t, dir)
	w.signIn(t, w.client, "Ada")

	refused := func(body map[string]any, name string) handlers.ErrorJSON {
		t.Helper()
		res := w.postJSON(t, "/api/workflows/"+name+"/runs", body)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		var e handlers.ErrorBody
		require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
		require.Equal(t, fault.EInvalid, e.Error.Code)
		return e.Error
	}
	e := refused(map[string]any{"from": "double"}, "tally")
	require.Equal(t, map[string]string{"context.n": `is needed: stage "double" reads it`}, e.Fields)
	e = refused(map[string]any{"from": "ask", "context": map[string]any{"n": 1}}, "tally")
	require.Equal(t, map[string]string{"context.twice": `is needed: stage "ask" reads it`}, e.Fields)
	e = refused(map[string]any{"from": "later"}, "tally")
	require.Contains(t, e.Fields["from"], `no stage "later"`)
	e = refused(map[string]any{"from": "build", "params": map[string]any{"question": "sleep and memory", "sources": testapp.Sources}}, "search")
	require.Contains(t, e.Fields["from"], "starts only at its first stage")

	res := w.postJSON(t, "/api/workflows/tally/runs", map[string]any{"from": "double", "context": map[string]any{"n": 21}, "started_by": "ada"})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	got := w.waitFor(t, created.ID, "waiting")
	require.Equal(t, &engine.StartOrigin{Stage: "double", Given: []string{"context.n"}, By: "ada"}, got.StartedFrom)
	require.NotNil(t, got.Checkpoint)
	require.Contains(t, string(got.Checkpoint.Payload), `"twice":42`)
	for _, s := range got.Stages {
		if s.ID == "count" {
			require.NotEqual(t, "completed", s.State, "the stage before the start did not run")
		}
	}
	_, doc := w.get(t, w.client, "/runs/"+created.ID)
	require.Equal(t, "double", doc.Find(`[data-testid="started-at-stage"]`).Text())
	require.Contains(t, doc.Find(`[data-testid="started-at"]`).Text(), "context.n")

	// Without from it is an ordinary start, recorded as none.
	res = w.postJSON(t, "/api/workflows/tally/runs", map[string]any{"params": map[string]any{"who": "bo"}})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	got = w.waitFor(t, created.ID, "waiting")
	require.Nil(t, got.StartedFrom)
	_, doc = w.get(t, w.client, "/runs/"+created.ID)
	require.Zero(t, doc.Find(`[data-testid="started-at"]`).Length())

	res = w.postJSON(t, "/api/workflows/nope/runs", map[string]any{"from": "x"})
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
