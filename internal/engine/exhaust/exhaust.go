// Package exhaust tests workflows exhaustively: it derives a small domain
// of values from each declared parameter (the engine's Param metadata),
// enumerates the combinations, sampling them when the product is larger
// than a budget, and checks a finished run against the invariants every
// workflow must keep whatever its parameters and decisions: it completes,
// its iterations stay bounded and grow by one per loop, and every move in
// its audit trail is an edge of its graph (so gates come in their order).
package exhaust

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"quarry/internal/engine"
)

// Options say how domains are derived and how many combinations run.
type Options struct {
	// Constants give a value to params whose domain cannot be derived
	// (free text without a default, such as a question).
	Constants map[string]any
	// MaxSpan: an int param bounded to at most this many values takes
	// each of them; a wider one takes its min, default and max.
	MaxSpan int
	// Budget bounds the combinations run; a larger product is sampled,
	// with Seed, so a run of the suite is repeatable.
	Budget int
	Seed   uint64
}

// Domain is the values tried for p: both booleans; each choice (and, for
// a list, the default list too); a bounded int's every value or its
// bounds and default; a float's bounds and default; otherwise the
// constant given, else the default, else the type's zero value.
func Domain(p engine.Param, o Options) []any {
	if v, ok := o.Constants[p.Name]; ok {
		return []any{v}
	}
	var out []any
	add := func(v any) {
		for _, x := range out {
			if fmt.Sprint(x) == fmt.Sprint(v) {
				return
			}
		}
		out = append(out, v)
	}
	switch p.Type {
	case engine.ParamBool:
		return []any{false, true}
	case engine.ParamInt:
		if p.Min != nil && p.Max != nil && int(*p.Max-*p.Min)+1 <= max(o.MaxSpan, 1) {
			for v := int(*p.Min); v <= int(*p.Max); v++ {
				add(v)
			}
			return out
		}
		for _, b := range []*float64{p.Min, number(p.Default), p.Max} {
			if b != nil && !math.IsInf(*b, 0) {
				add(int(*b))
			}
		}
	case engine.ParamFloat:
		for _, b := range []*float64{p.Min, number(p.Default), p.Max} {
			if b != nil {
				add(*b)
			}
		}
	case engine.ParamString:
		for _, c := range p.Choices {
			add(c)
		}
		if len(out) == 0 && p.Default != nil {
			add(p.Default)
		}
	case engine.ParamStrings:
		for _, c := range p.Choices {
			add([]string{c})
		}
		if p.Default != nil {
			add(p.Default)
		}
	}
	if len(out) == 0 {
		if p.Default != nil {
			return []any{p.Default}
		}
		return []any{zero(p.Type)}
	}
	return out
}

func number(v any) *float64 {
	switch x := v.(type) {
	case int:
		f := float64(x)
		return &f
	case int64:
		f := float64(x)
		return &f
	case float64:
		return &x
	}
	return nil
}

func zero(t engine.ParamType) any {
	switch t {
	case engine.ParamInt:
		return 0
	case engine.ParamFloat:
		return 0.0
	case engine.ParamStrings:
		return []string{}
	}
	return ""
}

// Plan is the combinations to run: every one when Total ≤ Budget, else a
// sample of Budget of them.
type Plan struct {
	Combos  []map[string]any
	Total   int
	Sampled bool
}

// Combinations is the Cartesian product of ps's domains, in declaration
// order, sampled down to o.Budget (when set) without repeats.
func Combinations(ps []engine.Param, o Options) Plan {
	domains := make([][]any, len(ps))
	total := 1
	for i, p := range ps {
		domains[i] = Domain(p, o)
		total *= len(domains[i])
	}
	pick := func(n int) map[string]any {
		m := make(map[string]any, len(ps))
		for i := len(ps) - 1; i >= 0; i-- {
			d := domains[i]
			m[ps[i].Name] = d[n%len(d)]
			n /= len(d)
		}
		return m
	}
	plan := Plan{Total: total}
	idx := make([]int, total)
	for i := range idx {
		idx[i] = i
	}
	if o.Budget > 0 && total > o.Budget {
		r := rand.New(rand.NewPCG(o.Seed, 17))
		r.Shuffle(total, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		idx = idx[:o.Budget]
		slices.Sort(idx)
		plan.Sampled = true
	}
	for _, n := range idx {
		plan.Combos = append(plan.Combos, pick(n))
	}
	return plan
}

// Check reports the first invariant a finished run of w breaks, or nil:
// the run completed; its iteration never exceeds its bound and grows by
// at most one from one record to the next; and each move from one step to
// another in its trail (records in order) is an edge of w's graph.
func Check(w *engine.Workflow, run engine.Run, trail []engine.StepRecord) error {
	if run.Status != engine.StatusCompleted {
		return fmt.Errorf("run ended %s at %q: %s", run.Status, run.Step, run.Error)
	}
	bound := run.Params.Int(engine.MaxIterationsParam)
	if bound <= 0 {
		bound = max(w.MaxIterations, 1)
	}
	if run.Iteration > bound {
		return fmt.Errorf("run reached iteration %d, past its bound %d", run.Iteration, bound)
	}
	edges := map[[2]string]bool{}
	for _, e := range w.Graph().Edges {
		edges[[2]string{e.From, e.To}] = true
	}
	for i := 1; i < len(trail); i++ {
		a, b := trail[i-1], trail[i]
		if b.Iteration < a.Iteration || b.Iteration > a.Iteration+1 {
			return fmt.Errorf("iteration went from %d to %d at %q", a.Iteration, b.Iteration, b.Step)
		}
		if a.Step != b.Step && !edges[[2]string{a.Step, b.Step}] {
			return fmt.Errorf("the run moved from %q to %q, which is not an edge of %s", a.Step, b.Step, w.Name)
		}
	}
	return nil
}
