package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goodWorkflow loads clean without any registered skill: a set, a delay
// and a gate whose loop is bounded.
const goodWorkflow = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: review-loop, title: "Review loop"}
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
      - {label: "Again", next: count}
      - {label: "Stop", next: complete}
    on_fail: {max_iterations: 3, then: fail}
`

// badWorkflow has two problems: a duration that does not parse and a
// target that is no stage.
const badWorkflow = `apiVersion: quarry/v1
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

func TestWorkflowCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(good, []byte(goodWorkflow), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte(badWorkflow), 0o644))
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout []string // each a line of standard output, in order
		wantStderr []string // each contained in standard error
	}{
		{"Valid", "", []string{"workflow", "validate", good}, 0, []string{"ok: " + good}, nil},
		{"ValidFromStdin", goodWorkflow, []string{"workflow", "validate", "-"}, 0, []string{"ok: stdin"}, nil},
		{"TwoErrorsAndEveryFileChecked", "", []string{"workflow", "validate", bad, good, filepath.Join(dir, "none.yaml")}, 1, []string{
			bad + `:7:15: stage "first": duration: "soon" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
			bad + `:11:18: stage "second": on_complete: "nowhere" is not a stage (nor complete)`,
			"ok: " + good,
			filepath.Join(dir, "none.yaml") + ":1:1: cannot read the file: no such file or directory",
		}, []string{"quarry: workflow validate: 3 problem(s) in 2 of 3 file(s)"}},
		{"NoFiles", "", []string{"workflow", "validate"}, 2, nil, []string{"no files to validate", "Usage: quarry workflow validate"}},
		{"UnknownFormat", "", []string{"workflow", "graph", good, "--format", "png"}, 2, nil, []string{`unknown format "png" (dot, svg, mermaid)`, "Usage: quarry workflow graph"}},
		{"UnknownCommand", "", []string{"workflow", "draw", good}, 2, nil, []string{`unknown workflow command "draw"`}},
		{"GraphOfABadFile", "", []string{"workflow", "graph", bad}, 1, nil, []string{bad + ":7:15: ", bad + ":11:18: ", "quarry: workflow graph: " + bad + " has 2 problem(s)"}},
		{"GraphDOT", "", []string{"workflow", "graph", good}, 0, []string{`digraph "review-loop" {`}, nil},
		{"GraphMermaid", "", []string{"workflow", "graph", "--format", "mermaid", good}, 0, []string{"flowchart TD"}, nil},
		{"GraphSVG", "", []string{"workflow", "graph", good, "--format=svg"}, 0, []string{`<?xml version="1.0" encoding="UTF-8" standalone="no"?>`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := quarry(t, tt.stdin, nil, tt.args...)
			require.Equal(t, tt.wantCode, got.code, "stderr: %s", got.stderr)
			lines := strings.Split(got.stdout, "\n")
			if tt.wantStdout == nil {
				require.Empty(t, got.stdout)
			} else {
				require.GreaterOrEqual(t, len(lines), len(tt.wantStdout), got.stdout)
				require.Equal(t, tt.wantStdout, lines[:len(tt.wantStdout)], got.stdout)
			}
			for _, w := range tt.wantStderr {
				require.Contains(t, got.stderr, w)
			}
		})
	}
}

// TestWorkflowGraphFormats: each format draws the same stages, the loop
// back from the gate marked with its bound.
func TestWorkflowGraphFormats(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "good.yaml")
	require.NoError(t, os.WriteFile(file, []byte(goodWorkflow), 0o644))
	for format, want := range map[string][]string{
		"dot":     {`"decide" [shape=hexagon`, `"decide" -> "count"`, `max_iterations: 3`},
		"mermaid": {`{{"decide<br/>gate · 2 options"}}`, `-.->|"Again<br/>max_iterations: 3"|`},
		"svg":     {"<svg ", "<title>decide</title>", "max_iterations: 3", "</svg>"},
	} {
		got := quarry(t, "", nil, "workflow", "graph", file, "--format", format)
		require.Zero(t, got.code, got.stderr)
		for _, w := range want {
			require.Contains(t, got.stdout, w, format)
		}
	}
}

// TestWorkflowValidateWebhookHosts: a webhook stage is valid only for a
// host in QUARRY_WEBHOOK_HOSTS, which the CLI reads as the server does.
func TestWorkflowValidateWebhookHosts(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "hook.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: notify}
stages:
  - id: tell
    type: webhook
    request: {url: "https://hooks.example.org/quarry", body: {done: true}}
`), 0o644))
	got := quarry(t, "", nil, "workflow", "validate", file)
	require.Equal(t, 1, got.code)
	require.Contains(t, got.stdout, file+`:7:14: stage "tell": url host "hooks.example.org" is not in the webhook allowlist (QUARRY_WEBHOOK_HOSTS)`)

	got = quarry(t, "", map[string]string{"QUARRY_WEBHOOK_HOSTS": "other.example.org, HOOKS.example.org"}, "workflow", "validate", file)
	require.Zero(t, got.code, got.stdout+got.stderr)
	require.Equal(t, "ok: "+file+"\n", got.stdout)

	got = quarry(t, "", map[string]string{"QUARRY_WEBHOOK_HOSTS": "https://hooks.example.org/"}, "workflow", "validate", file)
	require.Equal(t, 1, got.code, "a URL is not a host: the setting is refused")
	require.Contains(t, got.stderr, "QUARRY_WEBHOOK_HOSTS")
}

// TestWorkflowCommandSearchFile: the search workflow's own file, whose
// skills and forms are the pipeline's, validates and draws with its
// titles and forms.
func TestWorkflowCommandSearchFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "..", "internal", "skills", "pipeline", "search.yaml")
	got := quarry(t, "", nil, "workflow", "validate", file)
	require.Zero(t, got.code, got.stderr)
	require.Equal(t, "ok: "+file+"\n", got.stdout)
	got = quarry(t, "", nil, "workflow", "graph", file, "--format", "mermaid")
	require.Zero(t, got.code, got.stderr)
	for _, w := range []string{`("Parse the question<br/>skill · pipeline.parse")`, `{{"Review the results<br/>gate · form review, 3 options"}}`, `-->|"more"|`} {
		require.Contains(t, got.stdout, w)
	}
}
