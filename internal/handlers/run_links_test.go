package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// TestSubWorkflowAndActionsShown: a workflow file's start_workflow stage
// starts a child run and waits for it; GET /api/runs/:id and the run
// pages link the two both ways, and the parent's export and notify
// actions (a file in QUARRY_EXPORT_DIR, an on_complete POST to an
// allowed hook) are listed with their attempts.
func TestSubWorkflowAndActionsShown(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer hook.Close()
	u, err := url.Parse(hook.URL)
	require.NoError(t, err)
	dir, exports := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "child.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: child}
params: [{name: topic, type: string, required: true}]
stages:
  - {id: pick, type: set, set: {topic: "params.topic"}}
  - id: ok
    type: gate
    options: [{label: Keep, next: complete}]
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "parent.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: parent}
stages:
  - id: sub
    type: action
    action: start_workflow
    with: {workflow: child, params: {topic: bees}}
  - id: save
    type: action
    action: export
    with: {papers: [{id: p1, title: "{{ outputs.sub.context.topic }}"}], file: bees.ris}
on_complete:
  - action: notify
    with: {webhook: "`+hook.URL+`/hook", text: "exported {{ outputs.save.count }}"}
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		WorkflowsDir: dir, WebhookHosts: []string{u.Host}, ExportDir: exports}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)

	created := w.startAPIRun(t, map[string]any{"workflow": "parent", "params": map[string]any{}})
	var p handlers.RunJSON
	require.Eventually(t, func() bool { p = w.getRun(t, created.ID); return len(p.ChildRuns) == 1 }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "waiting", p.Status)
	child := p.ChildRuns[0]
	require.Equal(t, engine.ChildLink{RunID: child.RunID, Workflow: "child", Step: "sub", Wait: true}, child)
	var k handlers.RunJSON
	require.Eventually(t, func() bool { k = w.getRun(t, child.RunID); return k.Checkpoint != nil }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, &engine.Parent{RunID: created.ID, Step: "sub", Wait: true}, k.ParentRun)
	w.signIn(t, w.client, "ada")
	_, doc := w.get(t, w.client, "/runs/"+child.RunID)
	require.Equal(t, 1, doc.Find(`[data-testid="parent-run"] a[href="/runs/`+created.ID+`"]`).Length())

	res := w.postJSON(t, "/api/runs/"+child.RunID+"/decisions", map[string]any{"checkpoint_id": k.Checkpoint.ID, "action": "approve", "option": "Keep"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	p = w.waitFor(t, created.ID, "completed")
	require.Equal(t, `{"text":"exported 1"}`, <-got)
	var actions []string
	for _, a := range p.Actions {
		actions = append(actions, a.Stage+":"+a.Action+":"+a.Status)
	}
	require.Equal(t, []string{"save:export:ok", "on_complete:notify:ok"}, actions)
	b, err := os.ReadFile(filepath.Join(exports, "bees.ris"))
	require.NoError(t, err)
	require.Contains(t, string(b), "TI  - bees")
	_, doc = w.get(t, w.client, "/runs/"+created.ID)
	require.Equal(t, 1, doc.Find(`[data-testid="child-run"] a[href="/runs/`+child.RunID+`"]`).Length())
	require.Equal(t, 2, doc.Find(`[data-testid="run-action"][data-status="ok"]`).Length())
}
