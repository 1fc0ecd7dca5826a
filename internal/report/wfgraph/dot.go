package wfgraph

import (
	"fmt"
	"strings"
)

// State is where a run stands at a stage, for highlighting a drawing.
type State string

// The stage states a run page colours.
const (
	Pending   State = "pending"
	Running   State = "running"
	Completed State = "completed"
	Failed    State = "failed"
	Skipped   State = "skipped"
	Waiting   State = "waiting"
	// Canceled is a parallel branch the join no longer needed.
	Canceled State = "canceled"
)

// Options are how to draw one graph.
type Options struct {
	// ID prefixes the ids of the drawing's elements, which must be unique
	// on a page that shows several ("wf0"): letters, digits and _ (others
	// become _); "" means "wf".
	ID string
	// Current is the stage a run is at, drawn with a heavy outline; ""
	// for none.
	Current string
	// States colours stages (by stage id) and parallel branches (by
	// cluster id, "<parallel id>.<branch id>") with a run's states.
	States map[string]State
	// Notes add a line to clusters' labels, by cluster id (a for_each
	// branch's "2 of 3 done"; see ForRun).
	Notes map[string]string
}

// prefix is ID made safe: Graphviz writes ids escaped (a - as &#45;), and
// SVG finds nodes by the id as written.
func (o Options) prefix() string {
	if o.ID == "" {
		return "wf"
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, o.ID)
}

// The palette, the app's own (static/app.css): the accent blue for steps,
// amber for gates and loops, greens and reds for how stages went.
const (
	// Graphviz sizes text with Helvetica's metrics when the name starts
	// with Helvetica; browsers without it fall back to fonts of the same
	// widths (Arial, Liberation Sans, Arimo) or, on a bare Linux, to
	// DejaVu's condensed face, which is close.
	fontName  = "Helvetica,Arial,Liberation Sans,Arimo,DejaVu Sans Condensed,sans-serif"
	colAccent = "#2c5f8a"
	colFg     = "#1d2327"
	colMuted  = "#5f6b73"
	colEdge   = "#6b7780"
	colAmber  = "#a86b00"
	colAmberL = "#fff2c6"
)

// stateStyle is a state's fill and outline; ok is false for a state this
// package does not know, which is drawn plain.
func stateStyle(st State) (fill, line string, ok bool) {
	switch st {
	case Pending:
		return "#ffffff", colMuted, true
	case Running:
		return "#dde8f3", colAccent, true
	case Completed:
		return "#dcefdc", "#2e7d32", true
	case Failed:
		return "#fdecea", "#8a1c1c", true
	case Skipped, Canceled:
		return "#eeeeee", "#9e9e9e", true
	case Waiting:
		return colAmberL, colAmber, true
	}
	return "", "", false
}

// shape is a kind's Graphviz node attributes.
func shape(k Kind) string {
	switch k {
	case KindGate:
		return `shape=hexagon, style=filled, fillcolor="` + colAmberL + `", color="` + colAmber + `", penwidth=2`
	case KindParallel:
		return `shape=trapezium, style=filled`
	case KindJoin:
		return `shape=invtrapezium, style=filled, fontsize=10`
	case KindSet:
		return `shape=note, style=filled`
	case KindDelay:
		return `shape=ellipse, style=filled`
	case KindWebhook:
		return `shape=cds, style=filled`
	case KindAction:
		return `shape=box, style="rounded,filled,bold"`
	case KindStart:
		return `shape=circle, style=filled, fillcolor="` + colFg + `", color="` + colFg + `", width=0.15, height=0.15, fixedsize=true, label=" "`
	case KindEnd:
		return `shape=doublecircle, style=filled, fillcolor="` + colFg + `", color="` + colFg + `", fontcolor="#ffffff", fontsize=10, margin=0.02`
	}
	return `shape=box, style="rounded,filled"`
}

// DOT writes the graph in the DOT language, for Graphviz or for people.
// Every name and label is quoted and escaped, so any text a definition
// holds (an option's label, an expression) stays text.
func DOT(g Graph, o Options) string {
	w := &dotWriter{g: g, o: o}
	return w.write()
}

type dotWriter struct {
	g Graph
	o Options
	b strings.Builder
}

func (w *dotWriter) write() string {
	b := &w.b
	fmt.Fprintf(b, "digraph %s {\n", quote(w.g.Name))
	fmt.Fprintf(b, "  graph [rankdir=TB, nodesep=0.3, ranksep=0.4, bgcolor=transparent, fontname=%s, fontsize=11, fontcolor=%s, id=%s, label=%s, labelloc=t];\n",
		quote(fontName), quote(colMuted), quote(w.o.prefix()), quote(w.g.Title))
	fmt.Fprintf(b, "  node [fontname=%s, fontsize=12, fontcolor=%s, color=%s, fillcolor=\"#ffffff\", penwidth=1.4, margin=\"0.2,0.05\"];\n",
		quote(fontName), quote(colFg), quote(colAccent))
	fmt.Fprintf(b, "  edge [fontname=%s, fontsize=10, fontcolor=%s, color=%s, arrowsize=0.7];\n",
		quote(fontName), quote(colMuted), quote(colEdge))
	w.scope("", "  ")
	for i, e := range w.g.Edges {
		w.edge(i, e)
	}
	b.WriteString("}\n")
	return b.String()
}

// scope writes the nodes and clusters directly inside cluster (the graph
// when ""), in the order their nodes come.
func (w *dotWriter) scope(cluster, indent string) {
	parent := map[string]string{}
	for _, c := range w.g.Clusters {
		parent[c.ID] = c.Parent
	}
	// child is the cluster directly below cluster on the way to c, or ""
	// when c is not below it.
	child := func(c string) string {
		for c != "" {
			if parent[c] == cluster {
				return c
			}
			c = parent[c]
		}
		return ""
	}
	done := map[string]bool{}
	for i, n := range w.g.Nodes {
		if n.Cluster == cluster {
			w.node(i, n, indent)
			continue
		}
		c := child(n.Cluster)
		if c == "" || done[c] {
			continue
		}
		done[c] = true
		w.cluster(c, indent)
	}
}

func (w *dotWriter) cluster(id, indent string) {
	var c Cluster
	idx := 0
	for i, x := range w.g.Clusters {
		if x.ID == id {
			c, idx = x, i
		}
	}
	b := &w.b
	fmt.Fprintf(b, "%ssubgraph %s {\n", indent, quote(fmt.Sprintf("cluster_%d", idx)))
	in := indent + "  "
	class := "wf-cluster wf-" + string(c.Kind)
	style, fill, color := `"rounded,dashed"`, "#ffffff00", colMuted
	if c.Kind == KindParallel {
		style, color = `"rounded"`, colAccent
	}
	if st := w.o.States[c.ID]; st != "" {
		if f, l, known := stateStyle(st); known {
			style, fill, color = `"rounded,filled"`, f, l
			class += " wf-state-" + string(st)
		}
	}
	label := c.Label
	if n := w.o.Notes[c.ID]; n != "" {
		label += "\n" + n
	}
	fmt.Fprintf(b, "%sid=%s; class=%s; label=%s; style=%s; fillcolor=%s; color=%s; fontsize=10; labeljust=l;\n",
		in, quote(fmt.Sprintf("%s_c%d", w.o.prefix(), idx)), quote(class), quote(label), style, quote(fill), quote(color))
	w.scope(id, in)
	fmt.Fprintf(b, "%s}\n", indent)
}

func (w *dotWriter) node(i int, n Node, indent string) {
	label := n.Label
	if n.Detail != "" {
		label += "\n" + n.Detail
	}
	class := "wf-node wf-" + string(n.Kind)
	attrs := []string{shape(n.Kind)}
	if st := w.o.States[n.ID]; st != "" {
		if f, l, known := stateStyle(st); known {
			class += " wf-state-" + string(st)
			attrs = append(attrs, "fillcolor="+quote(f), "color="+quote(l))
			if st == Skipped || st == Canceled {
				attrs = append(attrs, `fontcolor="#757575"`, `style="rounded,filled,dashed"`)
			}
		}
	}
	if n.ID == w.o.Current && n.ID != "" {
		class += " wf-current"
		attrs = append(attrs, "penwidth=3.5")
	}
	if n.Kind != KindStart {
		attrs = append(attrs, "label="+quote(label))
	}
	attrs = append(attrs, "id="+quote(nodeID(w.o, i)), "class="+quote(class))
	fmt.Fprintf(&w.b, "%s%s [%s];\n", indent, quote(n.ID), strings.Join(attrs, ", "))
}

// nodeID is the SVG id of the i-th node.
func nodeID(o Options, i int) string { return fmt.Sprintf("%s_n%d", o.prefix(), i) }

func (w *dotWriter) edge(i int, e Edge) {
	attrs := []string{"id=" + quote(fmt.Sprintf("%s_e%d", w.o.prefix(), i))}
	class := "wf-edge"
	label := e.Label
	switch {
	case e.Back:
		class += " wf-back"
		if e.Limit != "" {
			if label != "" {
				label += "\n"
			}
			label += "max_iterations: " + e.Limit
		}
		attrs = append(attrs, `style=dashed`, "color="+quote(colAmber), "fontcolor="+quote(colAmber), "constraint=false")
	case e.Key == "on_error" || e.Key == "on_any_reject" || e.Key == "on_all_reject" || e.Key == "on_fail.then" || e.Key == "on_timeout.then":
		class += " wf-error"
		attrs = append(attrs, `style=dotted`)
	case e.Key == "skip_to":
		class += " wf-skip"
		attrs = append(attrs, `style=dashed`)
	}
	if label != "" {
		attrs = append(attrs, "label="+quote(label))
	}
	attrs = append(attrs, "class="+quote(class))
	fmt.Fprintf(&w.b, "  %s -> %s [%s];\n", quote(e.From), quote(e.To), strings.Join(attrs, ", "))
}

// quote makes s one DOT quoted string. Inside quotes DOT reads \" as a
// quote and keeps every other backslash for Graphviz's label escapes (\n,
// \l, \N, …): so a backslash is doubled (Graphviz shows \\ as one), a
// quote escaped, a newline written \n (a centred line break), and other
// control characters dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
