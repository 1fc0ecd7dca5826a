// Package wfgraph turns a workflow into a graph to draw: a definition file
// (engine/def) or a workflow written in Go (engine.Workflow) becomes nodes,
// edges and clusters, written out as DOT, as Mermaid, or as SVG laid out by
// Graphviz. It draws and nothing else: def checks definitions, the engine
// runs them.
package wfgraph

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
)

// Kind is what a node stands for; it decides the node's shape.
type Kind string

// The node kinds: a stage type of the definition format, a step of a Go
// workflow, the two halves of a parallel stage, and the run's start and
// end.
const (
	KindSkill    Kind = "skill"
	KindAction   Kind = "action"
	KindSet      Kind = "set"
	KindGate     Kind = "gate"
	KindParallel Kind = "parallel" // the fork: branches start here
	KindJoin     Kind = "join"     // where a parallel stage's branches meet
	KindBranch   Kind = "branch"   // a cluster: one branch of a parallel stage
	KindDelay    Kind = "delay"
	KindWebhook  Kind = "webhook"
	KindStep     Kind = "step" // a Go workflow's handler step
	KindStart    Kind = "start"
	KindEnd      Kind = "end"
)

// The ids of the start and end nodes: they cannot collide with a stage id,
// which is letters, digits and _.
const (
	Start = "(start)"
	End   = "(complete)"
)

// Node is one box of the drawing.
type Node struct {
	// ID is the stage's id, unique in the graph (a join is "<parallel id>.join").
	ID string
	// Label is the first line (the stage id, or a Go step's title);
	// Detail the second (its type and what it does), "" for none.
	Label, Detail string
	Kind          Kind
	// Cluster is the innermost cluster holding the node, "" at the top.
	Cluster string
}

// Edge is one transition. Key is the definition key it comes from
// (on_complete, on_pass, on_fail, on_fail.then, on_timeout.then, option,
// on_error, skip_to, branch, on_any_reject, on_all_reject; a Go
// workflow's outcomes); Label is what the arrow says, "" when it needs
// nothing.
type Edge struct {
	From, To   string
	Key, Label string
	// Back marks an edge that goes back against the definition's order:
	// a loop. Limit is what bounds it (max_iterations: "5", or the
	// expression "params.max_iterations"), "" when the loop has no bound
	// of its own (a Go workflow's "show more").
	Back  bool
	Limit string
}

// Cluster is a box around nodes: a parallel stage around its branches, and
// each branch around its stages.
type Cluster struct {
	ID, Label string
	Parent    string // "" at the top
	Kind      Kind   // KindParallel or KindBranch
	// Branch is a branch cluster's branch id, the id its run's branch
	// has; ForEach marks the one branch of a for_each stage, drawn once
	// for every item (run branches <Branch>-1, <Branch>-2, …).
	Branch  string
	ForEach bool
}

// Graph is a workflow as something to draw, in definition order.
type Graph struct {
	Name, Title string
	Nodes       []Node
	Edges       []Edge
	Clusters    []Cluster
}

// FromDefinition draws a definition file. It expects a definition that
// loaded without errors; on a partial one it draws what it can.
func FromDefinition(d *def.Definition) Graph {
	g := Graph{Name: d.Metadata.Name, Title: d.Metadata.Title}
	if g.Title == "" {
		g.Title = g.Name
	}
	b := &builder{g: &g}
	g.Nodes = append(g.Nodes, Node{ID: Start, Label: "start", Kind: KindStart})
	if len(d.Stages) > 0 {
		g.Edges = append(g.Edges, Edge{From: Start, To: d.Stages[0].ID, Key: "entry"})
	}
	b.stages(d.Stages, "", End)
	g.Nodes = append(g.Nodes, Node{ID: End, Label: def.Complete, Kind: KindEnd})
	return g
}

type builder struct{ g *Graph }

// stages draws one list of stages (the workflow, or a branch inside
// cluster) whose complete goes to end.
func (b *builder) stages(list []*def.Stage, cluster, end string) {
	index := map[string]int{}
	for i, s := range list {
		index[s.ID] = i
	}
	for i, s := range list {
		next := end
		if i+1 < len(list) {
			next = list[i+1].ID
		}
		from := s.ID
		if s.Type == def.TypeParallel {
			from = b.parallel(s, cluster)
		} else {
			b.g.Nodes = append(b.g.Nodes, Node{ID: s.ID, Label: cmp.Or(s.Title, s.ID), Detail: detail(s), Kind: Kind(s.Type), Cluster: cluster})
		}
		for _, t := range transitions(s, next) {
			src := s.ID
			if t.fromJoin {
				src = from
			}
			e := Edge{From: src, To: t.to, Key: t.key, Label: t.label}
			if e.To == def.Complete {
				e.To = end
			} else if j, ok := index[e.To]; ok && j <= i {
				e.Back, e.Limit = true, loopLimit(list[j:i+1], s)
			}
			b.g.Edges = append(b.g.Edges, e)
		}
	}
}

// parallel draws a parallel stage as a cluster: the fork node, a cluster
// per branch, and the join node its onward edges leave from, which it
// returns.
func (b *builder) parallel(s *def.Stage, parent string) string {
	join := s.ID + ".join"
	b.g.Clusters = append(b.g.Clusters, Cluster{ID: s.ID, Label: s.ID, Parent: parent, Kind: KindParallel})
	b.g.Nodes = append(b.g.Nodes, Node{ID: s.ID, Label: s.ID, Detail: detail(s), Kind: KindParallel, Cluster: s.ID})
	for _, br := range s.Branches {
		if len(br.Stages) == 0 {
			continue
		}
		cid := s.ID + "." + br.ID
		label := "branch " + br.ID
		edge := br.ID
		if s.ForEach.Src != "" {
			label = "for each item of " + clip(s.ForEach.Src, 40)
			edge = "each item"
		}
		if br.Condition.Src != "" {
			edge += " if " + clip(br.Condition.Src, 30)
		}
		b.g.Clusters = append(b.g.Clusters, Cluster{ID: cid, Label: label, Parent: s.ID, Kind: KindBranch, Branch: br.ID, ForEach: s.ForEach.Src != ""})
		b.g.Edges = append(b.g.Edges, Edge{From: s.ID, To: br.Stages[0].ID, Key: "branch", Label: edge})
		b.stages(br.Stages, cid, join)
	}
	b.g.Nodes = append(b.g.Nodes, Node{ID: join, Label: "join " + joinText(s.Join), Kind: KindJoin, Cluster: s.ID})
	return join
}

// transition is one target a stage names; fromJoin marks the ones a
// parallel stage takes once its branches are done.
type transition struct {
	to, key, label string
	fromJoin       bool
}

// transitions lists a stage's targets in a fixed order, defaults included
// (a transition left out goes to next), as def's validation reads them.
func transitions(s *def.Stage, next string) []transition {
	var out []transition
	add := func(t def.Target, key, label string, fromJoin bool) {
		if t.ID != "" {
			out = append(out, transition{to: t.ID, key: key, label: label, fromJoin: fromJoin})
		}
	}
	orNext := func(t def.Target) def.Target {
		if t.ID == "" {
			t.ID = next
		}
		return t
	}
	switch s.Type {
	case def.TypeGate:
		for _, o := range s.Options {
			label := clip(o.Label, 40)
			if o.RequiresInput {
				label += " (with input)"
			}
			add(o.Next, "option", label, false)
		}
		if len(s.Options) == 0 {
			add(orNext(s.OnPass), "on_pass", "on_pass", false)
		}
		if f := s.OnFail; f != nil {
			add(f.Goto, "on_fail", "on_fail", false)
			if f.Then.Action == def.ThenGoto {
				add(f.Then.Goto, "on_fail.then", "on_fail then", false)
			}
		}
		if o := s.OnTimeout; o != nil && o.Then.Action == def.ThenGoto {
			add(o.Then.Goto, "on_timeout.then", "on_timeout then", false)
		}
	case def.TypeParallel:
		add(orNext(s.OnComplete), "on_complete", "on_complete", true)
		add(s.OnAnyReject, "on_any_reject", "on_any_reject", true)
		add(s.OnAllReject, "on_all_reject", "on_all_reject", true)
	default:
		add(orNext(s.OnComplete), "on_complete", "on_complete", false)
	}
	if s.Condition.Src != "" {
		add(orNext(s.SkipTo), "skip_to", "skip_to", false)
	}
	if s.OnError != nil && s.OnError.Then.Action == def.ThenGoto {
		add(s.OnError.Then.Goto, "on_error", "on_error", false)
	}
	// An arrow that is a stage's only way on says nothing its label
	// would: unlabelled, the transitions that matter stand out.
	if len(out) == 1 && out[0].key == "on_complete" {
		out[0].label = ""
	}
	return out
}

// loopLimit is what bounds the loop a back edge from s closes over loop
// (the stages from the target to s): s's own limit, else the first stage
// of the loop that has one (def's validation makes sure one does).
func loopLimit(loop []*def.Stage, s *def.Stage) string {
	if l := limitOf(s); l != "" {
		return l
	}
	for _, st := range loop {
		if l := limitOf(st); l != "" {
			return l
		}
	}
	return ""
}

func limitOf(s *def.Stage) string {
	l := s.MaxIterations
	if !l.Set() && s.Type == def.TypeGate && s.OnFail != nil {
		l = s.OnFail.MaxIterations
	}
	switch {
	case l.Expr != "":
		return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(l.Expr), "{{"), "}}"))
	case l.N > 0:
		return strconv.Itoa(l.N)
	}
	return ""
}

// detail is a stage's second line: its type and what it does.
func detail(s *def.Stage) string {
	d := string(s.Type)
	switch s.Type {
	case def.TypeSkill, def.TypeAction:
		d += " · " + s.Skill
	case def.TypeSet:
		keys := make([]string, len(s.Set))
		for i, f := range s.Set {
			keys[i] = f.Key
		}
		d += " · " + strings.Join(keys, ", ")
	case def.TypeGate:
		var parts []string
		if s.Form != "" {
			parts = append(parts, "form "+s.Form)
		}
		if n := len(s.Conditions); n > 0 {
			parts = append(parts, plural(n, "condition"))
		}
		if n := len(s.Options); n > 0 {
			parts = append(parts, plural(n, "option"))
		}
		if len(parts) > 0 {
			d += " · " + strings.Join(parts, ", ")
		}
	case def.TypeParallel:
		if s.ForEach.Src != "" {
			d += " · for each"
		}
	case def.TypeDelay:
		switch {
		case s.Duration > 0:
			d += " · " + durationText(s)
		case s.Until != "":
			d += " · until " + s.Until
		}
		if s.Poll != nil {
			d += " · poll"
		}
	case def.TypeWebhook:
		if r := s.Request; r != nil {
			m := r.Method
			if m == "" {
				m = "POST"
			}
			d += " · " + m + " " + host(r.URL)
		}
	}
	if s.Condition.Src != "" {
		d += " · if " + s.Condition.Src
	}
	return clip(d, 60)
}

// durationText writes a delay's duration as the file most likely did.
func durationText(s *def.Stage) string {
	const day = 24 * time.Hour
	if d := s.Duration; d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	t := s.Duration.String() // 1h30m0s: drop the zero units at the end
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// host is the scheme-less host of a URL, the part the allowlist checks.
func host(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

func joinText(j def.Join) string {
	switch j.Mode {
	case def.JoinAny:
		return "any"
	case def.JoinN:
		return strconv.Itoa(j.N)
	}
	return "all"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// clip shortens s to at most n runes, marking the cut: Graphviz does not
// wrap, and a long expression would stretch the whole drawing.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// FromWorkflow draws a workflow written in Go from its transition graph:
// gates are checkpoints, a loop back is bounded by the workflow's
// MaxIterations when it iterates, and the transitions between two steps
// share one arrow labelled with their outcomes (a step's only outcome
// "ok" goes unlabelled).
func FromWorkflow(w *engine.Workflow) Graph {
	eg := w.Graph()
	g := Graph{Name: w.Name, Title: w.Title}
	if g.Title == "" {
		g.Title = w.Name
	}
	order := map[string]int{}
	g.Nodes = append(g.Nodes, Node{ID: Start, Label: "start", Kind: KindStart})
	for i, n := range eg.Nodes {
		id := n.ID
		if id == engine.End {
			g.Nodes = append(g.Nodes, Node{ID: End, Label: "end", Kind: KindEnd})
			continue
		}
		order[id] = i
		node := Node{ID: id, Label: n.Title, Kind: KindStep}
		if n.Gate != "" {
			node.Kind, node.Detail = KindGate, "checkpoint · "+strings.ReplaceAll(string(n.Gate), "_", " ")
		}
		g.Nodes = append(g.Nodes, node)
		if n.Entry {
			g.Edges = append(g.Edges, Edge{From: Start, To: id, Key: "entry"})
		}
	}
	type pair struct{ from, to string }
	var pairs []pair
	outcomes := map[pair][]string{}
	leaving := map[string]int{}
	for _, e := range eg.Edges {
		to := e.To
		if to == engine.End {
			to = End
		}
		p := pair{e.From, to}
		if _, ok := outcomes[p]; !ok {
			pairs = append(pairs, p)
		}
		outcomes[p] = append(outcomes[p], e.Outcome)
		leaving[e.From]++
	}
	for _, p := range pairs {
		outs := outcomes[p]
		e := Edge{From: p.from, To: p.to, Key: strings.Join(outs, ","), Label: strings.Join(outs, ", ")}
		if leaving[p.from] == 1 && outs[0] == string(engine.OK) {
			e.Label = ""
		}
		if j, ok := order[p.to]; ok && j <= order[p.from] {
			e.Back = true
			for _, o := range outs {
				if o == string(engine.Iterate) && w.MaxIterations > 0 {
					e.Limit = strconv.Itoa(w.MaxIterations)
				}
			}
		}
		g.Edges = append(g.Edges, e)
	}
	return g
}
