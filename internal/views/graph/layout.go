// Package graph lays out a directed graph in layers, top to bottom, so that
// pages can draw it as inline SVG: the app is offline and runs no diagram
// library in the browser, so the geometry is computed on the server.
//
// The method is the classic layered (Sugiyama) one, kept small:
//
//  1. a depth-first search from the root marks back edges (an edge to a node
//     still on the stack), so loops are drawn against the flow, not through it;
//  2. the remaining edges form a DAG, layered by longest path from the root;
//  3. edges spanning several layers are split by dummy vertices, so they are
//     routed beside the nodes in between instead of through them;
//  4. barycenter sweeps order each layer to reduce crossings (the ordering
//     with the fewest crossings seen is kept);
//  5. x coordinates come from sweeps that move each vertex towards its
//     neighbours, solved per layer as a weighted isotonic regression so that
//     nodes never overlap and a chain of real nodes stays straight (a real
//     node outweighs a dummy a thousand to one);
//  6. back edges are routed around the side in lanes, labels are placed
//     where they overlap no node and no other label.
//
// Everything is deterministic: input order breaks every tie.
package graph

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Node is a box to place. Its size comes from the caller, which knows the
// text it will hold.
type Node struct {
	ID   string
	W, H float64
	// Inset is how far the top and bottom corners sit inside the box (a
	// hexagon's slant), so edges attach to the outline rather than to the
	// bounding box.
	Inset float64
}

// Edge is a directed edge between two nodes' IDs.
type Edge struct {
	From, To string
	// LabelW and LabelH are the size of the edge's label; zero for none.
	LabelW, LabelH float64
}

// Input is the graph to lay out.
type Input struct {
	Nodes []Node
	Edges []Edge
	// Root is where layering starts (a workflow's entry step); the first
	// node when empty or unknown.
	Root string
	// TopMargin is extra room above the first layer, e.g. for a start mark.
	TopMargin float64
}

// Point is a position in the drawing, in pixels.
type Point struct{ X, Y float64 }

// Rect is an axis-aligned box: top-left corner and size.
type Rect struct{ X, Y, W, H float64 }

// Overlaps reports whether two boxes share any area.
func (r Rect) Overlaps(o Rect) bool {
	return r.X < o.X+o.W && o.X < r.X+r.W && r.Y < o.Y+o.H && o.Y < r.Y+r.H
}

// PlacedNode is a node with its position (top-left) and layer.
type PlacedNode struct {
	Node
	X, Y  float64
	Layer int
}

// Rect is the node's box.
func (n PlacedNode) Rect() Rect { return Rect{n.X, n.Y, n.W, n.H} }

// PlacedEdge is an edge with its route.
type PlacedEdge struct {
	Edge
	// Back is set for edges against the layering (loops), routed around the
	// side; a self-loop is a back edge too.
	Back bool
	// Path is SVG path data from the source's outline to the target's.
	Path string
	// Label is the centre of the label; meaningful when the edge has one.
	Label Point
}

// LabelRect is the box of the edge's label.
func (e PlacedEdge) LabelRect() Rect {
	return Rect{e.Label.X - e.LabelW/2, e.Label.Y - e.LabelH/2, e.LabelW, e.LabelH}
}

// Drawing is a laid-out graph: W×H pixels, nodes and edges in input order
// (a node repeating an earlier node's ID, and edges naming an unknown node,
// are left out).
type Drawing struct {
	W, H  float64
	Nodes []PlacedNode
	Edges []PlacedEdge
}

// Spacing, in pixels.
const (
	margin      = 12.0
	rankGap     = 44.0 // between layers, where edges bend and labels sit
	nodeGap     = 36.0 // between two real nodes of a layer
	dummyGap    = 22.0 // between a dummy and anything
	laneGap     = 24.0 // between back-edge lanes
	portGap     = 12.0 // between two edges attached to the same side
	cornerR     = 10.0 // back edges' rounded corners
	loopReach   = 34.0 // how far a self-loop sticks out
	realWeight  = 1000.0
	dummyWeight = 1.0
)

// vertex is a node or a dummy of the layered graph.
type vertex struct {
	node       int // index in Input.Nodes; -1 for a dummy
	w, h       float64
	inset      float64
	layer, pos int
	x          float64 // centre
	y          float64 // top
	up, down   []int   // neighbours in the layers above and below
}

func (v *vertex) real() bool { return v.node >= 0 }

// edge is an input edge with resolved endpoints.
type edge struct {
	Edge
	from, to int
	back     bool
	chain    []int // forward edges: source, dummies…, target
	labelOn  int   // the dummy carrying the label, or -1
}

// Layout places the graph. See the package doc for the method.
func Layout(in Input) Drawing {
	index := make(map[string]int, len(in.Nodes))
	var vs []*vertex
	for i, n := range in.Nodes {
		if _, dup := index[n.ID]; dup {
			continue
		}
		index[n.ID] = i
		vs = append(vs, &vertex{node: i, w: n.W, h: n.H, inset: n.Inset})
	}
	// vs is indexed like in.Nodes only without duplicates; map node → vertex.
	vOf := make(map[int]int, len(vs))
	for vi, v := range vs {
		vOf[v.node] = vi
	}
	var es []*edge
	for _, e := range in.Edges {
		f, ok1 := index[e.From]
		t, ok2 := index[e.To]
		if !ok1 || !ok2 {
			continue
		}
		es = append(es, &edge{Edge: e, from: vOf[f], to: vOf[t], labelOn: -1})
	}
	n := len(vs)
	if n == 0 {
		return Drawing{W: 2 * margin, H: 2*margin + in.TopMargin}
	}
	root := 0
	if r, ok := index[in.Root]; ok {
		root = vOf[r]
	}

	post := markBackEdges(n, root, es)
	layers := assignLayers(vs, es, post)
	layers = addDummies(&vs, es, layers)
	orderLayers(vs, layers)
	placeY(vs, layers, margin+in.TopMargin)
	placeX(vs, layers)
	straighten(vs, layers, es)

	d := route(vs, es, layers)
	d.Nodes = make([]PlacedNode, 0, n)
	for vi := range n {
		v := vs[vi]
		d.Nodes = append(d.Nodes, PlacedNode{Node: in.Nodes[v.node], Layer: v.layer, X: v.x - v.w/2, Y: v.y})
	}
	return d
}

// markBackEdges runs a depth-first search from root (then from every node
// not yet reached, in input order), marks edges into a node on the stack and
// returns the nodes in postorder.
func markBackEdges(n, root int, es []*edge) []int {
	out := make([][]*edge, n)
	for _, e := range es {
		out[e.from] = append(out[e.from], e)
	}
	const white, grey, black = 0, 1, 2
	state := make([]int, n)
	post := make([]int, 0, n)
	var visit func(v int)
	visit = func(v int) {
		state[v] = grey
		for _, e := range out[v] {
			switch state[e.to] {
			case white:
				visit(e.to)
			case grey:
				e.back = true
			}
		}
		state[v] = black
		post = append(post, v)
	}
	visit(root)
	for v := range n {
		if state[v] == white {
			visit(v)
		}
	}
	return post
}

// assignLayers gives every node the length of the longest forward path to
// it, visiting nodes in reverse postorder of the search (a topological
// order of the forward edges), and returns the layers, each in input order.
func assignLayers(vs []*vertex, es []*edge, post []int) [][]int {
	out := make([][]int, len(vs))
	for _, e := range es {
		if !e.back {
			out[e.from] = append(out[e.from], e.to)
		}
	}
	for i := len(post) - 1; i >= 0; i-- {
		v := post[i]
		for _, t := range out[v] {
			vs[t].layer = max(vs[t].layer, vs[v].layer+1)
		}
	}
	top := 0
	for _, v := range vs {
		top = max(top, v.layer)
	}
	layers := make([][]int, top+1)
	for vi, v := range vs {
		layers[v.layer] = append(layers[v.layer], vi)
	}
	return layers
}

// addDummies splits forward edges longer than one layer; the middle dummy
// of a labelled edge is as big as its label, so the label gets room.
func addDummies(vsp *[]*vertex, es []*edge, layers [][]int) [][]int {
	vs := *vsp
	for _, e := range es {
		if e.back {
			continue
		}
		e.chain = []int{e.from}
		from, to := vs[e.from].layer, vs[e.to].layer
		mid := from + (to-from)/2
		for l := from + 1; l < to; l++ {
			d := &vertex{node: -1, layer: l}
			if l == mid && e.LabelW > 0 {
				d.w, d.h = e.LabelW, e.LabelH
				e.labelOn = len(vs)
			}
			layers[l] = append(layers[l], len(vs))
			e.chain = append(e.chain, len(vs))
			vs = append(vs, d)
		}
		e.chain = append(e.chain, e.to)
		for i := 1; i < len(e.chain); i++ {
			a, b := e.chain[i-1], e.chain[i]
			vs[a].down = append(vs[a].down, b)
			vs[b].up = append(vs[b].up, a)
		}
	}
	*vsp = vs
	return layers
}

// orderLayers sorts each layer by the barycenter of its neighbours' positions,
// sweeping down and up, and keeps the ordering with the fewest crossings.
func orderLayers(vs []*vertex, layers [][]int) {
	setPos := func() {
		for _, l := range layers {
			for i, v := range l {
				vs[v].pos = i
			}
		}
	}
	setPos()
	best := cloneLayers(layers)
	bestC := crossings(vs, layers)
	sortBy := func(l []int, nbrs func(*vertex) []int) {
		bary := make(map[int]float64, len(l))
		for _, v := range l {
			ns := nbrs(vs[v])
			if len(ns) == 0 {
				bary[v] = float64(vs[v].pos)
				continue
			}
			s := 0.0
			for _, u := range ns {
				s += float64(vs[u].pos)
			}
			bary[v] = s / float64(len(ns))
		}
		slices.SortStableFunc(l, func(a, b int) int { return cmp.Compare(bary[a], bary[b]) })
		for i, v := range l {
			vs[v].pos = i
		}
	}
	for range 8 {
		if bestC == 0 {
			break
		}
		for l := 1; l < len(layers); l++ {
			sortBy(layers[l], func(v *vertex) []int { return v.up })
		}
		for l := len(layers) - 2; l >= 0; l-- {
			sortBy(layers[l], func(v *vertex) []int { return v.down })
		}
		if c := crossings(vs, layers); c < bestC {
			best, bestC = cloneLayers(layers), c
		}
	}
	for i := range layers {
		copy(layers[i], best[i])
	}
	setPos()
}

func cloneLayers(layers [][]int) [][]int {
	out := make([][]int, len(layers))
	for i, l := range layers {
		out[i] = slices.Clone(l)
	}
	return out
}

// crossings counts pairs of edges between adjacent layers that cross.
func crossings(vs []*vertex, layers [][]int) int {
	c := 0
	for l := 0; l+1 < len(layers); l++ {
		type seg struct{ a, b int }
		var segs []seg
		for _, v := range layers[l] {
			for _, t := range vs[v].down {
				segs = append(segs, seg{vs[v].pos, vs[t].pos})
			}
		}
		for i := range segs {
			for j := i + 1; j < len(segs); j++ {
				if (segs[i].a-segs[j].a)*(segs[i].b-segs[j].b) < 0 {
					c++
				}
			}
		}
	}
	return c
}

// placeY stacks the layers; a vertex is centred in its layer's height.
func placeY(vs []*vertex, layers [][]int, top float64) {
	y := top
	for _, l := range layers {
		h := 0.0
		for _, v := range l {
			h = max(h, vs[v].h)
		}
		for _, v := range l {
			vs[v].y = y + (h-vs[v].h)/2
		}
		y += h + rankGap
	}
}

// layerSpan returns the top and bottom of a vertex's layer band: a dummy's
// line runs through the whole band.
func layerSpan(vs []*vertex, layers [][]int, l int) (top, bottom float64) {
	top, bottom = math.Inf(1), math.Inf(-1)
	for _, v := range layers[l] {
		top = min(top, vs[v].y)
		bottom = max(bottom, vs[v].y+vs[v].h)
	}
	return top, bottom
}

func sep(a, b *vertex) float64 {
	gap := nodeGap
	if !a.real() || !b.real() {
		gap = dummyGap
	}
	return (a.w+b.w)/2 + gap
}

// placeX packs each layer, then sweeps down and up, pulling every vertex to
// the weighted mean of its neighbours in the layer just swept from.
func placeX(vs []*vertex, layers [][]int) {
	for _, l := range layers {
		x := 0.0
		for i, v := range l {
			if i > 0 {
				x += sep(vs[l[i-1]], vs[v])
			}
			vs[v].x = x
		}
	}
	for range 6 {
		for l := 1; l < len(layers); l++ {
			alignLayer(vs, layers[l], func(v *vertex) []int { return v.up })
		}
		for l := len(layers) - 2; l >= 0; l-- {
			alignLayer(vs, layers[l], func(v *vertex) []int { return v.down })
		}
	}
	for l := 1; l < len(layers); l++ {
		alignLayer(vs, layers[l], func(v *vertex) []int { return v.up })
	}
}

// straighten rounds every x to a whole pixel, so a chain of steps is one
// exact vertical line, then puts each long edge's dummies on one vertical
// line where the vertices beside them leave room: a long edge that wobbles
// by a few pixels from layer to layer looks like a mistake.
func straighten(vs []*vertex, layers [][]int, es []*edge) {
	for _, v := range vs {
		v.x = math.Round(v.x)
	}
	for _, e := range es {
		if len(e.chain) < 4 { // fewer than two dummies: nothing to line up
			continue
		}
		dummies := e.chain[1 : len(e.chain)-1]
		lo, hi, sum := math.Inf(-1), math.Inf(1), 0.0
		for _, d := range dummies {
			v := vs[d]
			l := layers[v.layer]
			if v.pos > 0 {
				lo = max(lo, vs[l[v.pos-1]].x+sep(vs[l[v.pos-1]], v))
			}
			if v.pos+1 < len(l) {
				hi = min(hi, vs[l[v.pos+1]].x-sep(v, vs[l[v.pos+1]]))
			}
			sum += v.x
		}
		if lo > hi {
			continue
		}
		x := min(max(math.Round(sum/float64(len(dummies))), math.Ceil(lo)), math.Floor(hi))
		if x < lo || x > hi {
			continue
		}
		for _, d := range dummies {
			vs[d].x = x
		}
	}
}

// alignLayer moves a layer's vertices as close as their order and spacing
// allow to where their neighbours pull them: the minimum of
// Σ wᵢ(xᵢ−dᵢ)² subject to xᵢ₊₁ ≥ xᵢ + sepᵢ, solved exactly by pool-adjacent-
// violators on yᵢ = xᵢ − offsetᵢ. A real node listens only to real
// neighbours when it has any, and weighs a thousand times a dummy, so long
// edges give way to chains of steps.
func alignLayer(vs []*vertex, l []int, nbrs func(*vertex) []int) {
	type block struct {
		w, wt float64
		n     int
	}
	var blocks []block
	offset := 0.0
	offs := make([]float64, len(l))
	for i, vi := range l {
		v := vs[vi]
		if i > 0 {
			offset += sep(vs[l[i-1]], v)
		}
		offs[i] = offset
		want, w := v.x, 1e-3
		ns := nbrs(v)
		if v.real() {
			var reals []int
			for _, u := range ns {
				if vs[u].real() {
					reals = append(reals, u)
				}
			}
			if len(reals) > 0 {
				ns = reals
			}
		}
		if len(ns) > 0 {
			s := 0.0
			for _, u := range ns {
				s += vs[u].x
			}
			want = s / float64(len(ns))
			w = dummyWeight
			if v.real() {
				w = realWeight
			}
		}
		blocks = append(blocks, block{w: w, wt: w * (want - offset), n: 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.wt/a.w <= b.wt/b.w {
				break
			}
			blocks = blocks[:len(blocks)-2]
			blocks = append(blocks, block{w: a.w + b.w, wt: a.wt + b.wt, n: a.n + b.n})
		}
	}
	i := 0
	for _, b := range blocks {
		y := b.wt / b.w
		for range b.n {
			vs[l[i]].x = y + offs[i]
			i++
		}
	}
}

// path is SVG path data kept as numbers until the drawing is shifted into
// place.
type path []cmd

type cmd struct {
	op  byte // M, L, C or Q
	pts []Point
}

func (p path) shift(dx float64) {
	for _, c := range p {
		for i := range c.pts {
			c.pts[i].X += dx
		}
	}
}

func (p path) String() string {
	var b strings.Builder
	for i, c := range p {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(c.op)
		for j, pt := range c.pts {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(num(pt.X))
			b.WriteByte(',')
			b.WriteString(num(pt.Y))
		}
	}
	return b.String()
}

func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// sideX is where a node's left (or right) outline is at height y: the
// slanted sides of a hexagon lean inwards away from the middle.
func sideX(v *vertex, y float64, right bool) float64 {
	mid := v.y + v.h/2
	in := 0.0
	if v.h > 0 {
		in = v.inset * math.Abs(y-mid) / (v.h / 2)
	}
	if right {
		return v.x + v.w/2 - in
	}
	return v.x - v.w/2 + in
}

// spreadPorts returns x positions on a node's flat top or bottom for edges
// heading to the given xs: each as close to its direction as the flat part
// allows, at least portGap apart, in the order of the headings.
func spreadPorts(v *vertex, heading []float64) []float64 {
	lo, hi := v.x-v.w/2+v.inset+portGap/2, v.x+v.w/2-v.inset-portGap/2
	if lo > hi {
		lo, hi = v.x, v.x
	}
	idx := make([]int, len(heading))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(heading[a], heading[b]) })
	xs := make([]float64, len(heading))
	prev := math.Inf(-1)
	for _, i := range idx {
		xs[i] = max(min(max(heading[i], lo), hi), prev+portGap)
		prev = xs[i]
	}
	if over := prev - hi; over > 0 && len(idx) > 0 {
		for _, i := range idx {
			xs[i] -= over
		}
		// Shifting back may have pushed the first ones below lo: spread
		// evenly then, centred.
		if xs[idx[0]] < lo {
			step := (hi - lo) / float64(len(idx)+1)
			for k, i := range idx {
				xs[i] = lo + step*float64(k+1)
			}
		}
	}
	return xs
}

// route draws every edge and places the labels, then shifts the whole
// drawing so it starts at the margin.
func route(vs []*vertex, es []*edge, layers [][]int) Drawing {
	paths := make([]path, len(es))
	labels := make([]Point, len(es))
	hasLabel := func(e *edge) bool { return e.LabelW > 0 && e.LabelH > 0 }

	// Forward edges: ports first, so edges sharing a side do not share a point.
	outPort := map[*edge]float64{}
	inPort := map[*edge]float64{}
	for vi, v := range vs {
		if !v.real() {
			continue
		}
		var outs, ins []*edge
		var outHead, inHead []float64
		for _, e := range es {
			if e.back {
				continue
			}
			if e.from == vi {
				outs = append(outs, e)
				outHead = append(outHead, vs[e.chain[1]].x)
			}
			if e.to == vi {
				ins = append(ins, e)
				inHead = append(inHead, vs[e.chain[len(e.chain)-2]].x)
			}
		}
		for i, x := range spreadPorts(v, outHead) {
			outPort[outs[i]] = x
		}
		for i, x := range spreadPorts(v, inHead) {
			inPort[ins[i]] = x
		}
	}
	for i, e := range es {
		if e.back {
			continue
		}
		src, dst := vs[e.from], vs[e.to]
		pts := []Point{{outPort[e], src.y + src.h}}
		for _, d := range e.chain[1 : len(e.chain)-1] {
			top, bottom := layerSpan(vs, layers, vs[d].layer)
			pts = append(pts, Point{vs[d].x, top}, Point{vs[d].x, bottom})
		}
		pts = append(pts, Point{inPort[e], dst.y})
		p := path{{op: 'M', pts: []Point{pts[0]}}}
		for k := 1; k < len(pts); k++ {
			a, b := pts[k-1], pts[k]
			if a.X == b.X {
				p = append(p, cmd{op: 'L', pts: []Point{b}})
				continue
			}
			dy := (b.Y - a.Y) / 2
			p = append(p, cmd{op: 'C', pts: []Point{{a.X, a.Y + dy}, {b.X, b.Y - dy}, b}})
		}
		paths[i] = p
		if e.labelOn >= 0 {
			d := vs[e.labelOn]
			labels[i] = Point{d.x, d.y + d.h/2}
		}
	}

	// Back edges: each picks the side where it detours least, then a lane
	// outside everything in the layers it spans; shorter loops get the
	// inner lanes so nested loops do not cross.
	type lane struct {
		e        *edge
		i        int
		right    bool
		x        float64
		top, bot int // layers spanned
	}
	var lanes []*lane
	for i, e := range es {
		if e.back && e.from != e.to {
			lanes = append(lanes, &lane{e: e, i: i, top: vs[e.to].layer, bot: vs[e.from].layer})
		}
	}
	slices.SortStableFunc(lanes, func(a, b *lane) int { return (a.bot - a.top) - (b.bot - b.top) })
	var placed []*lane
	for _, ln := range lanes {
		left, right := math.Inf(1), math.Inf(-1)
		for l := ln.top; l <= ln.bot; l++ {
			for _, v := range layers[l] {
				left = min(left, vs[v].x-vs[v].w/2)
				right = max(right, vs[v].x+vs[v].w/2)
			}
		}
		u, w := vs[ln.e.from], vs[ln.e.to]
		costL := (u.x - u.w/2 - left) + (w.x - w.w/2 - left)
		costR := (right - u.x - u.w/2) + (right - w.x - w.w/2)
		ln.right = costR < costL
		reach := laneGap + ln.e.LabelW/2
		if ln.right {
			ln.x = right + reach
		} else {
			ln.x = left - reach
		}
		for _, o := range placed {
			if o.right != ln.right || o.bot < ln.top || ln.bot < o.top {
				continue
			}
			if ln.right {
				ln.x = max(ln.x, o.x+laneGap)
			} else {
				ln.x = min(ln.x, o.x-laneGap)
			}
		}
		placed = append(placed, ln)
	}
	// Side ports: on each node side, entering edges above leaving ones,
	// the outermost lane entering highest and leaving lowest.
	type attach struct {
		ln    *lane
		enter bool
	}
	sides := map[[2]int][]attach{} // {vertex, right?1:0}
	sideKey := func(v int, right bool) [2]int {
		if right {
			return [2]int{v, 1}
		}
		return [2]int{v, 0}
	}
	for _, ln := range placed {
		sides[sideKey(ln.e.to, ln.right)] = append(sides[sideKey(ln.e.to, ln.right)], attach{ln, true})
		sides[sideKey(ln.e.from, ln.right)] = append(sides[sideKey(ln.e.from, ln.right)], attach{ln, false})
	}
	portY := map[attach]float64{}
	for key, as := range sides {
		v := vs[key[0]]
		slices.SortStableFunc(as, func(a, b attach) int {
			if a.enter != b.enter {
				if a.enter {
					return -1
				}
				return 1
			}
			da, db := math.Abs(a.ln.x-v.x), math.Abs(b.ln.x-v.x)
			if a.enter { // outer first
				da, db = db, da
			}
			switch {
			case da < db:
				return -1
			case da > db:
				return 1
			}
			return a.ln.i - b.ln.i
		})
		for k, a := range as {
			portY[a] = v.y + v.h*float64(k+1)/float64(len(as)+1)
		}
	}
	for _, ln := range placed {
		u, w := vs[ln.e.from], vs[ln.e.to]
		sy, ty := portY[attach{ln, false}], portY[attach{ln, true}]
		s := Point{sideX(u, sy, ln.right), sy}
		t := Point{sideX(w, ty, ln.right), ty}
		dir := -1.0 // towards the lane
		if ln.right {
			dir = 1
		}
		r := min(cornerR, math.Abs(ln.x-s.X)/2, math.Abs(ln.x-t.X)/2, (sy-ty)/2)
		paths[ln.i] = path{
			{op: 'M', pts: []Point{s}},
			{op: 'L', pts: []Point{{ln.x - dir*r, sy}}},
			{op: 'Q', pts: []Point{{ln.x, sy}, {ln.x, sy - r}}},
			{op: 'L', pts: []Point{{ln.x, ty + r}}},
			{op: 'Q', pts: []Point{{ln.x, ty}, {ln.x - dir*r, ty}}},
			{op: 'L', pts: []Point{t}},
		}
	}
	// Self-loops: a small loop on the right.
	for i, e := range es {
		if !e.back || e.from != e.to {
			continue
		}
		v := vs[e.from]
		mid := v.y + v.h/2
		a := Point{sideX(v, mid-6, true), mid - 6}
		b := Point{sideX(v, mid+6, true), mid + 6}
		x := v.x + v.w/2 + loopReach
		paths[i] = path{
			{op: 'M', pts: []Point{a}},
			{op: 'C', pts: []Point{{x, mid - 26}, {x, mid + 26}, b}},
		}
		labels[i] = Point{x + e.LabelW/2, mid}
	}

	// Labels not yet placed: the first candidate spot along the edge that
	// overlaps no node and no placed label.
	var taken []Rect
	for _, v := range vs {
		if v.real() {
			taken = append(taken, Rect{v.x - v.w/2, v.y, v.w, v.h})
		}
	}
	box := func(e *edge, p Point) Rect {
		return Rect{p.X - e.LabelW/2 - 2, p.Y - e.LabelH/2, e.LabelW + 4, e.LabelH}
	}
	for i, e := range es {
		if hasLabel(e) && (e.labelOn >= 0 || e.from == e.to) {
			taken = append(taken, box(e, labels[i]))
		}
	}
	free := func(r Rect) bool {
		for _, o := range taken {
			if r.Overlaps(o) {
				return false
			}
		}
		return true
	}
	fractions := []float64{0.5, 0.35, 0.65, 0.2, 0.8}
	place := func(i int, e *edge, at func(t float64) Point) {
		labels[i] = at(fractions[0])
		for _, t := range fractions {
			if p := at(t); free(box(e, p)) {
				labels[i] = p
				break
			}
		}
		taken = append(taken, box(e, labels[i]))
	}
	for i, e := range es {
		if !hasLabel(e) || e.back || e.labelOn >= 0 {
			continue
		}
		// One layer: the first (and only) segment.
		seg := paths[i][1]
		a := paths[i][0].pts[0]
		place(i, e, func(t float64) Point {
			if seg.op == 'L' {
				b := seg.pts[0]
				return Point{a.X + (b.X-a.X)*t, a.Y + (b.Y-a.Y)*t}
			}
			return bezier(a, seg.pts[0], seg.pts[1], seg.pts[2], t)
		})
	}
	for _, ln := range placed {
		if !hasLabel(ln.e) {
			continue
		}
		lo, hi := paths[ln.i][3].pts[0].Y, paths[ln.i][1].pts[0].Y // lane's vertical run
		place(ln.i, ln.e, func(t float64) Point { return Point{ln.x, hi + (lo-hi)*t} })
	}

	// Bounds, then shift everything right of the margin.
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	grow := func(r Rect) {
		minX, maxX, maxY = min(minX, r.X), max(maxX, r.X+r.W), max(maxY, r.Y+r.H)
	}
	for _, v := range vs {
		grow(Rect{v.x - v.w/2, v.y, v.w, v.h})
	}
	for _, ln := range placed {
		grow(Rect{ln.x - 1, 0, 2, 0})
	}
	for i, e := range es {
		if e.back && e.from == e.to {
			v := vs[e.from]
			grow(Rect{v.x, v.y, v.w/2 + loopReach, v.h})
		}
		if hasLabel(e) {
			grow(box(e, labels[i]))
		}
	}
	dx := margin - minX
	d := Drawing{W: maxX - minX + 2*margin, H: maxY + margin}
	for _, v := range vs {
		v.x += dx
	}
	for i, e := range es {
		paths[i].shift(dx)
		d.Edges = append(d.Edges, PlacedEdge{Edge: e.Edge, Back: e.back, Path: paths[i].String(),
			Label: Point{labels[i].X + dx, labels[i].Y}})
	}
	return d
}

// bezier is the point at t on a cubic Bézier curve.
func bezier(p0, p1, p2, p3 Point, t float64) Point {
	u := 1 - t
	a, b, c, d := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return Point{a*p0.X + b*p1.X + c*p2.X + d*p3.X, a*p0.Y + b*p1.Y + c*p2.Y + d*p3.Y}
}
