package flow

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
)

// begin is how every stage starts: its env, its condition (false: the
// stage is skipped, and does not count as run), then its max_iterations
// (used up: the stage stops and follows on_error.then). The update it
// returns counts the run; it commits only with the stage's transition.
func (c *compiler) begin(s *def.Stage, sc engine.StepContext) (env map[string]any, u engine.Update, skip bool, err error) {
	env, err = c.env(sc.Params, sc.State)
	if err != nil {
		return nil, nil, false, err
	}
	if s.Condition.Src != "" {
		ok, err := c.evalBool(s.Condition.Src, env)
		if err != nil {
			return nil, nil, false, fmt.Errorf("condition: %w", err)
		}
		if !ok {
			return env, nil, true, nil
		}
	}
	n, err := count(sc.State, visitsKey+s.ID)
	if err != nil {
		return nil, nil, false, err
	}
	if s.MaxIterations.Set() {
		limit, err := c.limit(s.MaxIterations, env)
		if err != nil {
			return nil, nil, false, err
		}
		if n >= limit {
			return nil, nil, false, engine.Stop(fmt.Errorf("stage %q has run %d times, its max_iterations", s.ID, n), retry(s).Then)
		}
	}
	u = engine.Update{}
	if err := u.Set(visitsKey+s.ID, n+1); err != nil {
		return nil, nil, false, err
	}
	return env, u, false, nil
}

// workStep is a skill, action, set, delay or webhook stage: begin (its
// condition, its max_iterations, its visit counted in u), then body, with
// the transitions and retry policy every such stage has.
func (c *compiler) workStep(s *def.Stage, next string, body func(ctx context.Context, sc engine.StepContext, env map[string]any, u engine.Update) (engine.Outcome, engine.Update, error)) engine.StepDef {
	h := func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		env, u, skip, err := c.begin(s, sc)
		if err != nil {
			return "", nil, err
		}
		if skip {
			return engine.Skip, nil, nil
		}
		return body(ctx, sc, env, u)
	}
	return engine.StepDef{ID: s.ID, Handler: h, Next: c.transitions(s, target(s.OnComplete, next), next), Retry: retry(s),
		Postconditions: c.postconditions(s)}
}

// postconditions compiles a stage's postconditions into the engine's:
// each is evaluated on the run's state with the stage's update applied,
// before the commit, so a false one (or one that cannot be evaluated)
// fails the attempt and nothing the stage wrote is kept.
func (c *compiler) postconditions(s *def.Stage) []engine.Condition {
	var out []engine.Condition
	for _, x := range s.Postconditions {
		c.compile(x.Src, x.Pos, s.ID)
		out = append(out, engine.Condition{Name: x.Src, Message: "false after the stage's update; nothing it wrote is kept",
			Check: func(sc engine.StepContext) bool {
				env, err := c.env(sc.Params, sc.State)
				if err != nil {
					return false
				}
				ok, err := c.evalBool(x.Src, env)
				return err == nil && ok
			}})
	}
	return out
}

func (c *compiler) skillStep(s *def.Stage, next string, skill Skill) engine.StepDef {
	return c.workStep(s, next, func(ctx context.Context, sc engine.StepContext, env map[string]any, u engine.Update) (engine.Outcome, engine.Update, error) {
		with, err := c.fields(s.With, env)
		if err != nil {
			return "", nil, fmt.Errorf("with %w", err)
		}
		outs := map[string]map[string]any{}
		for id, o := range env["outputs"].(map[string]any) {
			outs[id] = o.(map[string]any)
		}
		in := Input{RunID: sc.RunID, Stage: s.ID, With: with,
			Params: env["params"].(map[string]any), Context: env["context"].(map[string]any), Outputs: outs,
			Attempt: sc.Attempt, PrevError: sc.PrevError, Progress: sc.Progress}
		run, done := ctx, StageDone(nil)
		if c.scope != nil {
			run, done = c.scope(ctx, sc)
		}
		if s.Timeout > 0 {
			var cancel context.CancelFunc
			run, cancel = context.WithTimeout(run, s.Timeout)
			defer cancel()
		}
		out, err := skill(run, in)
		if err != nil {
			if ctx.Err() == nil && errors.Is(run.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("timed out after %s: %w", s.Timeout, err)
			}
			return "", nil, failed(done, err)
		}
		for _, o := range s.Outputs {
			if v, ok := out[o.Name]; o.Required && (!ok || v == nil) {
				return "", nil, failed(done, fmt.Errorf("skill %s gave no %q, a required output", s.Skill, o.Name))
			}
		}
		if out == nil {
			out = map[string]any{}
		}
		if err := u.Set(outputsKey+s.ID, out); err != nil {
			return "", nil, err
		}
		if done != nil {
			if err := done(u, nil); err != nil {
				return "", nil, err
			}
		}
		return engine.OK, u, nil
	})
}

// failed is a skill stage's error with what its scope's done keeps of the
// failed call (engine.KeepOnFailure); when done cannot say, the error
// alone, since the stage failed anyway.
func failed(done StageDone, err error) error {
	if done == nil {
		return err
	}
	kept := engine.Update{}
	if done(kept, err) != nil {
		return err
	}
	return engine.KeepOnFailure(err, kept)
}

// setStep assigns context values in file order; each expression sees the
// values assigned before it.
func (c *compiler) setStep(s *def.Stage, next string) engine.StepDef {
	return c.workStep(s, next, func(ctx context.Context, sc engine.StepContext, env map[string]any, u engine.Update) (engine.Outcome, engine.Update, error) {
		cx := env["context"].(map[string]any)
		for _, f := range s.Set {
			src, _ := f.Value.(string)
			v, err := c.eval(src, env)
			if err != nil {
				return "", nil, fmt.Errorf("set %s: %w", f.Key, err)
			}
			cx[f.Key] = v
			if err := u.Set(contextKey+f.Key, v); err != nil {
				return "", nil, err
			}
		}
		return engine.OK, u, nil
	})
}
