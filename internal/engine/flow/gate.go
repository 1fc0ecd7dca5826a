package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// CheckCondition is the type of a gate check that evaluates one of the
// gate's conditions (engine.GateCheck.Type; its Config is the source).
const CheckCondition = "condition"

// KindGate is the checkpoint kind of a definition's gate: the person picks
// one of the gate's options.
const KindGate engine.CheckpointKind = "gate"

// GatePayload is what a gate shows: its options, the context keys it
// lists, and its conditions' results.
type GatePayload struct {
	Stage   string         `json:"stage"`
	Options []GateOption   `json:"options"`
	Context map[string]any `json:"context,omitempty"`
	Checks  []Check        `json:"checks,omitempty"`
	// Approval is set at a gate several people decide.
	Approval *GateApproval `json:"approval,omitempty"`
}

// GateApproval is a gate's approval rule as its form and the API show it.
type GateApproval struct {
	Count int `json:"count"`
	Of    int `json:"of,omitempty"`
	// Voters are the people the gate names, when it does.
	Voters []string `json:"voters,omitempty"`
	// From is the least project role a voter holds ("owner",
	// "reviewer"; "" for any); NoSelf refuses the run's starter.
	From    string   `json:"from,omitempty"`
	NoSelf  bool     `json:"no_self_approval,omitempty"`
	Options []string `json:"options"`
}

// Rule is the engine's rule for the approval, for counting votes shown
// from a stored checkpoint.
func (a GateApproval) Rule(options []GateOption) engine.Approval {
	r := engine.Approval{Count: a.Count, Of: a.Of, Voters: a.Voters, From: a.From, NoSelf: a.NoSelf, Pass: a.Options}
	for _, o := range options {
		if !slices.Contains(a.Options, o.Label) {
			r.Fail = append(r.Fail, o.Label)
		}
	}
	return r
}

// GateOption is one choice, as the form draws it.
type GateOption struct {
	Label         string `json:"label"`
	Next          string `json:"next"` // a stage id or "complete"
	RequiresInput bool   `json:"requires_input,omitempty"`
}

// CheckpointKind implements engine.Payload.
func (GatePayload) CheckpointKind() engine.CheckpointKind { return KindGate }

// Choice is what a person picks at a gate: an option's label and, when
// the option requires it, some input. It travels as the decision's
// RevisedData, so decisions keep their one storage shape.
type Choice struct {
	Option string `json:"option"`
	Input  string `json:"input,omitempty"`
}

// Choose builds the decision that picks option (by label) at a gate.
func Choose(option, input, by string) engine.Decision {
	b, _ := json.Marshal(Choice{Option: option, Input: input}) // two strings always encode
	return engine.Decision{Action: engine.Approve, RevisedData: b, DecidedBy: by}
}

// gateStep compiles a gate. Its conditions are checked by the engine
// gate's Precheck at every visit (and recorded under checks.<id>); a gate
// without options is decided there, one with options then asks a person,
// whose choice picks the next stage.
func (c *compiler) gateStep(s *def.Stage, next string) engine.StepDef {
	var n engine.Next
	if len(s.Options) == 0 {
		n = c.transitions(s, target(s.OnPass, next), next)
	} else {
		n = c.transitions(s, "", next)
		for _, o := range s.Options {
			declare(n, target(o.Next, def.Complete))
		}
	}
	if f := s.OnFail; f != nil {
		if f.Goto.ID != "" {
			declare(n, target(f.Goto, def.Complete))
		}
		if f.Then.Action == def.ThenGoto {
			declare(n, target(f.Then.Goto, def.Complete))
		}
	}
	g := &engine.Gate{
		Kind: KindGate,
		Precheck: func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, bool, error) {
			return c.precheck(s, sc)
		},
		Payload: func(ctx context.Context, sc engine.StepContext) (engine.Payload, error) { return c.payload(s, sc) },
		Validate: func(sc engine.StepContext, cp engine.Checkpoint, d engine.Decision) error {
			_, _, err := choice(s, d)
			return err
		},
		Apply: func(ctx context.Context, sc engine.StepContext, cp engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			return c.apply(s, sc, d)
		},
	}
	if s.Approval != nil {
		g.Approval = approval(s)
	}
	if s.Timeout > 0 || len(s.Notify) > 0 {
		g.Timeout = c.timeout(s)
		if o := s.OnTimeout; o != nil && o.Then.Action == def.ThenGoto {
			declare(n, target(o.Then.Goto, def.Complete))
		}
	}
	if len(s.Options) > 0 {
		// Without a checkpoint handler (tests, simulations) nobody is
		// asked: the first option is taken.
		g.Auto = engine.Goto(target(s.Options[0].Next, def.Complete))
	}
	return engine.StepDef{ID: s.ID, Gate: g, Next: n, Retry: retry(s)}
}

// timeout is the engine's timer for a gate with timeout, on_timeout
// and notify: the default is a Choice like a person's, by
// engine.TimeoutBy.
func (c *compiler) timeout(s *def.Stage) *engine.GateTimeout {
	gt := &engine.GateTimeout{After: s.Timeout,
		Choose: func(option string) engine.Decision { return Choose(option, "", engine.TimeoutBy) }}
	if o := s.OnTimeout; o != nil {
		gt.Default, gt.Extend, gt.MaxExtensions, gt.Then = o.Default, o.Extend, o.MaxExtensions, then(o.Then)
	}
	for _, n := range s.Notify {
		gt.Targets = append(gt.Targets, engine.NoticeTarget{Webhook: n.Webhook, Email: n.Email})
	}
	if c.notify != nil {
		gt.Notify = c.notify.Notify
	}
	return gt
}

// approval is the engine's rule for a gate several people decide: a
// vote is a Choice, and the votes' resolution is one too.
func approval(s *def.Stage) *engine.Approval {
	a := &engine.Approval{Count: s.Approval.Count, Of: s.Approval.Of, Voters: s.Approval.Voters, From: s.Approval.From, NoSelf: s.Approval.NoSelf, Pass: s.Approval.Options,
		Choice: func(d engine.Decision) (string, string) {
			var ch Choice
			_ = json.Unmarshal(d.RevisedData, &ch) // validated before it is counted
			return ch.Option, ch.Input
		},
		Decision: func(option, input, by, note string) engine.Decision {
			d := Choose(option, input, by)
			d.Note = note
			return d
		},
	}
	for _, o := range s.Options {
		if !slices.Contains(a.Pass, o.Label) {
			a.Fail = append(a.Fail, o.Label)
		}
	}
	return a
}

func (c *compiler) precheck(s *def.Stage, sc engine.StepContext) (engine.Outcome, engine.Update, bool, error) {
	env, u, skip, err := c.begin(s, sc)
	if err != nil {
		return "", nil, false, err
	}
	if skip {
		return engine.Skip, nil, true, nil
	}
	checks := make([]Check, 0, len(s.Conditions))
	for _, x := range s.Conditions {
		ok, err := c.evalBool(x.Src, env)
		ch := Check{Condition: x.Src, Passed: err == nil && ok}
		rec := engine.GateCheck{Type: CheckCondition, Config: x.Src, Passed: ch.Passed, Result: json.RawMessage("null")}
		if err != nil {
			ch.Error = err.Error()
			rec.Error = ch.Error
		} else if ok {
			rec.Result = json.RawMessage("true")
		} else {
			rec.Result = json.RawMessage("false")
		}
		checks = append(checks, ch)
		sc.Check(rec)
	}
	if len(checks) > 0 {
		if err := u.Set(checksKey+s.ID, checks); err != nil {
			return "", nil, false, err
		}
	}
	for _, ch := range checks {
		if !ch.Passed {
			o, err := c.failed(s, sc, env, u, ch)
			return o, u, true, err
		}
	}
	if len(s.Options) == 0 {
		return engine.OK, u, true, nil
	}
	return "", u, false, nil
}

// failed is where a gate whose condition does not hold sends the run:
// back by on_fail.goto while its max_iterations allows (setting
// on_fail.context), else on_fail.then (by default the run fails).
func (c *compiler) failed(s *def.Stage, sc engine.StepContext, env map[string]any, u engine.Update, ch Check) (engine.Outcome, error) {
	why := fmt.Sprintf("gate %q: condition %q does not hold", s.ID, ch.Condition)
	if ch.Error != "" {
		why = fmt.Sprintf("gate %q: condition %q could not be checked: %s", s.ID, ch.Condition, ch.Error)
	}
	f := s.OnFail
	if f == nil {
		return "", engine.Stop(errors.New(why), engine.Fail)
	}
	setContext := func() error {
		vals, err := c.fields(f.Context, env)
		if err != nil {
			return fmt.Errorf("on_fail.context %w", err)
		}
		for k, v := range vals {
			if err := u.Set(contextKey+k, v); err != nil {
				return err
			}
		}
		return nil
	}
	if f.Goto.ID != "" {
		ok, n, err := c.loop(s, sc, env, u)
		if err != nil {
			return "", err
		}
		if ok {
			return engine.Goto(target(f.Goto, def.Complete)), setContext()
		}
		why += fmt.Sprintf(", and the gate has sent the run back %d times, its max_iterations", n)
	}
	o, err := exhausted(f.Then, why)
	if err == nil {
		err = setContext()
	}
	return o, err
}

// exhausted takes a Then once a gate may not loop again: a goto is an
// ordinary transition; fail and escalate stop the step.
func exhausted(t def.Then, why string) (engine.Outcome, error) {
	o := then(t)
	if _, ok := o.GotoTarget(); ok {
		return o, nil
	}
	return "", engine.Stop(errors.New(why), o)
}

// loop counts one more time the gate sends the run back, unless its
// on_fail.max_iterations is used up (ok false, n the times so far).
func (c *compiler) loop(s *def.Stage, sc engine.StepContext, env map[string]any, u engine.Update) (ok bool, n int, err error) {
	n, err = count(sc.State, loopsKey+s.ID)
	if err != nil {
		return false, 0, err
	}
	if f := s.OnFail; f != nil && f.MaxIterations.Set() {
		limit, err := c.limit(f.MaxIterations, env)
		if err != nil {
			return false, n, err
		}
		if n >= limit {
			return false, n, nil
		}
	}
	return true, n, u.Set(loopsKey+s.ID, n+1)
}

func (c *compiler) payload(s *def.Stage, sc engine.StepContext) (engine.Payload, error) {
	p := GatePayload{Stage: s.ID}
	for _, o := range s.Options {
		next := o.Next.ID
		if next == "" {
			next = def.Complete
		}
		p.Options = append(p.Options, GateOption{Label: o.Label, Next: next, RequiresInput: o.RequiresInput})
	}
	if a := s.Approval; a != nil {
		p.Approval = &GateApproval{Count: a.Count, Of: a.Of, Voters: a.Voters, From: a.From, NoSelf: a.NoSelf, Options: a.Options}
	}
	if len(s.ContextKeys) > 0 {
		cx, err := Context(sc.State)
		if err != nil {
			return nil, err
		}
		p.Context = map[string]any{}
		for _, k := range s.ContextKeys {
			p.Context[k] = cx[k]
		}
	}
	checks, err := Checks(sc.State, s.ID)
	if err != nil {
		return nil, err
	}
	p.Checks = checks
	return p, nil
}

// choice finds the option a decision picks; a missing or unknown option,
// or missing input the option requires, is refused before it is recorded.
func choice(s *def.Stage, d engine.Decision) (def.Option, Choice, error) {
	var ch Choice
	if len(d.RevisedData) > 0 {
		if err := json.Unmarshal(d.RevisedData, &ch); err != nil {
			return def.Option{}, ch, fault.Errorf(fault.EInvalid, "gate %q: the decision must name an option: %v", s.ID, err)
		}
	}
	labels := make([]string, 0, len(s.Options))
	for _, o := range s.Options {
		if o.Label != ch.Option {
			labels = append(labels, fmt.Sprintf("%q", o.Label))
			continue
		}
		if o.RequiresInput && strings.TrimSpace(ch.Input) == "" {
			return o, ch, fault.Errorf(fault.EInvalid, "gate %q: option %q needs input", s.ID, o.Label)
		}
		return o, ch, nil
	}
	return def.Option{}, ch, fault.Errorf(fault.EInvalid, "gate %q: choose one of its options (%s), not %q", s.ID, strings.Join(labels, ", "), ch.Option)
}

// apply follows the chosen option, recording it as outputs.<gate>
// (option, input, decided_by). An option going back (to the gate or a
// stage before it) counts against on_fail.max_iterations; once it is used
// up, on_fail.then applies instead.
func (c *compiler) apply(s *def.Stage, sc engine.StepContext, d engine.Decision) (engine.Outcome, engine.Update, error) {
	o, ch, err := choice(s, d)
	if err != nil {
		return "", nil, err
	}
	u := engine.Update{}
	if err := u.Set(outputsKey+s.ID, map[string]any{"option": ch.Option, "input": ch.Input, "decided_by": d.DecidedBy}); err != nil {
		return "", nil, err
	}
	to := target(o.Next, def.Complete)
	if c.backward(s, to) {
		env, err := c.env(sc.Params, sc.State)
		if err != nil {
			return "", nil, err
		}
		ok, n, err := c.loop(s, sc, env, u)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			why := fmt.Sprintf("gate %q: option %q goes back to %q, and the gate has sent the run back %d times, its max_iterations", s.ID, o.Label, to, n)
			out, err := exhausted(s.OnFail.Then, why)
			return out, u, err
		}
	}
	return engine.Goto(to), u, nil
}

// backward reports whether going to `to` from gate s goes back: to the
// gate itself or a stage before it in the file.
func (c *compiler) backward(s *def.Stage, to string) bool {
	i, ok := c.index[to]
	return ok && i <= c.index[s.ID]
}
