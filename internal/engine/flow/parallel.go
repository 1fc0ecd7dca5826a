package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
)

// itemKey holds a for_each branch's item in the branch's own state.
const itemKey = "item"

// BranchResult is one branch as outputs.<parallel>.branches.<id> shows it.
type BranchResult struct {
	Status  string                    `json:"status"`
	Outputs map[string]map[string]any `json:"outputs"`
	Error   string                    `json:"error,omitempty"`
}

// parallelStep compiles a parallel stage onto the engine's Fan: each
// branch stage compiles as a top-level stage would (its transitions stay
// in the branch, complete ending the branch), the visit lists the
// branches (one per for_each item; a branch whose condition does not hold
// is skipped), and the join decides from their results.
func (c *compiler) parallelStep(s *def.Stage, next string) (engine.StepDef, bool) {
	fan := &engine.Fan{Steps: map[string]*engine.StepDef{}}
	ok := true
	for _, b := range s.Branches {
		if b.Condition.Src != "" {
			c.compile(b.Condition.Src, b.Condition.Pos, s.ID)
		}
		for i, bs := range b.Stages {
			after := def.Complete
			if i+1 < len(b.Stages) {
				after = b.Stages[i+1].ID
			}
			if bs.Type == def.TypeGate && len(bs.Options) > 0 {
				c.errorf(bs.Pos, bs.ID, "a gate with options cannot be in a parallel branch: a branch cannot ask a person; put the gate after the parallel stage")
				ok = false
				continue
			}
			if bs.Type == def.TypeAction && bs.Action == def.ActionStartWorkflow {
				c.errorf(bs.Pos, bs.ID, "start_workflow cannot be in a parallel branch: a branch cannot start or wait for a run; put it before or after the parallel stage")
				ok = false
				continue
			}
			if bs.OnError != nil && bs.OnError.Then.Action == def.ThenEscalate {
				c.errorf(bs.Pos, bs.ID, "on_error then escalate cannot be in a parallel branch: use fail (the branch fails) or goto a stage of the branch")
				ok = false
				continue
			}
			if bs.OnError != nil && bs.OnError.Resume == def.ResumeAsk {
				c.errorf(bs.Pos, bs.ID, "on_error resume: ask cannot be in a parallel branch: a branch's retry is a scheduled job that survives restarts; put the stage outside the parallel stage")
				ok = false
				continue
			}
			step, sok := c.stage(bs, after)
			if !sok {
				ok = false
				continue
			}
			fan.Steps[bs.ID] = &step
		}
	}
	if s.ForEach.Src != "" {
		c.compile(s.ForEach.Src, s.ForEach.Pos, s.ID)
	}
	if !ok {
		return engine.StepDef{}, false
	}
	fan.Branches = func(ctx context.Context, sc engine.StepContext) (engine.FanOut, error) {
		return c.fanOut(s, sc)
	}
	fan.Join = func(sc engine.StepContext, bs []engine.Branch) (engine.Outcome, engine.Update, bool, error) {
		outcome, u, decided, err := c.join(s, bs)
		if c.gather == nil || (!decided && err == nil) {
			return outcome, u, decided, err
		}
		states := make([]engine.State, 0, len(bs))
		for _, b := range bs {
			states = append(states, b.State)
		}
		g, gerr := c.gather(sc.State, states)
		if gerr != nil {
			return "", nil, false, errors.Join(err, gerr)
		}
		if err != nil {
			return outcome, u, decided, engine.KeepOnFailure(err, g)
		}
		if u == nil {
			u = engine.Update{}
		}
		maps.Copy(u, g)
		return outcome, u, decided, nil
	}
	n := c.transitions(s, target(s.OnComplete, next), next)
	if s.OnAnyReject.ID != "" {
		declare(n, target(s.OnAnyReject, def.Complete))
	}
	if s.OnAllReject.ID != "" {
		declare(n, target(s.OnAllReject, def.Complete))
	}
	return engine.StepDef{ID: s.ID, Fan: fan, Next: n, Retry: retry(s)}, true
}

// fanOut lists a visit's branches: with for_each, the single branch once
// per item (ids <branch>-1, <branch>-2, …), each item in its branch's
// state; else each branch, skipped when its condition does not hold.
func (c *compiler) fanOut(s *def.Stage, sc engine.StepContext) (engine.FanOut, error) {
	env, u, skip, err := c.begin(s, sc)
	if err != nil {
		return engine.FanOut{}, err
	}
	if skip {
		return engine.FanOut{Skip: true}, nil
	}
	var out engine.FanOut
	out.Update = u
	if s.ForEach.Src != "" {
		v, err := c.eval(s.ForEach.Src, env)
		if err != nil {
			return out, fmt.Errorf("for_each: %w", err)
		}
		items, ok := list(v)
		if !ok {
			return out, engine.Stop(fmt.Errorf("for_each %q is %T, not a list", s.ForEach.Src, v), retry(s).Then)
		}
		b := s.Branches[0]
		for i, item := range items {
			st := engine.State{}
			if err := st.Set(itemKey, item); err != nil {
				return out, err
			}
			spec := engine.BranchSpec{ID: fmt.Sprintf("%s-%d", b.ID, i+1), Entry: b.Stages[0].ID, State: st}
			if b.Condition.Src != "" {
				benv := withItem(env, item)
				hold, err := c.evalBool(b.Condition.Src, benv)
				if err != nil {
					return out, fmt.Errorf("branch %s condition: %w", spec.ID, err)
				}
				spec.Skip = !hold
			}
			out.Branches = append(out.Branches, spec)
		}
		return out, nil
	}
	for _, b := range s.Branches {
		spec := engine.BranchSpec{ID: b.ID, Entry: b.Stages[0].ID}
		if b.Condition.Src != "" {
			hold, err := c.evalBool(b.Condition.Src, env)
			if err != nil {
				return out, fmt.Errorf("branch %s condition: %w", b.ID, err)
			}
			spec.Skip = !hold
		}
		out.Branches = append(out.Branches, spec)
	}
	return out, nil
}

// list reads any slice (a list param is []string, JSON gives []any); nil
// is the empty list.
func list(v any) ([]any, bool) {
	if v == nil {
		return nil, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

func withItem(env map[string]any, item any) map[string]any {
	out := make(map[string]any, len(env)+1)
	for k, v := range env {
		out[k] = v
	}
	out[itemKey] = item
	return out
}

// join decides a parallel stage once its next stage no longer depends on
// the branches still open: for every number of successes the open
// branches could still bring, the rule below gives the same answer. So a
// run that crashed and resumed, or whose branches finished in another
// order, goes where an uninterrupted run goes.
//
// The rule, with need = all: every branch that ran, any: 1, N: N:
// successes ≥ need → on_complete; else every branch failed and
// on_all_reject is set → there; else on_any_reject when set; else the
// run fails.
func (c *compiler) join(s *def.Stage, bs []engine.Branch) (engine.Outcome, engine.Update, bool, error) {
	ran, ok, open := 0, 0, 0
	for _, b := range bs {
		switch b.Status {
		case engine.BranchSkipped:
			continue
		case engine.BranchCompleted:
			ok++
		case engine.BranchPending, engine.BranchRunning:
			open++
		}
		ran++
	}
	need := ran
	switch s.Join.Mode {
	case def.JoinAny:
		need = 1
	case def.JoinN:
		need = s.Join.N
	}
	first := c.joinRule(s, ok, ran, need)
	for more := 1; more <= open; more++ {
		if c.joinRule(s, ok+more, ran, need) != first {
			return "", nil, false, nil
		}
	}
	u, err := c.branchOutputs(s, bs, ok, ran)
	if err != nil {
		return "", nil, false, err
	}
	switch first {
	case joinPass:
		return engine.OK, u, true, nil
	case joinAll:
		return engine.Goto(target(s.OnAllReject, def.Complete)), u, true, nil
	case joinAny:
		return engine.Goto(target(s.OnAnyReject, def.Complete)), u, true, nil
	}
	what := fmt.Sprintf("all %d", ran)
	switch s.Join.Mode {
	case def.JoinAny:
		what = "one"
	case def.JoinN:
		what = fmt.Sprintf("%d of %d", need, ran)
	}
	return "", nil, false, engine.Stop(fmt.Errorf("parallel %q needs %s branches to succeed; %d did (failed: %s)",
		s.ID, what, ok, strings.Join(failedIDs(bs), ", ")), retry(s).Then)
}

type joinVerdict int

const (
	joinPass joinVerdict = iota
	joinAll
	joinAny
	joinFail
)

func (c *compiler) joinRule(s *def.Stage, ok, ran, need int) joinVerdict {
	switch {
	case ok >= need:
		return joinPass
	case ok == 0 && s.OnAllReject.ID != "":
		return joinAll
	case s.OnAnyReject.ID != "":
		return joinAny
	}
	return joinFail
}

func failedIDs(bs []engine.Branch) []string {
	var out []string
	for _, b := range bs {
		if b.Status == engine.BranchFailed {
			out = append(out, b.ID)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// branchOutputs is the join's update: outputs.<parallel> holds every
// branch's status, outputs and error and the counts; without for_each
// each branch stage's outputs are also outputs.<stage> (for_each runs a
// stage many times, so its outputs are read per branch).
func (c *compiler) branchOutputs(s *def.Stage, bs []engine.Branch, ok, ran int) (engine.Update, error) {
	u := engine.Update{}
	results := make(map[string]BranchResult, len(bs))
	failed := 0
	for _, b := range bs {
		if b.Status == engine.BranchFailed {
			failed++
		}
		outs, err := Outputs(b.State)
		if err != nil {
			return nil, err
		}
		results[b.ID] = BranchResult{Status: string(b.Status), Outputs: outs, Error: b.Error}
		if s.ForEach.Src != "" {
			continue
		}
		for k, raw := range b.State {
			if strings.HasPrefix(k, outputsKey) {
				u[k] = json.RawMessage(raw)
			}
		}
	}
	err := u.Set(outputsKey+s.ID, map[string]any{
		"branches": results, "succeeded": ok, "failed": failed, "total": ran,
	})
	return u, err
}
