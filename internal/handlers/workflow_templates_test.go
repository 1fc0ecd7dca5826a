package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
)

// TestBuiltinTemplatesStartFromTheirForms: the built-in templates are
// listed on /workflows among the built-in workflows, drawn from their
// definitions, each with a start form from its params (defaults shown);
// GET /api/workflows says they can start. The living review starts from
// its form, a bad field refused with the values kept, and its run's
// status line carries the version the page's drawing follows.
func TestBuiltinTemplatesStartFromTheirForms(t *testing.T) {
	t.Parallel()
	a, err := newApp(t, t.Context(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")})
	require.NoError(t, err)
	w := serveApp(t, a)

	res := w.doJSON(t, http.MethodGet, "/api/workflows", nil)
	var list handlers.WorkflowsJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	res.Body.Close()
	can := map[string]bool{}
	for _, wf := range list.Workflows {
		can[wf.Name] = wf.CanStart
	}
	require.Equal(t, map[string]bool{"living-review": true, "screening": true}, can)

	w.signIn(t, w.client, "Ada")
	_, doc := w.get(t, w.client, "/workflows")
	for _, name := range []string{"living-review", "screening"} {
		art := doc.Find(`[data-testid="workflow"][data-workflow="` + name + `"]`)
		require.Equal(t, 1, art.Length(), name)
		require.Equal(t, 1, art.Find(`form[data-testid="start-workflow"]`).Length(), name+" has its start form")
		require.Equal(t, 1, art.Find(`[data-testid="workflow-diagram"] svg`).Length(), name+" is drawn")
	}
	form := doc.Find(`[data-workflow="living-review"] form[data-testid="start-workflow"]`)
	require.Equal(t, "24h", form.Find(`input[name="interval"]`).AttrOr("value", ""), "the default is shown")
	require.Equal(t, 1, doc.Find(`[data-workflow="living-review"] [data-step="wait"]`).Length(), "the stages of the definition")
	action := form.AttrOr("action", "")
	require.Equal(t, "/workflows/living-review/runs", action)

	res, doc = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "question": {"sleep and memory"}, "max_iterations": {"many"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	form = doc.Find(`[data-workflow="living-review"] form[data-testid="start-workflow"]`)
	require.Equal(t, 1, form.Find(`[data-testid="start-field-error"]`).Length())
	require.Equal(t, "many", form.Find(`input[name="max_iterations"]`).AttrOr("value", ""), "the values sent are kept")

	res, _ = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "question": {"How does SQLite WAL mode affect crash recovery?"}, "interval": {"1h"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runPath := res.Request.URL.Path
	require.True(t, strings.HasPrefix(runPath, "/runs/"), runPath)
	require.Eventually(t, func() bool {
		_, doc = w.get(t, w.client, runPath)
		return doc.Find(`[data-testid="checkpoint-gate"]`).Length() == 1
	}, 20*time.Second, 20*time.Millisecond, "the run's page shows its review gate")
	status := doc.Find(`#run-status`)
	require.Equal(t, "review", status.AttrOr("data-step", ""))
	version := status.AttrOr("data-version", "")
	require.NotEmpty(t, version)
	img := doc.Find(`img[data-testid="run-graph"]`)
	require.Equal(t, version, img.AttrOr("data-version", ""), "the drawing is of the version the status line shows")
	require.Contains(t, img.AttrOr("src", ""), "graph.svg?v="+version)
	res, body := w.download(t, img.AttrOr("src", ""))
	require.Equal(t, http.StatusOK, res.StatusCode)
	svg, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	require.NoError(t, err)
	review := svg.Find(`[data-node="review"]`)
	require.Equal(t, "true", review.AttrOr("data-current", ""))
	require.Equal(t, "waiting", review.AttrOr("data-state", ""))
	require.Equal(t, "set", svg.Find(`[data-node="tally"]`).AttrOr("data-kind", ""), "a set stage, as the definition says")
}
