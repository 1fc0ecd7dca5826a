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
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// TestRunQueuedBehindWorkflowLimit: with QUARRY_WORKFLOW_LIMITS hold=1,
// or the definition's concurrency: {runs: 1}, a second run of hold, started while the first executes (its webhook
// stage waits on a slow server), is not refused: the API and the run's
// status line say it is queued behind the limit, and once the first
// finishes it runs and completes too.
func TestRunQueuedBehindWorkflowLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		limits map[string]int
		key    string
	}{
		{"Configured", map[string]int{"hold": 1}, ""},
		{"Declared", nil, "concurrency: {runs: 1}\n"},
		{"ConfigurationWins", map[string]int{"hold": 1}, "concurrency: {runs: 5}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			queuedBehindLimit(t, tt.limits, tt.key)
		})
	}
}

func queuedBehindLimit(t *testing.T, limits map[string]int, key string) {
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		_, _ = w.Write([]byte(`{}`))
	}))
	defer hook.Close()
	var once bool
	defer func() {
		if !once {
			close(release)
		}
	}()
	u, err := url.Parse(hook.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hold.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: hold}
params: [{name: label, type: string, required: true}]
`+key+`stages:
  - id: call
    type: webhook
    request: {url: "`+hook.URL+`/slow"}
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir,
		WebhookHosts: []string{u.Hostname()}, WorkflowLimits: limits}, app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	w := serveApp(t, a)

	start := func(label string) string {
		res := w.doJSON(t, http.MethodPost, "/api/runs", map[string]any{"workflow": "hold", "params": map[string]any{"label": label}})
		require.Equal(t, http.StatusCreated, res.StatusCode)
		var c handlers.RunCreated
		require.NoError(t, json.NewDecoder(res.Body).Decode(&c))
		return c.ID
	}
	get := func(id string) handlers.RunJSON {
		res := w.doJSON(t, http.MethodGet, "/api/runs/"+id, nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		var out handlers.RunJSON
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		return out
	}
	first := start("first")
	require.Eventually(t, func() bool { return get(first).Status == "running" }, 10*time.Second, 10*time.Millisecond)
	second := start("second")
	require.Eventually(t, func() bool { return get(second).Queued != "" }, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, get(second).Queued, "1 of 1 runs of hold are executing")
	require.Empty(t, get(first).Queued)

	res, err := w.client.Get(w.srv.URL + "/runs/" + second + "/status")
	require.NoError(t, err)
	doc, err := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(doc.Find(`[data-testid="run-queued"]`).Text(), "Waiting its turn: queued"))

	once = true
	close(release)
	for _, id := range []string{first, second} {
		require.Eventually(t, func() bool { return get(id).Status == "completed" }, 30*time.Second, 20*time.Millisecond, "run %s", id)
		require.Empty(t, get(id).Queued)
	}
}
