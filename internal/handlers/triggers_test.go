package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// triggerApp serves a workflow file with a webhook trigger.
func triggerApp(t *testing.T) *web {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "intake.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: intake}
params:
  - {name: label, type: string, required: true}
  - {name: n, type: int, max: 5, default: 1}
trigger: {webhook: new-papers}
stages:
  - {id: a, type: set, set: {seen: "params.label"}}
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir},
		app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	return serveApp(t, a)
}

func (w *web) fireTrigger(t *testing.T, path, token, body string) (*http.Response, handlers.ErrorBody) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.srv.URL+path, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := w.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var eb handlers.ErrorBody
	if res.StatusCode >= 400 {
		require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
	}
	return res, eb
}

func (w *web) runCount(t *testing.T) int {
	t.Helper()
	l, err := w.app.Store().ListRuns(context.Background(), store.RunFilter{Limit: 10, TextParam: "label"})
	require.NoError(t, err)
	return l.Total
}

// TestInboundTrigger: a webhook trigger's token was made at start; a
// missing or wrong one is 401 and starts and records nothing; params the
// workflow refuses are 400 with the field named and start nothing; the
// right token and params start one run with the JSON as its params,
// recorded as a firing.
func TestInboundTrigger(t *testing.T) {
	t.Parallel()
	w := triggerApp(t)
	ctx := context.Background()
	st := w.app.Store()
	token, err := st.StoredTriggerToken(ctx, "intake", "new-papers")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(token), 40)
	path := "/api/triggers/intake/new-papers"

	for _, bad := range []string{"", "wrong", token + "x", strings.ToUpper(token)} {
		res, eb := w.fireTrigger(t, path, bad, `{"label": "x"}`)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "token %q", bad)
		require.Equal(t, "unauthenticated", eb.Error.Code)
		require.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
	}
	require.Zero(t, w.runCount(t), "a refused token starts nothing")
	firings, err := st.Firings(ctx, "intake", 10)
	require.NoError(t, err)
	require.Empty(t, firings, "a refused token records no firing")

	res, eb := w.fireTrigger(t, path, token, `{"n": 9}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, "invalid", eb.Error.Code)
	require.Contains(t, eb.Error.Fields, "label")
	require.Contains(t, eb.Error.Fields, "n")
	res, _ = w.fireTrigger(t, path, token, `[1, 2]`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Zero(t, w.runCount(t), "refused params start nothing")

	res, eb = w.fireTrigger(t, "/api/triggers/intake/other", token, `{}`)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "%+v", eb)

	req, err := http.NewRequest(http.MethodPost, w.srv.URL+path, strings.NewReader(`{"label": "`+strings.Repeat("a", 70<<10)+`"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	big, err := w.client.Do(req)
	require.NoError(t, err)
	big.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, big.StatusCode)

	req, err = http.NewRequest(http.MethodPost, w.srv.URL+path, strings.NewReader(`{"label": "from the hook", "n": 3}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token) // no Content-Type, no CSRF token: a server calling
	ok, err := w.client.Do(req)
	require.NoError(t, err)
	defer ok.Body.Close()
	require.Equal(t, http.StatusCreated, ok.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(ok.Body).Decode(&created))
	require.Equal(t, 1, w.runCount(t))
	run, err := st.Run(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, "from the hook", run.Params["label"])
	require.EqualValues(t, 3, run.Params["n"])

	firings, err = st.Firings(ctx, "intake", 10)
	require.NoError(t, err)
	require.Len(t, firings, 2, "the refused params and the run")
	require.Equal(t, created.ID, firings[0].RunID)
	require.Empty(t, firings[0].Error)
	require.Empty(t, firings[1].RunID)
	require.Contains(t, firings[1].Error, "label")

	// The API lists the trigger and its firings, never the token; the
	// workflows page shows the token and the firings.
	res = w.doJSON(t, http.MethodGet, "/api/workflows", nil)
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NotContains(t, string(raw), token)
	var list handlers.WorkflowsJSON
	require.NoError(t, json.Unmarshal(raw, &list))
	var intake *handlers.WorkflowJSON
	for i := range list.Workflows {
		if list.Workflows[i].Name == "intake" {
			intake = &list.Workflows[i]
		}
	}
	require.NotNil(t, intake)
	require.Equal(t, []handlers.TriggerJSON{{Name: "new-papers", Kind: "webhook", URL: path}}, intake.Triggers)
	require.Len(t, intake.Firings, 2)
	require.Equal(t, created.ID, intake.Firings[0].RunID)

	res = w.doJSON(t, http.MethodGet, "/api/workflows/intake", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var one handlers.WorkflowJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&one))
	require.Equal(t, *intake, one)
	res = w.doJSON(t, http.MethodGet, "/api/workflows/nope", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode)

	_, doc := w.get(t, w.client, "/workflows")
	card := doc.Find(`[data-testid="workflow-file"][data-workflow="intake"]`)
	require.Equal(t, token, card.Find(`[data-testid="trigger-token"]`).Text())
	require.Equal(t, 2, card.Find(`[data-testid="trigger-firing"]`).Length())
	require.Equal(t, 1, card.Find(`a[href="/runs/`+created.ID+`"]`).Length())
}
