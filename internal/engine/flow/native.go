package flow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
)

// Natives are Go steps by name that a skill or action stage may name like
// a Skill. Unlike a Skill, a native reads and writes the run's State
// itself (it is an engine.Handler), as steps of a workflow written in Go
// do; so a workflow written in Go becomes a file without changing what
// its runs store. Its stage takes no with or outputs.
type Natives map[string]engine.Handler

// Names lists the registered names in order, for def.Options.Skills.
func (n Natives) Names() []string {
	return slices.Sorted(maps.Keys(n))
}

// Form is a gate written in Go with its own form (the search's strategy
// and review checkpoints). A gate stage names it by form; the stage's
// options route the gate's outcomes, by the names given here.
type Form struct {
	Gate *engine.Gate
	// Outcomes are what the gate's decisions return, by name (approve:
	// engine.OK, …). def.FormSkip names engine.Skip for every form.
	Outcomes map[string]engine.Outcome
}

// Forms are the registered forms by name.
type Forms map[string]Form

// Outcomes lists each form's outcome names, in order, for
// def.Options.Forms.
func (f Forms) Outcomes() map[string][]string {
	out := make(map[string][]string, len(f))
	for name, form := range f {
		names := slices.Collect(maps.Keys(form.Outcomes))
		sort.Strings(names)
		out[name] = names
	}
	return out
}

// nativeStep compiles a skill stage whose skill is native. The handler
// runs as it is, so the step stores what a Go step would; a condition or
// max_iterations (counted as for every stage) and a timeout wrap it when
// the file sets them. It has no skip transition unless it has a
// condition: the stages after a native need what it writes, so a person
// cannot skip it at an escalation.
func (c *compiler) nativeStep(s *def.Stage, next string, h engine.Handler) engine.StepDef {
	if len(s.With) > 0 || len(s.Outputs) > 0 {
		c.errorf(s.Pos, s.ID, "skill %q works on the run's state: with and outputs do not apply", s.Skill)
	}
	n := engine.Next{engine.OK: target(s.OnComplete, next)}
	if s.Condition.Src != "" {
		n[engine.Skip] = target(s.SkipTo, next)
	}
	if s.OnError != nil && s.OnError.Then.Action == def.ThenGoto {
		declare(n, target(s.OnError.Then.Goto, def.Complete))
	}
	step := engine.StepDef{ID: s.ID, Title: s.Title, Handler: h, Next: n, Retry: retry(s), Postconditions: c.postconditions(s),
		ReadBacks: c.reads[s.Skill]}
	if s.Condition.Src == "" && !s.MaxIterations.Set() && s.Timeout <= 0 {
		return step
	}
	step.Handler = func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		var pre engine.Update
		if s.Condition.Src != "" || s.MaxIterations.Set() {
			_, u, skip, err := c.begin(s, sc)
			if err != nil {
				return "", nil, err
			}
			if skip {
				return engine.Skip, nil, nil
			}
			pre = u
		}
		run := ctx
		if s.Timeout > 0 {
			var cancel context.CancelFunc
			run, cancel = context.WithTimeout(ctx, s.Timeout)
			defer cancel()
		}
		o, u, err := h(run, sc)
		if err != nil {
			if ctx.Err() == nil && errors.Is(run.Err(), context.DeadlineExceeded) {
				return "", nil, fmt.Errorf("timed out after %s: %w", s.Timeout, err)
			}
			return "", nil, err
		}
		if len(pre) > 0 {
			if u == nil {
				u = engine.Update{}
			}
			for k, v := range pre {
				if _, ok := u[k]; !ok {
					u[k] = v
				}
			}
		}
		return o, u, nil
	}
	return step
}

// formStep compiles a gate with a form: the registered gate asks, and
// each option maps one of its outcomes to a stage. Its iterate is the
// engine's (one count per run, which the workflow's MaxIterations and the
// max_iterations parameter bound, see formBound); on_fail.then.goto is
// where iterate goes once the bound is reached.
func (c *compiler) formStep(s *def.Stage, f Form) (engine.StepDef, bool) {
	if f.Gate == nil {
		c.errorf(s.Pos, s.ID, "form %q has no gate", s.Form)
		return engine.StepDef{}, false
	}
	n := engine.Next{}
	for _, o := range s.Options {
		oc, ok := f.Outcomes[o.Label]
		if o.Label == def.FormSkip {
			oc, ok = engine.Skip, true
		}
		if !ok {
			c.errorf(o.Pos, s.ID, "form %s has no outcome %q", s.Form, o.Label)
			continue
		}
		n[oc] = target(o.Next, def.Complete)
	}
	if s.OnError != nil && s.OnError.Then.Action == def.ThenGoto {
		declare(n, target(s.OnError.Then.Goto, def.Complete))
	}
	step := engine.StepDef{ID: s.ID, Title: s.Title, Gate: f.Gate, Next: n, Retry: retry(s)}
	if fl := s.OnFail; fl != nil {
		if fl.Then.Action == def.ThenGoto {
			step.Exit = target(fl.Then.Goto, def.Complete)
		}
		if fl.MaxIterations.Set() {
			c.formBound(s, fl.MaxIterations)
		}
	}
	return step, true
}

// formBound sets the workflow's MaxIterations from a form gate's
// on_fail.max_iterations: a number, or the max_iterations parameter's
// default (a run's own value then overrides it, as the engine reads that
// parameter).
func (c *compiler) formBound(s *def.Stage, l def.Limit) {
	n := l.N
	if l.Expr != "" {
		for _, p := range c.d.Params {
			if p.Name == engine.MaxIterationsParam && p.Type == def.ParamInt {
				d, _ := p.Default.(int64)
				n = int(d)
			}
		}
		if n < 1 {
			c.errorf(l.Pos, s.ID, "on_fail.max_iterations %s needs an int parameter max_iterations with a default of at least 1", l.Expr)
			return
		}
	}
	if c.maxIterations != 0 && c.maxIterations != n {
		c.errorf(l.Pos, s.ID, "gates with a form share the run's iteration bound: on_fail.max_iterations must be the same at every one")
		return
	}
	c.maxIterations = n
}
