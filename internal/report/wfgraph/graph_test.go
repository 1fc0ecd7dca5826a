package wfgraph_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/report/wfgraph"
)

// demoYAML has one stage of most types, a parallel stage with a
// one-stage and a two-stage branch, a loop bounded at its gate, and labels
// that need escaping everywhere they are written.
const demoYAML = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: demo, title: "Demo \"flow\" \\ <b>"}
params:
  - {name: rounds, type: int, default: 3}
stages:
  - id: prepare
    type: set
    set: {n: "1"}
  - id: fan
    type: parallel
    branches:
      - {id: a, type: delay, duration: 1h}
      - [{id: b1, type: set, set: {x: "2"}}, {id: b2, type: delay, duration: 2d}]
    join: 1
    on_any_reject: decide
  - id: decide
    type: gate
    options:
      - {label: "Again <script>\"now\"</script> & \\N ok", next: prepare, requires_input: true}
      - {label: "Done \\", next: complete}
    on_fail: {max_iterations: "{{ params.rounds }}", then: fail}
`

func load(t *testing.T, file, src string, opt def.Options) *def.Definition {
	t.Helper()
	d, err := def.Load(file, []byte(src), opt)
	require.NoError(t, err)
	return d
}

func demo(t *testing.T) wfgraph.Graph {
	t.Helper()
	return wfgraph.FromDefinition(load(t, "demo.yaml", demoYAML, def.Options{}))
}

// livingReview is def's complete example, which uses every stage type.
func livingReview(t *testing.T) wfgraph.Graph {
	t.Helper()
	src, err := os.ReadFile("../../engine/def/testdata/living-review.yaml")
	require.NoError(t, err)
	return wfgraph.FromDefinition(load(t, "living-review.yaml", string(src), def.Options{
		Skills:       []string{"search.parse_intent", "search.build_strategy", "search.run", "search.dedup", "search.score", "export.write"},
		WebhookHosts: []string{"hooks.example.org"},
	}))
}

type edge struct{ from, to, key, label, limit string }

func edgesOf(g wfgraph.Graph) []edge {
	var out []edge
	for _, e := range g.Edges {
		limit := e.Limit
		if e.Back && limit == "" {
			limit = "back"
		}
		out = append(out, edge{e.From, e.To, e.Key, e.Label, limit})
	}
	return out
}

func TestFromDefinition(t *testing.T) {
	t.Parallel()
	g := demo(t)
	require.Equal(t, "demo", g.Name)
	require.Equal(t, `Demo "flow" \ <b>`, g.Title)

	type node struct {
		id      string
		kind    wfgraph.Kind
		cluster string
	}
	var nodes []node
	for _, n := range g.Nodes {
		nodes = append(nodes, node{n.ID, n.Kind, n.Cluster})
	}
	require.Equal(t, []node{
		{wfgraph.Start, wfgraph.KindStart, ""},
		{"prepare", wfgraph.KindSet, ""},
		{"fan", wfgraph.KindParallel, "fan"},
		{"a", wfgraph.KindDelay, "fan.a"},
		{"b1", wfgraph.KindSet, "fan.b1"},
		{"b2", wfgraph.KindDelay, "fan.b1"},
		{"fan.join", wfgraph.KindJoin, "fan"},
		{"decide", wfgraph.KindGate, ""},
		{wfgraph.End, wfgraph.KindEnd, ""},
	}, nodes)
	require.Equal(t, []wfgraph.Cluster{
		{ID: "fan", Label: "fan", Kind: wfgraph.KindParallel},
		{ID: "fan.a", Label: "branch a", Parent: "fan", Kind: wfgraph.KindBranch, Branch: "a"},
		{ID: "fan.b1", Label: "branch b1", Parent: "fan", Kind: wfgraph.KindBranch, Branch: "b1"},
	}, g.Clusters)

	require.Equal(t, []edge{
		{wfgraph.Start, "prepare", "entry", "", ""},
		{"prepare", "fan", "on_complete", "", ""},
		{"fan", "a", "branch", "a", ""},
		// A branch's complete is the join.
		{"a", "fan.join", "on_complete", "", ""},
		{"fan", "b1", "branch", "b1", ""},
		{"b1", "b2", "on_complete", "", ""},
		{"b2", "fan.join", "on_complete", "", ""},
		// The parallel stage goes on from its join.
		{"fan.join", "decide", "on_complete", "on_complete", ""},
		{"fan.join", "decide", "on_any_reject", "on_any_reject", ""},
		// The loop back is bounded by the gate's on_fail.max_iterations.
		{"decide", "prepare", "option", `Again <script>"now"</script> & \N ok (with input)`, "params.rounds"},
		{"decide", wfgraph.End, "option", `Done \`, ""},
	}, edgesOf(g))

	details := map[string]string{}
	for _, n := range g.Nodes {
		details[n.ID] = n.Detail
	}
	require.Equal(t, "set · n", details["prepare"])
	require.Equal(t, "parallel", details["fan"])
	require.Equal(t, "delay · 2d", details["b2"])
	require.Equal(t, "delay · 1h", details["a"])
	require.Equal(t, "gate · 2 options", details["decide"])
}

// TestFromDefinitionEveryTarget: the living review draws every kind of
// target it writes (skip_to, on_error goto, on_fail then goto, a
// for_each branch, on_all_reject) and marks both of its loops with the
// max_iterations that bounds them.
func TestFromDefinitionEveryTarget(t *testing.T) {
	t.Parallel()
	g := livingReview(t)
	got := map[edge]bool{}
	for _, e := range edgesOf(g) {
		got[e] = true
	}
	for _, want := range []edge{
		{"search", "fetch", "branch", "each item", ""},
		{"fetch", "search.join", "on_complete", "", ""},
		{"search.join", "wait", "on_all_reject", "on_all_reject", ""},
		{"search.join", "dedup", "on_complete", "on_complete", ""},
		{"score", "wait", "skip_to", "skip_to", ""},
		{"review", "notify", "option", "Keep these and wait for the next round", ""},
		{"review", "build", "option", "Search again now (with input)", "params.max_iterations"},
		{"review", "wait", "on_fail", "on_fail", ""},
		{"review", "finalize", "on_fail.then", "on_fail then", ""},
		{"notify", "wait", "on_error", "on_error", ""},
		{"wait", "build", "on_complete", "on_complete", "params.max_iterations"},
		{"wait", "finalize", "on_error", "on_error", ""},
		{"finalize", wfgraph.End, "on_complete", "", ""},
	} {
		require.True(t, got[want], "missing %+v in %+v", want, edgesOf(g))
	}
	kinds := map[string]wfgraph.Kind{}
	for _, n := range g.Nodes {
		kinds[n.ID] = n.Kind
	}
	require.Equal(t, wfgraph.KindSkill, kinds["parse"])
	require.Equal(t, wfgraph.KindWebhook, kinds["notify"])
	require.Equal(t, wfgraph.KindAction, kinds["finalize"])
	require.Equal(t, wfgraph.KindDelay, kinds["wait"])
	require.Equal(t, wfgraph.KindJoin, kinds["search.join"])
}

// TestFromWorkflow: a Go workflow draws its gates as gates, the outcomes
// between two steps on one arrow, a step's only "ok" unlabelled, and its
// iterate loop bounded by the workflow's MaxIterations; a loop that does
// not iterate (show more) is drawn back without a bound.
func TestFromWorkflow(t *testing.T) {
	t.Parallel()
	w := &engine.Workflow{Name: "w", Title: "W", Entry: "work", MaxIterations: 4, Steps: []engine.StepDef{
		{ID: "work", Title: "Do the work", Next: engine.Next{engine.OK: "review"}},
		{ID: "review", Title: "Review", Gate: &engine.Gate{Kind: "note_review"},
			Next: engine.Next{engine.OK: "done", engine.Skip: "done", engine.Iterate: "work", engine.More: "more"}, Exit: "done"},
		{ID: "more", Title: "More", Next: engine.Next{engine.OK: "review"}},
		{ID: "done", Title: "Done", Next: engine.Next{engine.OK: engine.End}},
	}}
	g := wfgraph.FromWorkflow(w)
	require.Equal(t, "W", g.Title)
	var kinds []wfgraph.Kind
	for _, n := range g.Nodes {
		kinds = append(kinds, n.Kind)
	}
	require.Equal(t, []wfgraph.Kind{wfgraph.KindStart, wfgraph.KindStep, wfgraph.KindGate, wfgraph.KindStep, wfgraph.KindStep, wfgraph.KindEnd}, kinds)
	require.Equal(t, "checkpoint · note review", g.Nodes[2].Detail)
	require.Equal(t, []edge{
		{wfgraph.Start, "work", "entry", "", ""},
		{"work", "review", "ok", "", ""},
		{"review", "work", "iterate", "iterate", "4"},
		{"review", "more", "more", "more", ""},
		{"review", "done", "ok,skip,exit", "ok, skip, exit", ""},
		{"more", "review", "ok", "", "back"},
		{"done", wfgraph.End, "ok", "", ""},
	}, edgesOf(g))
}

// TestFromDefinitionGateTimeout: a gate's on_timeout then goto is an
// arrow of its own.
func TestFromDefinitionGateTimeout(t *testing.T) {
	t.Parallel()
	g := wfgraph.FromDefinition(load(t, "timed.yaml", `apiVersion: quarry/v1
kind: Workflow
metadata: {name: timed}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: complete}]
    timeout: 1h
    on_timeout: {extend: 1h, max_extensions: 2, then: {goto: chase}}
  - {id: chase, type: set, set: {late: "true"}}
`, def.Options{}))
	require.Contains(t, edgesOf(g), edge{"ask", "chase", "on_timeout.then", "on_timeout then", ""})
}
