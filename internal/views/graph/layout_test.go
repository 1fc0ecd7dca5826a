package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/views/graph"
)

// search is the shape of the real search workflow: a chain with a skip
// edge, an exit edge over six layers, and two loops back to build.
func search() graph.Input {
	ids := []string{"parse", "build", "confirm_strategy", "search", "dedup", "score", "organize", "review", "finalize", "_end"}
	in := graph.Input{Root: "parse", TopMargin: 30}
	for i, id := range ids {
		w := 120.0 + float64(i%3)*30
		in.Nodes = append(in.Nodes, graph.Node{ID: id, W: w, H: 34})
	}
	in.Nodes[2].H, in.Nodes[2].Inset = 48, 14
	in.Nodes[7].H, in.Nodes[7].Inset = 48, 14
	e := func(from, to, label string) graph.Edge {
		ed := graph.Edge{From: from, To: to}
		if label != "" {
			ed.LabelW, ed.LabelH = float64(7*len(label)+4), 14
		}
		return ed
	}
	in.Edges = []graph.Edge{
		e("parse", "build", ""),
		e("build", "confirm_strategy", ""),
		e("confirm_strategy", "build", "iterate"),
		e("confirm_strategy", "search", "ok, skip"),
		e("confirm_strategy", "finalize", "exit"),
		e("search", "dedup", ""),
		e("dedup", "score", ""),
		e("score", "organize", ""),
		e("organize", "review", ""),
		e("review", "build", "iterate"),
		e("review", "finalize", "ok, exit"),
		e("finalize", "_end", ""),
	}
	return in
}

// random is a connected graph from the root with forward, back, skip and
// self edges, all with labels.
func random(seed uint64) graph.Input {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := 2 + r.IntN(14)
	var in graph.Input
	for i := range n {
		in.Nodes = append(in.Nodes, graph.Node{ID: fmt.Sprint("n", i), W: 40 + float64(r.IntN(160)), H: 30 + float64(r.IntN(30))})
		if r.IntN(4) == 0 {
			in.Nodes[i].Inset = 10
		}
	}
	for i := 1; i < n; i++ { // a spanning tree, so everything is reachable
		in.Edges = append(in.Edges, graph.Edge{From: fmt.Sprint("n", r.IntN(i)), To: fmt.Sprint("n", i), LabelW: 20, LabelH: 14})
	}
	for range r.IntN(2 * n) {
		in.Edges = append(in.Edges, graph.Edge{From: fmt.Sprint("n", r.IntN(n)), To: fmt.Sprint("n", r.IntN(n)), LabelW: float64(r.IntN(50)), LabelH: 14})
	}
	in.Edges = append(in.Edges, graph.Edge{From: "n0", To: "nowhere"}) // dropped
	return in
}

// checkLayout asserts what every drawing must satisfy.
func checkLayout(t *testing.T, in graph.Input, d graph.Drawing) {
	t.Helper()
	require.Len(t, d.Nodes, len(in.Nodes), "every node placed")
	layer := map[string]int{}
	for i, n := range d.Nodes {
		require.Equal(t, in.Nodes[i].ID, n.ID, "input order")
		require.False(t, math.IsNaN(n.X) || math.IsNaN(n.Y))
		require.GreaterOrEqual(t, n.X, 0.0)
		require.LessOrEqual(t, n.X+n.W, d.W, "inside the drawing: %s", n.ID)
		require.LessOrEqual(t, n.Y+n.H, d.H, "inside the drawing: %s", n.ID)
		layer[n.ID] = n.Layer
		for _, o := range d.Nodes[:i] {
			require.False(t, n.Rect().Overlaps(o.Rect()), "%s overlaps %s", n.ID, o.ID)
		}
	}
	valid := 0
	for _, e := range in.Edges {
		if _, ok := layer[e.To]; ok {
			valid++
		}
	}
	require.Len(t, d.Edges, valid, "edges to unknown nodes are left out")
	for _, e := range d.Edges {
		require.NotEmpty(t, e.Path)
		require.NotContains(t, e.Path, "NaN")
		require.NotContains(t, e.Path, "Inf")
		if !e.Back {
			require.Greater(t, layer[e.To], layer[e.From], "forward edge %s→%s goes down", e.From, e.To)
		}
		if e.From == e.To {
			require.True(t, e.Back, "a self-loop is a back edge")
		}
		if e.LabelW > 0 {
			l := e.LabelRect()
			require.GreaterOrEqual(t, l.X, 0.0, "label inside: %s→%s", e.From, e.To)
			require.LessOrEqual(t, l.X+l.W, d.W, "label inside: %s→%s", e.From, e.To)
		}
	}
}

func TestLayoutSearchWorkflow(t *testing.T) {
	t.Parallel()
	in := search()
	d := graph.Layout(in)
	checkLayout(t, in, d)

	// The chain is one column, the loops are back edges, the entry is on
	// top and the end at the bottom.
	byID := map[string]graph.PlacedNode{}
	for _, n := range d.Nodes {
		byID[n.ID] = n
	}
	centre := func(id string) float64 { return byID[id].X + byID[id].W/2 }
	for _, id := range []string{"build", "confirm_strategy", "search", "dedup", "score", "organize", "review", "finalize", "_end"} {
		require.Equal(t, centre("parse"), centre(id), "%s is under parse", id)
	}
	require.Equal(t, 0, byID["parse"].Layer)
	require.Equal(t, 9, byID["_end"].Layer)
	require.GreaterOrEqual(t, byID["parse"].Y, in.TopMargin, "room for the start mark")
	var back []string
	for _, e := range d.Edges {
		if e.Back {
			back = append(back, e.From+"→"+e.To)
		}
	}
	require.Equal(t, []string{"confirm_strategy→build", "review→build"}, back)

	// No label covers a node or another label.
	for i, e := range d.Edges {
		if e.LabelW == 0 {
			continue
		}
		for _, n := range d.Nodes {
			require.False(t, e.LabelRect().Overlaps(n.Rect()), "label of %s→%s covers %s", e.From, e.To, n.ID)
		}
		for _, o := range d.Edges[:i] {
			if o.LabelW > 0 {
				require.False(t, e.LabelRect().Overlaps(o.LabelRect()), "labels of %s→%s and %s→%s", e.From, e.To, o.From, o.To)
			}
		}
	}
	// The long exit edge runs straight beside the chain: one x for all
	// its vertical runs.
	for _, e := range d.Edges {
		if e.From == "confirm_strategy" && e.To == "finalize" {
			xs := map[string]bool{}
			for _, c := range strings.Split(e.Path, " ") {
				if strings.HasPrefix(c, "L") {
					xs[strings.Split(c[1:], ",")[0]] = true
				}
			}
			require.Len(t, xs, 1, e.Path)
		}
	}
}

func TestLayoutRandomGraphs(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		in := random(seed)
		d := graph.Layout(in)
		checkLayout(t, in, d)
		require.Equal(t, d, graph.Layout(in), "seed %d: deterministic", seed)
	}
}

func TestLayoutDeterministic(t *testing.T) {
	t.Parallel()
	first := graph.Layout(search())
	for range 20 {
		require.Equal(t, first, graph.Layout(search()))
	}
}

func TestLayoutSmall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     graph.Input
		layers map[string]int
	}{
		{"Empty", graph.Input{}, map[string]int{}},
		{"One", graph.Input{Nodes: []graph.Node{{ID: "a", W: 50, H: 30}}}, map[string]int{"a": 0}},
		{"SelfLoop", graph.Input{Nodes: []graph.Node{{ID: "a", W: 50, H: 30}},
			Edges: []graph.Edge{{From: "a", To: "a", LabelW: 30, LabelH: 14}}}, map[string]int{"a": 0}},
		{"Diamond", graph.Input{Root: "a",
			Nodes: []graph.Node{{ID: "d", W: 50, H: 30}, {ID: "c", W: 50, H: 30}, {ID: "b", W: 50, H: 30}, {ID: "a", W: 50, H: 30}},
			Edges: []graph.Edge{{From: "a", To: "b"}, {From: "a", To: "c"}, {From: "b", To: "d"}, {From: "c", To: "d"}, {From: "a", To: "d"}}},
			map[string]int{"a": 0, "b": 1, "c": 1, "d": 2}},
		{"LongestPath", graph.Input{Nodes: []graph.Node{{ID: "a", W: 50, H: 30}, {ID: "b", W: 50, H: 30}, {ID: "c", W: 50, H: 30}},
			Edges: []graph.Edge{{From: "a", To: "c"}, {From: "a", To: "b"}, {From: "b", To: "c"}}},
			map[string]int{"a": 0, "b": 1, "c": 2}},
		{"UnreachableFromRoot", graph.Input{Nodes: []graph.Node{{ID: "a", W: 50, H: 30}, {ID: "b", W: 50, H: 30}},
			Edges: []graph.Edge{{From: "b", To: "a"}}},
			map[string]int{"a": 1, "b": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := graph.Layout(tt.in)
			checkLayout(t, tt.in, d)
			got := map[string]int{}
			for _, n := range d.Nodes {
				got[n.ID] = n.Layer
			}
			require.Equal(t, tt.layers, got)
		})
	}
}
