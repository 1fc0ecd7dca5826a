package handlers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/report/wfgraph"
)

// TestDrawnSources: a workflow with a definition text is drawn from it,
// whatever skills, forms and webhook hosts it names (the server's, which
// the handlers do not know), and parsed once per text hash; a Go workflow,
// or a text that does not load, is drawn from its steps.
func TestDrawnSources(t *testing.T) {
	const text = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: w}
stages:
  - id: fan
    type: parallel
    branches:
      - {id: run, type: skill, skill: some.skill}
      - {id: tell, type: webhook, request: {url: "https://hooks.example.org:8443/x/{{ params.p }}"}}
  - id: ask
    type: gate
    form: choice
    options:
      - {label: "yes", next: complete}
      - {label: "no", next: fan}
      - {label: skip, next: complete}
    on_fail: {max_iterations: 3}
params:
  - {name: p, type: string, default: ""}
`
	steps := []engine.StepDef{{ID: "fan", Next: engine.Next{engine.OK: engine.End}}}
	var d drawnSources
	wf := &engine.Workflow{Name: "w", Entry: "fan", Steps: steps, Source: &engine.Source{Hash: "h1", File: "w.yaml", Text: text}}
	kinds := func(g wfgraph.Graph) map[string]wfgraph.Kind {
		out := map[string]wfgraph.Kind{}
		for _, n := range g.Nodes {
			out[n.ID] = n.Kind
		}
		return out
	}
	k := kinds(d.graph(wf))
	require.Equal(t, wfgraph.KindParallel, k["fan"])
	require.Equal(t, wfgraph.KindSkill, k["run"])
	require.Equal(t, wfgraph.KindWebhook, k["tell"])
	require.Equal(t, wfgraph.KindGate, k["ask"])

	wf.Source = &engine.Source{Hash: "h1", File: "w.yaml", Text: "not: [yaml"}
	require.Equal(t, k, kinds(d.graph(wf)), "the text of a hash is parsed once")

	wf.Source = &engine.Source{Hash: "h2", File: "w.yaml", Text: "not: [yaml"}
	require.Equal(t, wfgraph.KindStep, kinds(d.graph(wf))["fan"], "a text that does not load: the steps")
	wf.Source = nil
	require.Equal(t, wfgraph.KindStep, kinds(d.graph(wf))["fan"], "a Go workflow: its steps")
}
