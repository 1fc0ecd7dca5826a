package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/report/wfgraph"
)

// setupWebWithWorkflows serves the test app with dir as its workflows
// directory.
func setupWebWithWorkflows(t *testing.T, dir string) *web {
	t.Helper()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir}, app.WithWorkflows(reg))
	require.NoError(t, err)
	return serveApp(t, a)
}

// TestWorkflowsPageDrawsGraph: /workflows draws the registered search
// workflow as an SVG image (laid out by Graphviz) with one node per step
// of its graph, checkpoints drawn as gates, and its loops as back edges.
func TestWorkflowsPageDrawsGraph(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	reg, err := testapp.Registry()
	require.NoError(t, err)
	wf, err := reg.Get("search")
	require.NoError(t, err)
	g := wfgraph.FromWorkflow(wf)

	res, doc := w.get(t, w.client, "/workflows")
	require.Equal(t, http.StatusOK, res.StatusCode)
	svg := doc.Find(`[data-testid="workflow"][data-workflow="search"] [data-testid="workflow-diagram"] svg`)
	require.Equal(t, 1, svg.Length())
	require.Equal(t, "img", svg.AttrOr("role", ""))
	require.Contains(t, svg.AttrOr("aria-label", ""), "Diagram of the Literature search workflow")

	var want, got []string
	gates := map[string]bool{}
	for _, n := range g.Nodes {
		want = append(want, n.ID)
		gates[n.ID] = n.Kind == wfgraph.KindGate
	}
	svg.Find(`[data-testid="diagram-node"]`).Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("data-node", "")
		got = append(got, id)
		require.Equal(t, gates[id], s.AttrOr("data-kind", "") == "gate", id)
	})
	require.ElementsMatch(t, want, got)
	require.Contains(t, want, "confirm_strategy")

	// The loops go back: iterating to build, and showing more (review →
	// more → review) back to the review; Graphviz titles each edge
	// tail->head.
	back := map[string]bool{}
	svg.Find(`g.wf-back > title`).Each(func(_ int, s *goquery.Selection) { back[s.Text()] = true })
	require.Equal(t, map[string]bool{"confirm_strategy->build": true, "review->build": true, "more->review": true}, back)
	require.Contains(t, doc.Find(`[data-testid="workflow-files"]`).Text(), "QUARRY_WORKFLOWS_DIR", "no directory is configured")
}

// TestWorkflowsPageListsFiles: every definition file of the workflows
// directory is listed: a valid one drawn like the built-ins, an invalid
// one with each of its problems at file:line:col and marked as unable to
// start runs. Text a file writes (an option's label) stays text.
func TestWorkflowsPageListsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `apiVersion: quarry/v1
kind: Workflow
metadata: {name: review-loop, title: "Review loop", description: "Count, wait, decide."}
stages:
  - id: count
    type: set
    set: {n: "1"}
  - id: wait
    type: delay
    duration: 1h
  - id: decide
    type: gate
    options:
      - {label: "Again <script>alert(1)</script>", next: count}
      - {label: "Stop", next: complete}
    on_fail: {max_iterations: 3, then: fail}
`
	bad := `apiVersion: quarry/v1
kind: Workflow
metadata: {name: broken}
stages:
  - id: first
    type: delay
    duration: soon
  - id: second
    type: set
    set: {n: "1"}
    on_complete: nowhere
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "good.yaml"), []byte(good), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(bad), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a workflow"), 0o644))
	w := setupWebWithWorkflows(t, dir)

	res, doc := w.get(t, w.client, "/workflows")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-testid="workflow"][data-workflow="search"]`).Length(), "the built-ins are still listed")
	files := doc.Find(`[data-testid="workflow-file"]`)
	var names []string
	files.Each(func(_ int, s *goquery.Selection) { names = append(names, s.AttrOr("data-file", "")) })
	require.Equal(t, []string{"bad.yml", "good.yaml"}, names, "every *.yaml and *.yml file, in name order")

	ok := doc.Find(`[data-testid="workflow-file"][data-file="good.yaml"]`)
	require.Equal(t, "review-loop", ok.AttrOr("data-workflow", ""))
	require.Contains(t, ok.Find("h2").Text(), "Review loop")
	var nodes []string
	ok.Find(`[data-testid="workflow-diagram"] svg [data-testid="diagram-node"]`).Each(func(_ int, s *goquery.Selection) {
		nodes = append(nodes, s.AttrOr("data-node", ""))
	})
	require.ElementsMatch(t, []string{wfgraph.Start, "count", "wait", "decide", wfgraph.End}, nodes)
	require.Equal(t, 1, ok.Find(`[data-step="decide"]`).Length())
	require.Contains(t, ok.Find(`[data-testid="workflow-mermaid"]`).Text(), "flowchart TD")
	require.Zero(t, ok.Find(`[data-testid="cannot-start"]`).Length())
	require.Zero(t, doc.Find("script:not([src])").Length(), "an option's label never becomes markup")
	require.Contains(t, ok.Find(`[data-testid="workflow-diagram"] svg`).Text(), "Again <script>alert(1)</script>")

	broken := doc.Find(`[data-testid="workflow-file"][data-file="bad.yml"]`)
	_, invalid := broken.Attr("data-invalid")
	require.True(t, invalid)
	require.Equal(t, "cannot start runs", broken.Find(`[data-testid="cannot-start"]`).Text())
	require.Zero(t, broken.Find(`[data-testid="workflow-diagram"]`).Length())
	var problems []string
	broken.Find(`[data-testid="workflow-errors"] li`).Each(func(_ int, s *goquery.Selection) {
		problems = append(problems, strings.TrimSpace(s.Text()))
	})
	require.Equal(t, []string{
		`bad.yml:7:15: stage "first": duration: "soon" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
		`bad.yml:11:18: stage "second": on_complete: "nowhere" is not a stage (nor complete)`,
	}, problems)

	// The directory is read as the page loads: a fixed file is drawn at once.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(strings.Replace(strings.Replace(bad, "soon", "2d", 1), "nowhere", "complete", 1)), 0o644))
	_, doc = w.get(t, w.client, "/workflows")
	fixed := doc.Find(`[data-testid="workflow-file"][data-file="bad.yml"]`)
	require.Equal(t, "broken", fixed.AttrOr("data-workflow", ""))
	require.Equal(t, 1, fixed.Find(`[data-testid="workflow-diagram"] svg`).Length())
}

// TestWorkflowsPageUnreadableDir: a workflows directory that cannot be
// read is reported on the page, which still lists the built-ins.
func TestWorkflowsPageUnreadableDir(t *testing.T) {
	t.Parallel()
	w := setupWebWithWorkflows(t, filepath.Join(t.TempDir(), "missing"))
	res, doc := w.get(t, w.client, "/workflows")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-testid="workflow"][data-workflow="search"]`).Length())
	require.Contains(t, doc.Find(`[data-testid="workflows-dir-error"]`).Text(), "no such file or directory")
}

// TestWorkflowsAPI: GET /api/workflows lists the built-ins with their
// params, then each definition file with its version, hash and params, or
// with every problem placed at file:line:col.
func TestWorkflowsAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ask.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: ask, title: "Ask", version: 3}
params:
  - {name: topic, type: string, required: true, description: "What to ask about"}
  - {name: rounds, type: int, default: 2, min: 1, max: 5}
stages:
  - id: decide
    type: gate
    options:
      - {label: "Done", next: complete}
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: bad}
stages:
  - id: first
    type: set
    set: {a: 1}
    on_complete: nowhere
`), 0o644))
	w := setupWebWithWorkflows(t, dir)
	res := w.doJSON(t, http.MethodGet, "/api/workflows", nil)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got handlers.WorkflowsJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
	byName := map[string]handlers.WorkflowJSON{}
	for _, wf := range got.Workflows {
		byName[wf.Name] = wf
	}

	search := byName["search"]
	require.Equal(t, "builtin", search.Source)
	require.True(t, search.Valid && search.CanStart)
	var names []string
	for _, p := range search.Params {
		names = append(names, p.Name)
		if p.Name == "sources" {
			require.Equal(t, "list", p.Type, "the format's name for a list of strings")
		}
	}
	require.Contains(t, names, "question")

	ask := byName["ask"]
	require.Equal(t, "file", ask.Source)
	require.Equal(t, "ask.yaml", ask.File)
	require.Equal(t, 3, ask.Version)
	require.Len(t, ask.Hash, 64)
	require.True(t, ask.Valid)
	require.True(t, ask.CanStart, "registered at start, unchanged since")
	require.Equal(t, []handlers.ParamJSON{
		{Name: "topic", Type: "string", Required: true, Description: "What to ask about"},
		{Name: "rounds", Type: "int", Default: float64(2), Min: ptr(1.0), Max: ptr(5.0)},
	}, ask.Params)

	bad := byName["bad"]
	require.False(t, bad.Valid)
	require.False(t, bad.CanStart)

	// Edited since the server started: listed as it is now, and it waits
	// for a restart to start runs.
	src, err := os.ReadFile(filepath.Join(dir, "ask.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ask.yaml"), []byte(strings.Replace(string(src), "version: 3", "version: 4", 1)), 0o644))
	res = w.doJSON(t, http.MethodGet, "/api/workflows", nil)
	defer res.Body.Close()
	got = handlers.WorkflowsJSON{}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
	for _, wf := range got.Workflows {
		if wf.Name == "ask" {
			require.Equal(t, 4, wf.Version)
			require.False(t, wf.CanStart, "edited since the start: it runs after a restart")
		}
	}
	require.Equal(t, []handlers.DefinitionErrorJSON{{File: "bad.yaml", Line: 8, Col: 18, Stage: "first",
		Message: `on_complete: "nowhere" is not a stage (nor complete)`}}, bad.Errors)
}

func ptr[T any](v T) *T { return &v }
