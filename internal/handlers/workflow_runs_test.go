package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// TestWorkflowFileRunsThroughTheAPI: a definition file in the workflows
// directory starts from POST /api/runs {"workflow", "params"}: its set
// and webhook stages run (the hook's host allowed by QUARRY_WEBHOOK_HOSTS),
// its gate waits with its options, the decision picks one by label
// (option), and its delay holds the run a second before it completes. GET
// /api/workflows says it can start; bad params and an unknown workflow
// are refused.
func TestWorkflowFileRunsThroughTheAPI(t *testing.T) {
	t.Parallel()
	var hooks atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks.Add(1)
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	defer hook.Close()
	u, err := url.Parse(hook.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "check.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: check, title: "Check", version: 2}
params:
  - {name: label, type: string, required: true}
stages:
  - id: prepare
    type: set
    set: {ready: "params.label + '!'"}
  - id: tell
    type: webhook
    request: {url: "`+hook.URL+`/ok", body: {label: "{{ context.ready }}"}}
    expect: {json: {ok: true}}
  - id: approve
    type: gate
    options:
      - {label: Continue, next: wait}
      - {label: Stop, next: complete}
  - id: wait
    type: delay
    duration: 1s
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		WorkflowsDir: dir, WebhookHosts: []string{u.Hostname()}}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)

	res := w.doJSON(t, http.MethodGet, "/api/workflows", nil)
	var list handlers.WorkflowsJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	res.Body.Close()
	var names []string
	for _, wf := range list.Workflows {
		names = append(names, wf.Name+":"+wf.Source)
		if wf.Name == "check" {
			require.True(t, wf.CanStart, "a registered, unchanged file can start runs")
		}
	}
	require.Equal(t, []string{"search:builtin", "living-review:builtin", "screening:builtin", "check:file"}, names, "the built-in templates, then the file once, as a file")

	res = w.postJSON(t, "/api/runs", map[string]any{"workflow": "check", "params": map[string]any{}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "label is required")
	res.Body.Close()
	res = w.postJSON(t, "/api/runs", map[string]any{"workflow": "nope", "params": map[string]any{}})
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	res.Body.Close()
	res = w.postJSON(t, "/api/runs", map[string]any{"workflow": "check", "question": "sleep and memory"})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "search fields are not a file's params")
	res.Body.Close()

	created := w.startAPIRun(t, map[string]any{"workflow": "check", "params": map[string]any{"label": "go"}})
	var run handlers.RunJSON
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "waiting" && run.Checkpoint != nil
	}, 10*time.Second, 20*time.Millisecond, "the run waits at its gate")
	require.Equal(t, "check", run.Workflow)
	require.Equal(t, int32(1), hooks.Load())
	states := map[string]string{}
	for _, s := range run.Stages {
		states[s.ID] = s.State
	}
	require.Equal(t, map[string]string{"prepare": "completed", "tell": "completed", "approve": "waiting", "wait": "pending"}, states)
	require.Contains(t, string(run.Checkpoint.Payload), "Continue")

	res = w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": run.Checkpoint.ID, "action": "approve", "option": "Sideways"})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "no such option")
	res.Body.Close()
	decided := time.Now()
	res = w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": run.Checkpoint.ID, "action": "approve", "option": "Continue"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "completed"
	}, 20*time.Second, 50*time.Millisecond, "the run completes after its delay (last %q)", run.Status)
	require.GreaterOrEqual(t, time.Since(decided), 900*time.Millisecond, "the 1 s delay held the run")
	require.True(t, strings.Contains(mustJSON(t, run.Stages), `"wait"`))

	// Its page shows the run and its workflow panel.
	w.signIn(t, w.client, "Ada")
	pres, doc := w.get(t, w.client, "/runs/"+created.ID)
	require.Equal(t, http.StatusOK, pres.StatusCode)
	require.Equal(t, "completed", doc.Find(`[data-testid="run-workflow"] [data-stage="wait"]`).AttrOr("data-state", ""))
}

func (w *web) getRun(t *testing.T, id string) handlers.RunJSON {
	t.Helper()
	res, err := w.client.Get(w.srv.URL + "/api/runs/" + id)
	require.NoError(t, err)
	defer res.Body.Close()
	var out handlers.RunJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestParallelWorkflowFileReportsItsBranches: GET /api/runs/:id shows a
// parallel stage's branches while they run (stages[].branches and
// resume_context.parallel), then the join's result.
func TestParallelWorkflowFileReportsItsBranches(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	defer hook.Close()
	u, err := url.Parse(hook.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fan.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: fan, title: "Fan"}
stages:
  - id: tell
    type: parallel
    join: all
    branches:
      - {id: a, type: webhook, request: {url: "`+hook.URL+`/ok"}}
      - {id: b, type: webhook, request: {url: "`+hook.URL+`/ok"}}
      - {id: c, type: webhook, request: {url: "`+hook.URL+`/slow"}}
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		WorkflowsDir: dir, WebhookHosts: []string{u.Hostname()}}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	created := w.startAPIRun(t, map[string]any{"workflow": "fan", "params": map[string]any{}})
	var run handlers.RunJSON
	branches := func() map[string]string {
		out := map[string]string{}
		for _, s := range run.Stages {
			for _, b := range s.Branches {
				out[b.ID] = b.State
			}
		}
		return out
	}
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		b := branches()
		return b["a"] == "completed" && b["b"] == "completed"
	}, 10*time.Second, 20*time.Millisecond, "a and b end while c waits on its hook")
	require.Equal(t, "waiting", run.Status)
	require.Equal(t, "parallel", run.Stages[0].Type)
	require.Contains(t, []string{"pending", "running"}, branches()["c"])
	require.NotNil(t, run.ResumeContext.Parallel)
	require.Equal(t, 3, run.ResumeContext.Parallel.Total)
	require.Equal(t, 2, run.ResumeContext.Parallel.Completed)
	require.Empty(t, run.ResumeContext.Parallel.Failed)

	close(release)
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "completed"
	}, 10*time.Second, 20*time.Millisecond, "the join passes once c ends")
	require.Equal(t, map[string]string{"a": "completed", "b": "completed", "c": "completed"}, branches())
	require.Equal(t, "completed", run.Stages[0].State)
	require.Nil(t, run.ResumeContext.Parallel, "no parallel stage is current")
}
