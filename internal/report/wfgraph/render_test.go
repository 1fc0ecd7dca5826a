package wfgraph_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/report/wfgraph"
)

func svgDoc(t *testing.T, svg string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader("<!DOCTYPE html><html><body>" + svg + "</body></html>"))
	require.NoError(t, err)
	return doc
}

// TestSVGKeepsEveryText: every text a definition writes (a title with
// quotes and a backslash, an option label with markup, a label ending in a
// backslash, Graphviz's own escape \N) goes through DOT and Graphviz and
// comes out of the SVG as the same text, never as markup.
func TestSVGKeepsEveryText(t *testing.T) {
	t.Parallel()
	g := demo(t)
	svg, err := wfgraph.NewRenderer().SVG(context.Background(), g, wfgraph.Options{ID: "d"})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(svg, "<svg "), svg[:min(len(svg), 80)])
	require.NotContains(t, svg, "<script")
	require.NotContains(t, svg, "<b>")

	doc := svgDoc(t, svg)
	root := doc.Find("body > svg")
	require.Equal(t, 1, root.Length())
	require.Equal(t, "img", root.AttrOr("role", ""))
	require.Equal(t, `Diagram of the Demo "flow" \ <b> workflow: 6 stages and 11 transitions`, root.AttrOr("aria-label", ""))

	var texts []string
	doc.Find("text").Each(func(_ int, s *goquery.Selection) { texts = append(texts, s.Text()) })
	for _, want := range []string{`Demo "flow" \ <b>`, `Again <script>"now"</script> & \N ok (with input)`, `Done \`, "decide", "gate · 2 options", "join 1", "branch b1", "max_iterations: params.rounds", "complete"} {
		require.Contains(t, texts, want)
	}
}

// TestSVGNodes: each node's group carries its stage id and kind, and the
// highlighting options colour stages and mark the current one.
func TestSVGNodes(t *testing.T) {
	t.Parallel()
	g := livingReview(t)
	o := wfgraph.Options{ID: "lr", Current: "review", States: map[string]wfgraph.State{
		"parse": wfgraph.Completed, "build": wfgraph.Completed, "fetch": wfgraph.Failed,
		"score": wfgraph.Skipped, "review": wfgraph.Waiting, "search.source": wfgraph.Running,
	}}
	svg, err := wfgraph.NewRenderer().SVG(context.Background(), g, o)
	require.NoError(t, err)
	doc := svgDoc(t, svg)

	var ids []string
	doc.Find(`[data-testid="diagram-node"]`).Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, s.AttrOr("data-node", ""))
		require.Equal(t, s.AttrOr("data-node", ""), s.ChildrenFiltered("title").Text(), "Graphviz titles the node with its stage id")
	})
	var want []string
	for _, n := range g.Nodes {
		want = append(want, n.ID)
	}
	require.ElementsMatch(t, want, ids)

	node := func(id string) *goquery.Selection {
		return doc.Find(`[data-testid="diagram-node"][data-node="` + id + `"]`)
	}
	require.Equal(t, "gate", node("review").AttrOr("data-kind", ""))
	require.Equal(t, "waiting", node("review").AttrOr("data-state", ""))
	require.Equal(t, "true", node("review").AttrOr("data-current", ""))
	require.Contains(t, node("review").AttrOr("class", ""), "wf-current")
	require.Equal(t, "3.5", node("review").Find("polygon").AttrOr("stroke-width", ""))
	require.Equal(t, "#dcefdc", node("parse").Find("path, polygon").AttrOr("fill", ""))
	require.Equal(t, "#fdecea", node("fetch").Find("path, polygon").AttrOr("fill", ""))
	require.Equal(t, "skipped", node("score").AttrOr("data-state", ""))
	require.Empty(t, node("dedup").AttrOr("data-state", ""), "a stage without a state is drawn plain")
	require.Empty(t, node("parse").AttrOr("data-current", ""))
	// A branch takes its state too.
	require.Contains(t, doc.Find(`g.wf-cluster.wf-state-running`).Find("title").First().Text(), "cluster")

	// Loops are dashed and say what bounds them.
	back := doc.Find(`g.wf-back`)
	require.Equal(t, 2, back.Length())
	require.Contains(t, back.Text(), "max_iterations: params.max_iterations")
}

// TestSVGCaches: the same graph with the same options is laid out once;
// other options are another drawing.
func TestSVGCaches(t *testing.T) {
	t.Parallel()
	r := wfgraph.NewRenderer()
	g := demo(t)
	a, err := r.SVG(context.Background(), g, wfgraph.Options{})
	require.NoError(t, err)
	b, err := r.SVG(context.Background(), g, wfgraph.Options{})
	require.NoError(t, err)
	require.Equal(t, a, b)
	c, err := r.SVG(context.Background(), g, wfgraph.Options{Current: "decide"})
	require.NoError(t, err)
	require.NotEqual(t, a, c)
}

// TestDOT: the DOT text names stages by their ids, draws each kind with
// its shape and each parallel stage as a cluster holding a cluster per
// branch, and quotes every label.
func TestDOT(t *testing.T) {
	t.Parallel()
	dot := wfgraph.DOT(demo(t), wfgraph.Options{ID: "x"})
	require.True(t, strings.HasPrefix(dot, `digraph "demo" {`), dot)
	for _, want := range []string{
		`label="Demo \"flow\" \\ <b>"`,
		`"decide" [shape=hexagon`,
		`"fan" [shape=trapezium`,
		`"fan.join" [shape=invtrapezium`,
		`"(complete)" [shape=doublecircle`,
		`subgraph "cluster_0" {`,
		`    subgraph "cluster_1" {`,
		`"decide" -> "prepare" [id="x_e9", style=dashed`,
		`label="Again <script>\"now\"</script> & \\N ok (with input)\nmax_iterations: params.rounds"`,
		`label="Done \\"`,
	} {
		require.Contains(t, dot, want)
	}
}

func TestDOTHighlight(t *testing.T) {
	t.Parallel()
	dot := wfgraph.DOT(demo(t), wfgraph.Options{Current: "b1", States: map[string]wfgraph.State{"b1": wfgraph.Running, "prepare": wfgraph.Completed, "nosuch": wfgraph.Failed, "a": "bogus"}})
	require.Contains(t, dot, `fillcolor="#dde8f3", color="#2c5f8a", penwidth=3.5, label="b1\nset · x", id="wf_n4", class="wf-node wf-set wf-state-running wf-current"`)
	require.Contains(t, dot, `class="wf-node wf-set wf-state-completed"`)
	require.Contains(t, dot, `class="wf-node wf-delay"]`, "an unknown state is not drawn")
}

func TestMermaid(t *testing.T) {
	t.Parallel()
	m := wfgraph.Mermaid(demo(t), wfgraph.Options{Current: "decide", States: map[string]wfgraph.State{"prepare": wfgraph.Completed, "decide": wfgraph.Waiting, "fan.b1": wfgraph.Failed}})
	require.True(t, strings.HasPrefix(m, "flowchart TD\n"))
	for _, want := range []string{
		`  n0(("start"))`,
		`  n1[/"prepare<br/>set · n"/]`,
		`  subgraph c0 ["fan"]`,
		`    n2[/"fan<br/>parallel"\]`,
		`    subgraph c1 ["branch a"]`,
		`      n3(["a<br/>delay · 1h"])`,
		`  n7{{"decide<br/>gate · 2 options"}}`,
		`  n8((("complete")))`,
		`  n7 -.->|"Again #lt;script#gt;#quot;now#quot;#lt;/script#gt; & \N ok (with input)<br/>max_iterations: params.rounds"| n1`,
		`  n7 -->|"Done \"| n8`,
		`  n6 -->|"on_any_reject"| n7`,
		"  classDef completed fill:#dcefdc,stroke:#2e7d32\n  class n1 completed\n",
		"  class n7 current\n",
		"  style c2 fill:#fdecea,stroke:#8a1c1c\n",
	} {
		require.Contains(t, m, want)
	}
	require.NotContains(t, m, "<script")
}
