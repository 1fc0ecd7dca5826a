package def

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"quarry/internal/fault"
)

// Need is one value a run started at a stage must be given: a context key
// ("context.<key>") or a stage's output ("outputs.<stage>.<name>", or
// "outputs.<stage>" when an expression reads the whole output), with the
// first stage that reads it.
type Need struct {
	Key   string
	Stage string
}

// Needs lists what a run started at stage from must be given, derived
// from the expressions and templates of the stages it may reach: every
// context key and stage output one of them reads before a stage on the
// way would have written it (a set stage its context keys, a gate's
// on_fail its context, a skill, webhook, gate with options or parallel
// stage its outputs). The initial context counts as written; params are
// always there. What a Go skill reads from its Input beyond its `with` is
// not visible here. A stage that is not a top-level stage is an
// fault.EInvalid error on the field "from".
func (d *Definition) Needs(from string) ([]Need, error) {
	idx := map[string]int{}
	for i, s := range d.Stages {
		idx[s.ID] = i
	}
	start, ok := idx[from]
	if !ok {
		for _, s := range d.Stages {
			for _, b := range s.Branches {
				for _, bs := range b.Stages {
					if bs.ID == from {
						return nil, fieldError("from", fmt.Sprintf("stage %q is inside the parallel stage %q: start at %q", from, s.ID, s.ID))
					}
				}
			}
		}
		ids := make([]string, len(d.Stages))
		for i, s := range d.Stages {
			ids[i] = s.ID
		}
		return nil, fieldError("from", fmt.Sprintf("workflow %s has no stage %q (its stages: %s)", d.Metadata.Name, from, strings.Join(ids, ", ")))
	}
	reads := make([][]string, len(d.Stages))
	writes := make([][]string, len(d.Stages))
	for i, s := range d.Stages {
		reads[i], writes[i] = stageReads(s), stageWrites(s)
	}
	written := map[string]bool{}
	for _, f := range d.Context {
		written["context."+f.Key] = true
	}
	// Walk every path from the start, carrying what was written on it;
	// a (stage, written) pair seen before adds nothing, so loops end.
	needs := map[string]string{}
	seen := map[string]bool{}
	var walk func(i int, w map[string]bool)
	walk = func(i int, w map[string]bool) {
		key := fmt.Sprint(i, sortedKeys(w))
		if seen[key] {
			return
		}
		seen[key] = true
		s := d.Stages[i]
		for _, r := range reads[i] {
			if !isWritten(r, w) {
				if _, ok := needs[r]; !ok {
					needs[r] = s.ID
				}
			}
		}
		after := w
		if len(writes[i]) > 0 {
			after = make(map[string]bool, len(w)+len(writes[i]))
			for k := range w {
				after[k] = true
			}
			for _, k := range writes[i] {
				after[k] = true
			}
		}
		next := Complete
		if i+1 < len(d.Stages) {
			next = d.Stages[i+1].ID
		}
		for _, e := range edges(s, next) {
			j, ok := idx[e.to]
			if !ok {
				continue // complete
			}
			// A skipped or failed stage wrote nothing.
			if strings.HasPrefix(e.key, "skip_to") || strings.HasPrefix(e.key, "on_error") {
				walk(j, w)
			} else {
				walk(j, after)
			}
		}
	}
	walk(start, written)
	out := make([]Need, 0, len(needs))
	for k, st := range needs {
		out = append(out, Need{Key: k, Stage: st})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out, nil
}

func fieldError(field, msg string) error {
	return &fault.Error{Code: fault.EInvalid, Message: msg, Fields: map[string]string{field: msg}}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isWritten reports whether a read is satisfied by what was written: an
// output's name by its stage's outputs.
func isWritten(read string, w map[string]bool) bool {
	if w[read] {
		return true
	}
	if rest, ok := strings.CutPrefix(read, "outputs."); ok {
		stage, _, _ := strings.Cut(rest, ".")
		return w["outputs."+stage]
	}
	return false
}

// stageWrites is what a stage that ran to its end wrote.
func stageWrites(s *Stage) []string {
	var out []string
	switch s.Type {
	case TypeSet:
		for _, f := range s.Set {
			out = append(out, "context."+f.Key)
		}
	case TypeSkill, TypeAction, TypeWebhook:
		out = append(out, "outputs."+s.ID)
	case TypeGate:
		if len(s.Options) > 0 {
			out = append(out, "outputs."+s.ID)
		}
		if s.OnFail != nil {
			for _, f := range s.OnFail.Context {
				out = append(out, "context."+f.Key)
			}
		}
	case TypeParallel:
		out = append(out, "outputs."+s.ID)
		for _, b := range s.Branches {
			for _, bs := range b.Stages {
				out = append(out, "outputs."+bs.ID)
			}
		}
	}
	return out
}

// stageReads is every context key and output a stage's expressions and
// templates read (a parallel stage's: its branches' too, less what they
// write themselves).
func stageReads(s *Stage) []string {
	set := map[string]bool{}
	addRefs(set, s.exprs)
	for _, k := range s.ContextKeys {
		set["context."+k] = true
	}
	if s.Type == TypeParallel {
		own := map[string]bool{}
		for _, b := range s.Branches {
			if b.Condition.Src != "" {
				addRefs(set, []exprRef{{src: b.Condition.Src, kind: exprBool}})
			}
			for _, bs := range b.Stages {
				for _, r := range stageReads(bs) {
					set[r] = true
				}
				for _, w := range stageWrites(bs) {
					own[w] = true
				}
			}
		}
		for r := range set {
			if isWritten(r, own) {
				delete(set, r)
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func addRefs(set map[string]bool, refs []exprRef) {
	for _, ref := range refs {
		if ref.params {
			continue
		}
		srcs := []string{ref.src}
		if ref.kind == exprTemplate || ref.kind == exprInt {
			srcs, _ = templates(ref.src)
		}
		for _, src := range srcs {
			tree, err := parser.Parse(src)
			if err != nil {
				continue
			}
			r := &readCollector{set: map[string]bool{}}
			ast.Walk(&tree.Node, r)
			for k := range r.set {
				// outputs.s.n says more than outputs.s of the same chain.
				if strings.Count(k, ".") == 1 && strings.HasPrefix(k, "outputs.") && r.named[k] {
					continue
				}
				set[k] = true
			}
		}
	}
}

// readCollector finds context.<key>, outputs.<stage> and
// outputs.<stage>.<name> in an expression.
type readCollector struct {
	set   map[string]bool
	named map[string]bool // outputs.<stage> read by name
}

func (r *readCollector) Visit(node *ast.Node) {
	n, ok := (*node).(*ast.MemberNode)
	if !ok {
		return
	}
	prop, ok := n.Property.(*ast.StringNode)
	if !ok {
		return
	}
	switch inner := n.Node.(type) {
	case *ast.IdentifierNode:
		switch inner.Value {
		case "context":
			r.set["context."+prop.Value] = true
		case "outputs":
			r.set["outputs."+prop.Value] = true
		}
	case *ast.MemberNode:
		id, ok := inner.Node.(*ast.IdentifierNode)
		stage, ok2 := inner.Property.(*ast.StringNode)
		if ok && ok2 && id.Value == "outputs" {
			r.set["outputs."+stage.Value+"."+prop.Value] = true
			if r.named == nil {
				r.named = map[string]bool{}
			}
			r.named["outputs."+stage.Value] = true
		}
	}
}
