package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// TestRunGraphShowsBranches: a run of a definition file is drawn from its
// text, so its parallel stages' branches show, each coloured by its
// branch's state as the run goes: while a named branch's hook is held the
// other branch is completed, the held branch's two stages running (or
// still pending) and the parallel stage current with its join pending;
// then a for_each stage's items fold onto its branch (one done, one held:
// running) with the count in its label; at the end every node is
// completed.
func TestRunGraphShowsBranches(t *testing.T) {
	t.Parallel()
	held := [2]string{"/slow1", "/slow2"}
	release := map[string]chan struct{}{held[0]: make(chan struct{}), held[1]: make(chan struct{})}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ch := release[r.URL.Path]; ch != nil {
			select {
			case <-ch:
			case <-r.Context().Done():
			}
		}
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	defer hook.Close()
	var once [2]sync.Once
	free := func(i int) { once[i].Do(func() { close(release[held[i]]) }) }
	// A failing test lets the held hooks go, so the server can close.
	defer func() { free(0); free(1) }()
	u, err := url.Parse(hook.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fan.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: fan, title: "Fan"}
stages:
  - id: tell
    type: parallel
    branches:
      - {id: a, type: webhook, request: {url: "`+hook.URL+`/ok"}}
      - id: c
        stages:
          - {id: c1, type: webhook, request: {url: "`+hook.URL+`/slow1"}}
          - {id: c2, type: set, set: {told: "true"}}
  - id: each
    type: parallel
    for_each: '["ok", "slow2"]'
    branches:
      - {id: item, type: webhook, request: {url: "`+hook.URL+`/{{ item }}"}}
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		WorkflowsDir: dir, WebhookHosts: []string{u.Hostname()}}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	w.signIn(t, w.client, "Ada")
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
	graph := func() *goquery.Document {
		t.Helper()
		res, body := w.download(t, "/runs/"+created.ID+"/graph.svg")
		require.Equal(t, http.StatusOK, res.StatusCode)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		require.NoError(t, err)
		return doc
	}
	state := func(doc *goquery.Document, id string) string {
		t.Helper()
		n := doc.Find(`[data-node="` + id + `"]`)
		require.Equal(t, 1, n.Length(), "node %s is drawn", id)
		return n.AttrOr("data-state", "")
	}

	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return branches()["a"] == "completed"
	}, 10*time.Second, 20*time.Millisecond, "a ends while c waits on its hook")
	doc := graph()
	require.Equal(t, "completed", state(doc, "a"))
	require.Contains(t, []string{"pending", "running"}, state(doc, "c1"), "the held branch")
	require.Equal(t, state(doc, "c1"), state(doc, "c2"), "a branch's stages take its state")
	require.Equal(t, "true", doc.Find(`[data-node="tell"]`).AttrOr("data-current", ""))
	require.Equal(t, "pending", state(doc, "tell.join"))
	require.Equal(t, "pending", state(doc, "each"))
	require.Equal(t, "pending", state(doc, "item"))
	// The branch's end left the run's version alone; the status line the
	// page polls and the panel's drawing still name what moved, so the
	// page fetches the drawing anew.
	_, status := w.download(t, "/runs/"+created.ID+"/status")
	line, err := goquery.NewDocumentFromReader(strings.NewReader(status))
	require.NoError(t, err)
	drawn := line.Find("[data-version]").First().AttrOr("data-version", "")
	require.Regexp(t, `^[0-9]+\.[1-9][0-9]*$`, drawn, "the run's version and its branch stamp")
	_, page := w.download(t, "/runs/"+created.ID)
	pd, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	require.NoError(t, err)
	require.Equal(t, drawn, pd.Find(`img[data-testid="run-graph"]`).AttrOr("data-version", ""))

	free(0)
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return branches()["item-1"] == "completed"
	}, 10*time.Second, 20*time.Millisecond, "the first item ends while the second waits on its hook")
	doc = graph()
	for _, id := range []string{"tell", "a", "c1", "c2", "tell.join"} {
		require.Equal(t, "completed", state(doc, id), id)
	}
	require.Equal(t, "true", doc.Find(`[data-node="each"]`).AttrOr("data-current", ""))
	require.Contains(t, []string{"pending", "running"}, state(doc, "item"), "an item is held")
	require.Contains(t, doc.Find("text").Text(), "1 of 2 done")

	free(1)
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "completed"
	}, 10*time.Second, 20*time.Millisecond, "the run completes once the hooks answer")
	doc = graph()
	for _, id := range []string{"tell", "a", "c1", "c2", "tell.join", "each", "item", "each.join"} {
		require.Equal(t, "completed", state(doc, id), id)
	}
	require.Contains(t, doc.Find("text").Text(), "2 of 2 done")
	require.Zero(t, doc.Find(`[data-current="true"]`).Length(), "an ended run is at no stage")
}
