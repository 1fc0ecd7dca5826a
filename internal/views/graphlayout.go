package views

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"quarry/internal/views/graph"
)

// endID is the engine's end marker (engine.End); views only read the graph
// the handler passed, so they name it rather than import the engine.
const endID = "_end"

// Text sizes of the workflow diagram, in pixels; static/app.css sets the
// same sizes on .wf-title, .wf-sub and .wf-label, since the layout measures
// text before the browser does.
const (
	titleSize  = 13.0
	subSize    = 11.0
	labelSize  = 11.0
	lineHeight = 16.0
	maxTextW   = 190.0 // titles wrap beyond this
	padX       = 14.0
	padY       = 9.0
	startRoom  = 30.0 // above the entry step, for the start dot
)

// Diagram is a workflow drawn as inline SVG: every coordinate is computed
// here, because the app is offline and draws no diagram in the browser.
type Diagram struct {
	// ID prefixes the ids inside the SVG (arrow markers), unique on the page.
	ID    string
	Label string // the accessible name of the image
	W, H  float64
	Nodes []DiagramNode
	Edges []DiagramEdge
	// Start is the dot above the entry step and the arrow from it.
	Start      graph.Point
	StartArrow string
	HasStart   bool
}

// DiagramNode is one step drawn: a rounded box, a hexagon for a checkpoint
// or a pill for the end.
type DiagramNode struct {
	ID, Title string
	// Kind is "step", "checkpoint" or "end".
	Kind    string
	Gate    string
	Entry   bool
	X, Y    float64
	W, H    float64
	Polygon string // checkpoints' outline
	Lines   []DiagramText
	Tooltip string
}

// DiagramText is one line of text, centred on X with its baseline at Y.
type DiagramText struct {
	Text  string
	Class string
	X, Y  float64
}

// DiagramEdge is one transition drawn; Back marks loops routed around the
// side.
type DiagramEdge struct {
	From, To, Label string
	// Outcomes are every outcome the arrow stands for, even unlabelled.
	Outcomes       string
	Back           bool
	Path           string
	LabelX, LabelY float64
}

// textWidth estimates how wide s renders in DejaVu Sans / system-ui at size
// px: the layout needs widths before any browser has seen the text, and
// overestimating a little only adds padding.
func textWidth(s string, size float64) float64 {
	em := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("il.,:;'|!", r):
			em += 0.3
		case strings.ContainsRune("fjtrI()[] -", r):
			em += 0.4
		case strings.ContainsRune("mwMW", r):
			em += 0.92
		case r > unicode.MaxASCII:
			em += 0.9
		case unicode.IsUpper(r):
			em += 0.72
		default:
			em += 0.62
		}
	}
	return em * size
}

// wrap breaks a title into lines no wider than maxTextW where it can (a
// single long word keeps its own line).
func wrap(s string) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur != "" && textWidth(next, titleSize) > maxTextW {
			lines = append(lines, cur)
			next = w
		}
		cur = next
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// humanize turns a checkpoint kind like "strategy_confirmation" into words.
func humanize(s string) string { return strings.ReplaceAll(s, "_", " ") }

// edgeGroup is the transitions between one pair of steps, drawn as one
// arrow labelled with every outcome ("ok, skip").
type edgeGroup struct {
	from, to string
	outcomes []string
	label    string // empty when the arrow needs none
}

// NewDiagram lays out a workflow for drawing; id must be unique on the
// page. The layout is deterministic: the same workflow draws the same way.
func NewDiagram(id string, w WorkflowView) Diagram {
	d := Diagram{ID: id}
	in := graph.Input{TopMargin: startRoom}
	gates := 0
	known := map[string]bool{}
	for _, s := range w.Steps {
		if known[s.ID] {
			continue // the layout keeps the first of two steps with one ID
		}
		known[s.ID] = true
		n := DiagramNode{ID: s.ID, Title: s.Title, Gate: s.Gate, Entry: s.Entry, Kind: "step"}
		lines := wrap(s.Title)
		textW := 0.0
		for _, l := range lines {
			textW = max(textW, textWidth(l, titleSize))
		}
		n.H = 2*padY + lineHeight*float64(len(lines))
		n.W = textW + 2*padX
		inset := 0.0
		n.Tooltip = s.Title
		switch {
		case s.ID == endID:
			n.Kind = "end"
			n.Tooltip = "end of the workflow"
			n.W, n.H = max(n.W, 64), 32
		case s.Gate != "":
			gates++
			n.Kind = "checkpoint"
			n.H += lineHeight - 2
			n.W = max(n.W, textWidth("checkpoint", subSize)+2*padX)
			inset = 14
			n.W += 2 * inset
			n.Tooltip = fmt.Sprintf("%s — checkpoint (%s): a person decides here", s.Title, humanize(s.Gate))
		}
		if s.Entry {
			in.Root = s.ID
			n.Tooltip += " — entry step"
		}
		n.W, n.H = math.Ceil(n.W), math.Ceil(n.H)
		in.Nodes = append(in.Nodes, graph.Node{ID: s.ID, W: n.W, H: n.H, Inset: inset})
		// Text lines are relative to the box for now; shifted below.
		y := (n.H-lineHeight*float64(len(lines)))/2 + lineHeight*0.72
		if n.Kind == "checkpoint" {
			y -= (lineHeight - 2) / 2
		}
		for _, l := range lines {
			n.Lines = append(n.Lines, DiagramText{Text: l, Class: "wf-title", Y: y})
			y += lineHeight
		}
		if n.Kind == "checkpoint" {
			n.Lines = append(n.Lines, DiagramText{Text: "checkpoint", Class: "wf-sub", Y: y - 1})
		}
		d.Nodes = append(d.Nodes, n)
	}

	var groups []*edgeGroup
	byPair := map[[2]string]*edgeGroup{}
	for _, e := range w.Edges {
		if !known[e.From] || !known[e.To] {
			continue // the layout would leave it out too
		}
		k := [2]string{e.From, e.To}
		g, ok := byPair[k]
		if !ok {
			g = &edgeGroup{from: e.From, to: e.To}
			byPair[k] = g
			groups = append(groups, g)
		}
		g.outcomes = append(g.outcomes, e.Outcome)
	}
	// A step's only transition, "ok", says nothing its arrow does not:
	// unlabelled, the outcomes that matter (skip, iterate, exit) stand out.
	outs := map[string]int{}
	for _, g := range groups {
		outs[g.from] += len(g.outcomes)
	}
	for _, g := range groups {
		if outs[g.from] == 1 && g.outcomes[0] == "ok" {
			g.label = ""
		} else {
			g.label = strings.Join(g.outcomes, ", ")
		}
		e := graph.Edge{From: g.from, To: g.to}
		if g.label != "" {
			e.LabelW, e.LabelH = math.Ceil(textWidth(g.label, labelSize))+4, 14
		}
		in.Edges = append(in.Edges, e)
	}

	lay := graph.Layout(in)
	d.W, d.H = math.Ceil(lay.W), math.Ceil(lay.H)
	for i := range d.Nodes {
		n := &d.Nodes[i]
		p := lay.Nodes[i]
		n.X, n.Y = p.X, p.Y
		for j := range n.Lines {
			n.Lines[j].X = p.X + p.W/2
			n.Lines[j].Y += p.Y
		}
		if n.Kind == "checkpoint" {
			in := p.Inset
			xy := []float64{p.X + in, p.Y, p.X + p.W - in, p.Y, p.X + p.W, p.Y + p.H/2,
				p.X + p.W - in, p.Y + p.H, p.X + in, p.Y + p.H, p.X, p.Y + p.H/2}
			var b strings.Builder
			for k := 0; k < len(xy); k += 2 {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(svgNum(xy[k]) + "," + svgNum(xy[k+1]))
			}
			n.Polygon = b.String()
		}
		if n.Entry {
			cx := p.X + p.W/2
			d.HasStart = true
			d.Start = graph.Point{X: cx, Y: p.Y - startRoom + 8}
			d.StartArrow = fmt.Sprintf("M%s,%s L%s,%s", svgNum(cx), svgNum(d.Start.Y+6), svgNum(cx), svgNum(p.Y))
		}
	}
	for i, e := range lay.Edges {
		d.Edges = append(d.Edges, DiagramEdge{From: e.From, To: e.To, Label: groups[i].label, Outcomes: strings.Join(groups[i].outcomes, ", "),
			Back: e.Back, Path: e.Path, LabelX: e.Label.X, LabelY: e.Label.Y + labelSize*0.35})
	}

	steps := len(w.Steps)
	for _, s := range w.Steps {
		if s.ID == endID {
			steps--
		}
	}
	d.Label = fmt.Sprintf("Diagram of the %s workflow: %d steps, %d of them checkpoints, and %d transitions; the lists below describe the same graph.",
		w.Title, steps, gates, len(w.Edges))
	return d
}

// svgNum formats a coordinate to a tenth of a pixel.
func svgNum(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}
