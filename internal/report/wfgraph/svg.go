package wfgraph

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"
)

// graphvizMu serialises every call into go-graphviz. The library runs
// Graphviz as one WebAssembly module per process, created when it loads,
// whose C code keeps global state: two layouts at once would corrupt each
// other. The lock has to be as wide as that module, hence a package
// variable rather than a Renderer field.
var graphvizMu sync.Mutex

// Renderer draws graphs as SVG with Graphviz's dot layout and keeps the
// drawings of the last graphs it drew, since pages draw the same workflows
// again and again and a layout costs milliseconds of a shared lock. The
// zero value is not usable; call NewRenderer. It is safe for concurrent
// use.
type Renderer struct {
	mu    sync.Mutex
	cache map[string]string // by DOT text
	order []string          // cache keys, oldest first
	max   int
}

// DefaultCacheSize is how many drawings a Renderer keeps.
const DefaultCacheSize = 64

// NewRenderer returns a Renderer keeping up to DefaultCacheSize drawings.
func NewRenderer() *Renderer {
	return &Renderer{cache: map[string]string{}, max: DefaultCacheSize}
}

// SVG lays g out and returns it as an <svg> element to inline in a page:
// no XML prolog, the title as its accessible name, and on each node's group
// data-testid="diagram-node", data-node (the stage id), data-kind and,
// when highlighted, data-state and data-current, so pages and tests find
// stages without reading Graphviz's markup. Every text of g reaches the
// SVG escaped by Graphviz.
func (r *Renderer) SVG(ctx context.Context, g Graph, o Options) (string, error) {
	dot := DOT(g, o)
	r.mu.Lock()
	svg, ok := r.cache[dot]
	r.mu.Unlock()
	if ok {
		return svg, nil
	}
	raw, err := Layout(ctx, dot)
	if err != nil {
		return "", err
	}
	svg, err = annotate(raw, g, o)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cache[dot]; !ok {
		if len(r.order) >= r.max {
			delete(r.cache, r.order[0])
			r.order = r.order[1:]
		}
		r.cache[dot] = svg
		r.order = append(r.order, dot)
	}
	return svg, nil
}

// Layout runs Graphviz's dot layout on a DOT text and returns the SVG
// Graphviz writes, unchanged (the CLI prints it as a file).
func Layout(ctx context.Context, dot string) (string, error) {
	graphvizMu.Lock()
	defer graphvizMu.Unlock()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return "", fmt.Errorf("wfgraph: start graphviz: %w", err)
	}
	defer gv.Close()
	graph, err := graphviz.ParseBytes([]byte(dot))
	if err != nil {
		return "", fmt.Errorf("wfgraph: read DOT: %w", err)
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, graph, graphviz.SVG, &buf); err != nil {
		return "", fmt.Errorf("wfgraph: lay out: %w", err)
	}
	return buf.String(), nil
}

// annotate makes Graphviz's SVG document an element for a page (see SVG).
// It edits only markup it asked Graphviz for: the root element and the
// node groups, found by the ids DOT gave them.
func annotate(raw string, g Graph, o Options) (string, error) {
	i := strings.Index(raw, "<svg")
	if i < 0 {
		return "", fmt.Errorf("wfgraph: graphviz wrote no <svg> element")
	}
	svg := raw[i:]
	svg = `<svg class="wf-graph" role="img" aria-label="` + html.EscapeString(ariaLabel(g)) + `"` + svg[len("<svg"):]
	for i, n := range g.Nodes {
		// Graphviz writes the nodes in its own order (clusters first), so
		// each is found by its id.
		mark := `<g id="` + nodeID(o, i) + `" class="`
		if !strings.Contains(svg, mark) {
			return "", fmt.Errorf("wfgraph: graphviz drew no node %q", n.ID)
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<g data-testid="diagram-node" data-node="%s" data-kind="%s"`, html.EscapeString(n.ID), n.Kind)
		if st, ok := o.States[n.ID]; ok {
			fmt.Fprintf(&b, ` data-state="%s"`, html.EscapeString(string(st)))
		}
		if n.ID == o.Current && n.ID != "" {
			b.WriteString(` data-current="true"`)
		}
		b.WriteString(mark[len("<g"):])
		svg = strings.Replace(svg, mark, b.String(), 1)
	}
	return strings.TrimSpace(svg), nil
}

// ariaLabel names the drawing for assistive technology; the page lists
// the same stages and transitions as text.
func ariaLabel(g Graph) string {
	stages := 0
	for _, n := range g.Nodes {
		if n.Kind != KindStart && n.Kind != KindEnd && n.Kind != KindJoin {
			stages++
		}
	}
	return fmt.Sprintf("Diagram of the %s workflow: %s and %s", g.Title, plural(stages, "stage"), plural(len(g.Edges), "transition"))
}
