package handlers_test

import (
	"context"
	"encoding/json"
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
)

// TestGateNoticeReachesItsWebhook: the app sends a gate's notify through
// the webhook allowlist: entering a gate with a timeout posts its notice,
// and GET /api/runs/:id records it as sent.
func TestGateNoticeReachesItsWebhook(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct{ Text string }
		_ = json.Unmarshal(b, &body)
		got <- body.Text
	}))
	t.Cleanup(hook.Close)
	u, _ := url.Parse(hook.URL)
	dir := t.TempDir()
	def := `apiVersion: quarry/v1
kind: Workflow
metadata: {name: told}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: complete}, {label: Stop, next: complete}]
    timeout: 24h
    on_timeout: {default: Go}
    notify: [{webhook: "` + hook.URL + `/hook"}]
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "told.yaml"), []byte(def), 0o644))
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		WorkflowsDir: dir, WebhookHosts: []string{u.Hostname()}})
	require.NoError(t, err)
	w := serveApp(t, a)
	created := w.startAPIRun(t, map[string]any{"workflow": "told"})
	select {
	case text := <-got:
		require.Contains(t, text, `Waiting for a decision at gate "ask" of run `+created.ID+` (told); it decides itself at `)
	case <-time.After(10 * time.Second):
		t.Fatal("the gate's notice never reached its webhook")
	}
	require.Eventually(t, func() bool {
		_, body := w.download(t, "/api/runs/"+created.ID)
		var r struct {
			GateNotices []struct{ Event, Status string } `json:"gate_notices"`
		}
		return json.Unmarshal([]byte(body), &r) == nil && len(r.GateNotices) == 1 &&
			r.GateNotices[0].Event == "entered" && r.GateNotices[0].Status == "sent"
	}, 10*time.Second, 50*time.Millisecond, "the notice is recorded as sent")
}
