package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers/testapp"
)

// TestWorkflowFileStartFormAndGateForm: a workflow file starts from its
// form on /workflows (a field per param; a bad field is shown, the values
// kept), and its gate is decided on the run's page by an option's button
// (an option that needs input refuses an empty one, keeping the page).
func TestWorkflowFileStartFormAndGateForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ask.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: ask, title: "Ask the team"}
params:
  - {name: topic, type: string, required: true, description: "What to ask about"}
  - {name: rounds, type: int, default: 2}
context: {topic: "{{ params.topic }}"}
stages:
  - id: decide
    type: gate
    context: [topic]
    options:
      - {label: "Done", next: complete}
      - {label: "Explain", next: complete, requires_input: true}
`), 0o644))
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	w.signIn(t, w.client, "Ada")

	_, doc := w.get(t, w.client, "/workflows")
	form := doc.Find(`[data-workflow="ask"] form[data-testid="start-workflow"]`)
	require.Equal(t, 1, form.Length(), "a startable file has its start form")
	require.Equal(t, "2", form.Find(`input[name="rounds"]`).AttrOr("value", ""), "the default is shown")
	action := form.AttrOr("action", "")
	require.Equal(t, "/workflows/ask/runs", action)

	res, doc := w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "topic": {""}, "rounds": {"two"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	form = doc.Find(`[data-workflow="ask"] form[data-testid="start-workflow"]`)
	require.Equal(t, 2, form.Find(`[data-testid="start-field-error"]`).Length(), "every bad field at once")
	require.Equal(t, "two", form.Find(`input[name="rounds"]`).AttrOr("value", ""), "the values sent are kept")

	res, doc = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "topic": {"sleep"}, "rounds": {"3"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runPath := res.Request.URL.Path
	require.True(t, strings.HasPrefix(runPath, "/runs/"), runPath)
	runID := strings.TrimPrefix(runPath, "/runs/")
	require.Eventually(t, func() bool {
		_, doc = w.get(t, w.client, runPath)
		return doc.Find(`[data-testid="checkpoint-gate"]`).Length() == 1
	}, 10*time.Second, 20*time.Millisecond, "the run's page shows its gate")
	gate := doc.Find(`[data-testid="checkpoint-gate"]`)
	require.Contains(t, gate.Find(`[data-testid="gate-context"]`).Text(), `"sleep"`, "the context keys the gate shows")
	var labels []string
	gate.Find(`[data-testid="gate-option"]`).Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.AttrOr("value", "")) })
	require.Equal(t, []string{"Done", "Explain"}, labels)
	gateAction := gate.Find(`form[data-testid="gate-form"]`).AttrOr("action", "")

	res, doc = w.post(t, w.client, gateAction, url.Values{"_csrf": {csrf(doc)}, "option": {"Explain"}, "input": {"  "}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "Explain needs input")
	require.NotEmpty(t, doc.Find(`[data-testid="gate-error"]`).Text())
	require.Equal(t, runPath, doc.Find("[data-page-url]").AttrOr("data-page-url", ""))

	res, _ = w.post(t, w.client, gateAction, url.Values{"_csrf": {csrf(doc)}, "option": {"Done"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "completed", w.waitFor(t, runID, "completed").Status)
}
