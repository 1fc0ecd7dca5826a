package engine

import (
	"fmt"
	"strings"
)

// Node is one step of a drawn workflow.
type Node struct {
	ID    string         `json:"id"`
	Title string         `json:"title"`
	Gate  CheckpointKind `json:"gate,omitempty"`
	Entry bool           `json:"entry,omitempty"`
}

// Edge is one transition. Outcome "exit" marks the path taken when the
// iteration bound is reached.
type Edge struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Outcome string `json:"outcome"`
}

// Graph is a workflow's transition graph as data, in definition order.
type Graph struct {
	Name  string `json:"name"`
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Graph returns the transition graph. End appears as a node when reached.
func (w *Workflow) Graph() Graph {
	g := Graph{Name: w.Name}
	hasEnd := false
	for _, s := range w.Steps {
		n := Node{ID: s.ID, Title: s.Title, Entry: s.ID == w.Entry}
		if n.Title == "" {
			n.Title = s.ID
		}
		if s.Gate != nil {
			n.Gate = s.Gate.Kind
		}
		g.Nodes = append(g.Nodes, n)
		for _, o := range sortedOutcomes(s.Next) {
			g.Edges = append(g.Edges, Edge{From: s.ID, To: s.Next[o], Outcome: string(o)})
			hasEnd = hasEnd || s.Next[o] == End
		}
		if s.Exit != "" {
			g.Edges = append(g.Edges, Edge{From: s.ID, To: s.Exit, Outcome: "exit"})
			hasEnd = hasEnd || s.Exit == End
		}
	}
	if hasEnd {
		g.Nodes = append(g.Nodes, Node{ID: End, Title: "end"})
	}
	return g
}

// Mermaid renders the graph as a Mermaid flowchart; gates are drawn as
// hexagons so human checkpoints stand out.
func (g Graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, n := range g.Nodes {
		label := strings.ReplaceAll(n.Title, `"`, "'")
		switch {
		case n.ID == End:
			fmt.Fprintf(&b, "  %s((%q))\n", mermaidID(n.ID), "end")
		case n.Gate != "":
			fmt.Fprintf(&b, "  %s{{\"%s<br/>%s\"}}\n", mermaidID(n.ID), label, n.Gate)
		default:
			fmt.Fprintf(&b, "  %s[\"%s\"]\n", mermaidID(n.ID), label)
		}
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -->|%s| %s\n", mermaidID(e.From), e.Outcome, mermaidID(e.To))
	}
	return b.String()
}

// DOT renders the graph for Graphviz.
func (g Graph) DOT() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=TB;\n", g.Name)
	for _, n := range g.Nodes {
		shape := "box"
		switch {
		case n.ID == End:
			shape = "doublecircle"
		case n.Gate != "":
			shape = "hexagon"
		}
		fmt.Fprintf(&b, "  %q [label=%q, shape=%s];\n", n.ID, n.Title, shape)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %q -> %q [label=%q];\n", e.From, e.To, e.Outcome)
	}
	b.WriteString("}\n")
	return b.String()
}

func mermaidID(id string) string {
	if id == End {
		return "end_"
	}
	return "s_" + strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, id)
}
