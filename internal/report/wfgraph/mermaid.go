package wfgraph

import (
	"fmt"
	"sort"
	"strings"
)

// Mermaid writes the graph as a Mermaid flowchart, for pasting into any
// Markdown that renders Mermaid. Node and cluster names are made up (n0,
// c0: Mermaid reserves words such as "end"); labels are quoted with their
// quotes, angle brackets and # written as Mermaid's entity codes. States
// and the current stage become classes.
func Mermaid(g Graph, o Options) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	names := map[string]string{}
	for i, n := range g.Nodes {
		names[n.ID] = fmt.Sprintf("n%d", i)
	}
	clusterIdx := map[string]int{}
	parent := map[string]string{}
	for i, c := range g.Clusters {
		clusterIdx[c.ID] = i
		parent[c.ID] = c.Parent
	}
	var scope func(cluster, indent string)
	scope = func(cluster, indent string) {
		done := map[string]bool{}
		for _, n := range g.Nodes {
			if n.Cluster == cluster {
				label := n.Label
				if n.Detail != "" {
					label += "\n" + n.Detail
				}
				fmt.Fprintf(&b, "%s%s%s\n", indent, names[n.ID], mermaidShape(n.Kind, mermaidText(label)))
				continue
			}
			c := n.Cluster
			for c != "" && parent[c] != cluster {
				c = parent[c]
			}
			if c == "" || done[c] {
				continue
			}
			done[c] = true
			cl := g.Clusters[clusterIdx[c]]
			fmt.Fprintf(&b, "%ssubgraph c%d [\"%s\"]\n", indent, clusterIdx[c], mermaidText(cl.Label))
			scope(c, indent+"  ")
			fmt.Fprintf(&b, "%send\n", indent)
		}
	}
	scope("", "  ")
	for _, e := range g.Edges {
		arrow := "-->"
		label := e.Label
		if e.Back {
			arrow = "-.->"
			if e.Limit != "" {
				if label != "" {
					label += "\n"
				}
				label += "max_iterations: " + e.Limit
			}
		}
		if label != "" {
			fmt.Fprintf(&b, "  %s %s|\"%s\"| %s\n", names[e.From], arrow, mermaidText(label), names[e.To])
		} else {
			fmt.Fprintf(&b, "  %s %s %s\n", names[e.From], arrow, names[e.To])
		}
	}
	if len(o.States) > 0 || o.Current != "" {
		byState := map[State][]string{}
		for i, n := range g.Nodes {
			if st := o.States[n.ID]; st != "" {
				if _, _, known := stateStyle(st); known {
					byState[st] = append(byState[st], fmt.Sprintf("n%d", i))
				}
			}
		}
		states := make([]string, 0, len(byState))
		for st := range byState {
			states = append(states, string(st))
		}
		sort.Strings(states)
		for _, st := range states {
			fill, line, _ := stateStyle(State(st))
			fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s\n", st, fill, line)
			fmt.Fprintf(&b, "  class %s %s\n", strings.Join(byState[State(st)], ","), st)
		}
		for i, c := range g.Clusters {
			if fill, line, known := stateStyle(o.States[c.ID]); known {
				fmt.Fprintf(&b, "  style c%d fill:%s,stroke:%s\n", i, fill, line)
			}
		}
		if n, ok := names[o.Current]; ok {
			b.WriteString("  classDef current stroke-width:4px\n")
			fmt.Fprintf(&b, "  class %s current\n", n)
		}
	}
	return b.String()
}

// mermaidShape wraps a quoted label in the brackets of a kind's shape.
func mermaidShape(k Kind, label string) string {
	q := `"` + label + `"`
	switch k {
	case KindGate:
		return "{{" + q + "}}"
	case KindParallel:
		return "[/" + q + `\]`
	case KindJoin:
		return `[\` + q + "/]"
	case KindSet:
		return "[/" + q + "/]"
	case KindDelay:
		return "([" + q + "])"
	case KindWebhook:
		return ">" + q + "]"
	case KindStart:
		return "((" + q + "))"
	case KindEnd:
		return "(((" + q + ")))"
	case KindAction:
		return "[[" + q + "]]"
	}
	return "(" + q + ")"
}

// mermaidText escapes text for a quoted Mermaid label: the characters that
// could end the label or open markup become entity codes, newlines <br/>.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '#':
			b.WriteString("#35;")
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '\n':
			b.WriteString("<br/>")
		case '\r', '\t':
			b.WriteByte(' ')
		default:
			if r >= 0x20 {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
