// Package flow compiles a workflow definition file (internal/engine/def)
// into an engine.Workflow, so a definition runs on the durable engine
// exactly like a workflow written in Go: each top-level stage becomes one
// step, its transitions become the step's Next (every target declared,
// so the graph stays data), and what the run knows — params, context,
// outputs — lives in the run's State, committed with each transition.
//
// docs/architecture.md describes the compile rules; docs/workflows.md is
// the format.
package flow

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/expr-lang/expr/vm"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// Skill is a Go handler that skill and action stages call by name. It
// returns the stage's outputs, stored as outputs.<stage>.<name>; an error
// is a failed attempt (retried per the stage's on_error).
type Skill func(ctx context.Context, in Input) (map[string]any, error)

// Skills are the registered handlers by name. main builds the map and
// passes it in, so what a definition may call is visible in one place.
type Skills map[string]Skill

// Names lists the registered names in order, for def.Options.Skills.
func (s Skills) Names() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Input is what a skill sees: its evaluated `with` values and, read-only,
// everything in scope for expressions.
type Input struct {
	RunID string
	Stage string
	// With holds the stage's inputs, templates evaluated.
	With    map[string]any
	Params  map[string]any
	Context map[string]any
	// Outputs holds outputs.<stage>.<name> of the stages run so far.
	Outputs map[string]map[string]any
	// Attempt is 1 for the first try; PrevError is the last attempt's
	// error, so a retry can do better.
	Attempt   int
	PrevError string
	// Progress publishes a progress event for pages watching the run.
	Progress func(message string, data any)
}

// Options are what a definition's stages may call: skill handlers by
// name, the webhook caller and the secrets webhook requests may name.
type Options struct {
	Skills Skills
	// Webhook makes webhook stages' calls; nil means a definition with a
	// webhook stage cannot run.
	Webhook Webhook
	// Secrets are the values `{{ secrets.NAME }}` fills in a webhook's
	// request; they are never stored in the run.
	Secrets map[string]string
	// Natives are Go steps skill stages may name besides Skills; Forms
	// are the gates with their own forms that gate stages name by form.
	Natives Natives
	Forms   Forms
	// ReadBacks are, by native name, postconditions the store checks
	// inside the commit of the native's result (engine.ReadBack).
	ReadBacks map[string][]engine.ReadBack
	// Notifier sends the notices of gates' notify; nil means notices are
	// only recorded.
	Notifier Notifier
	// Actions carry out export, notify and snapshot actions (stages and
	// on_complete / on_error hooks); nil means a definition using one
	// cannot run. ActionAttempts and ActionBackoff are each action's own
	// tries (0: DefaultActionAttempts, DefaultActionBackoff).
	Actions        Actions
	ActionAttempts int
	ActionBackoff  time.Duration
	// Scope prepares each call of a Skill (not of a native, which keeps
	// its own books); nil means the skill runs with the step's context.
	Scope Scope
	// Gather adds what a parallel stage's branches recorded through Scope
	// to the join's update; nil adds nothing.
	Gather Gather
}

// Gather is given the run's state at a parallel stage's join and each
// branch's own state (what its stages wrote, over the run's), and returns
// what the join adds to the run: the branches' counts of what they spent
// (a run's language-model tokens), summed, so a budget holds across
// branches as it does across stages.
type Gather func(run engine.State, branches []engine.State) (engine.Update, error)

// Scope prepares one call of a skill stage: it returns the context the
// skill runs with, carrying what the program's skills record into (a
// run's notes, its language-model meter), and done, which the stage calls
// once the skill returned to add what they recorded to the stage's
// update. The engine knows nothing of what is recorded; the program that
// registers the skills does. A nil done adds nothing.
type Scope func(ctx context.Context, sc engine.StepContext) (context.Context, StageDone)

// StageDone adds to u what a skill stage's call recorded; failed is the
// stage's error, nil when it succeeded. On failure u is committed with
// the failed attempt (engine.KeepOnFailure), whether it is retried or
// not, so done should then add only counts of what the call spent (which
// a retry must start from), never results.
type StageDone func(u engine.Update, failed error) error

// Notice is what a gate's notify is told: the run, workflow, stage and
// event (entered, extended, timed_out), when the gate decides itself,
// and the targets.
type Notice = engine.Notice

// NoticeTarget is one target of a gate's notify: a webhook URL or an
// e-mail address.
type NoticeTarget = engine.NoticeTarget

// Notifier sends a gate's notices. The engine calls it after the commit
// that records the notice, and records whether it was sent or failed
// (with the error), so a notice is never sent for a transition that did
// not happen. Real webhook and e-mail senders are given by the program.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// compiler holds what the steps of one definition share.
type compiler struct {
	d       *def.Definition
	skills  Skills
	natives Natives
	forms   Forms
	reads   map[string][]engine.ReadBack
	webhook Webhook
	notify  Notifier
	actions Actions
	scope   Scope
	gather  Gather
	// actionAttempts and actionBackoff are each built-in action's tries.
	actionAttempts int
	actionBackoff  time.Duration
	secrets        map[string]any
	index          map[string]int         // top-level stage id → position
	stages         []string               // every stage id, branch stages too (outputs.<id>)
	progs          map[string]*vm.Program // compiled expressions by source
	errs           def.Errors
	// maxIterations is the run's iteration bound, set by gates with a form.
	maxIterations int
}

// Compile turns a loaded, valid definition into a workflow the engine runs.
// Stage types it cannot run yet (parallel; webhook without a caller, see
// CompileWith) are reported
// as def.Errors at the stage, inside a fault.EInvalid, as are skills
// missing from skills.
func Compile(d *def.Definition, skills Skills) (*engine.Workflow, error) {
	return CompileWith(d, Options{Skills: skills})
}

// CompileWith is Compile with everything stages may call (Options).
func CompileWith(d *def.Definition, o Options) (*engine.Workflow, error) {
	if d == nil || len(d.Stages) == 0 {
		return nil, fault.Errorf(fault.EInvalid, "flow: the definition has no stages")
	}
	c := &compiler{d: d, skills: o.Skills, natives: o.Natives, forms: o.Forms, reads: o.ReadBacks, webhook: o.Webhook, notify: o.Notifier, actions: o.Actions,
		scope: o.Scope, gather: o.Gather, actionAttempts: o.ActionAttempts, actionBackoff: o.ActionBackoff,
		secrets: map[string]any{}, index: map[string]int{}, progs: map[string]*vm.Program{}}
	if c.actionAttempts <= 0 {
		c.actionAttempts = DefaultActionAttempts
	}
	if o.ActionBackoff == 0 {
		c.actionBackoff = DefaultActionBackoff
	}
	for k, v := range o.Secrets {
		c.secrets[k] = v
	}
	for i, s := range d.Stages {
		c.index[s.ID] = i
		c.stages = append(c.stages, s.ID)
		for _, b := range s.Branches {
			for _, bs := range b.Stages {
				c.stages = append(c.stages, bs.ID)
			}
		}
	}
	wf := &engine.Workflow{
		Name: d.Metadata.Name, Title: d.Metadata.Title, Description: d.Metadata.Description,
		Entry: d.Stages[0].ID, MaxActiveRuns: d.MaxActiveRuns,
	}
	for _, t := range d.Triggers {
		wf.Triggers = append(wf.Triggers, engine.Trigger{Workflow: wf.Name, Name: t.Name, Kind: engine.TriggerKind(t.Kind),
			Schedule: t.Schedule, Params: t.ParamValues(), Next: t.Next})
	}
	for _, f := range d.Context {
		c.compileValue(f.Value, f.Pos, "")
	}
	for i, s := range d.Stages {
		next := def.Complete
		if i+1 < len(d.Stages) {
			next = d.Stages[i+1].ID
		}
		if step, ok := c.stage(s, next); ok {
			step.Title = s.Title
			wf.Steps = append(wf.Steps, step)
		}
	}
	for _, h := range []struct {
		id    string
		hooks []*def.Hook
		set   *string
	}{{HookComplete, d.OnComplete, &wf.OnComplete}, {HookError, d.OnError, &wf.OnFailure}} {
		if len(h.hooks) == 0 {
			continue
		}
		for _, hk := range h.hooks {
			c.needActions(hk.Action, hk.Pos, "")
			for _, f := range hk.With {
				c.compileValue(f.Value, f.Pos, "")
			}
		}
		wf.Steps = append(wf.Steps, c.hookStep(h.id, h.hooks))
		*h.set = h.id
	}
	if len(c.errs) > 0 {
		return nil, &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("workflow %s cannot run: %d problem(s)", d.File, len(c.errs)), Err: c.errs}
	}
	wf.Steps[0].Params = params(d)
	wf.MaxIterations = c.maxIterations
	wf.Init = c.init
	wf.Backup = d.Backup
	wf.CheckStart = c.checkStart
	wf.Source = &engine.Source{Hash: d.Hash, Name: d.Metadata.Name, Version: d.Metadata.Version, File: d.File, Text: d.Text}
	if err := wf.Validate(); err != nil {
		return nil, err
	}
	return wf, nil
}

func (c *compiler) errorf(p def.Pos, stage, format string, args ...any) {
	c.errs = append(c.errs, def.Error{File: c.d.File, Line: p.Line, Col: p.Col, Stage: stage, Msg: fmt.Sprintf(format, args...)})
}

// stage compiles one top-level stage; next is the stage after it in the
// file (or complete), the default of every forward transition.
func (c *compiler) stage(s *def.Stage, next string) (engine.StepDef, bool) {
	c.compileCommon(s)
	switch s.Type {
	case def.TypeSkill, def.TypeAction:
		if s.Action != "" {
			if !c.needActions(s.Action, s.Pos, s.ID) {
				return engine.StepDef{}, false
			}
			for _, f := range s.With {
				c.compileValue(f.Value, f.Pos, s.ID)
			}
			return c.actionStep(s, next), true
		}
		if h, ok := c.natives[s.Skill]; ok && h != nil {
			if _, twice := c.skills[s.Skill]; twice {
				c.errorf(s.Pos, s.ID, "skill %q is registered both as a skill and as a native step", s.Skill)
				return engine.StepDef{}, false
			}
			return c.nativeStep(s, next, h), true
		}
		skill, ok := c.skills[s.Skill]
		if !ok || skill == nil {
			c.errorf(s.Pos, s.ID, "skill %q is not registered", s.Skill)
			return engine.StepDef{}, false
		}
		for _, f := range s.With {
			c.compileValue(f.Value, f.Pos, s.ID)
		}
		return c.skillStep(s, next, skill), true
	case def.TypeSet:
		for _, f := range s.Set {
			src, _ := f.Value.(string)
			c.compile(src, f.Pos, s.ID)
		}
		return c.setStep(s, next), true
	case def.TypeGate:
		if s.Form != "" {
			f, ok := c.forms[s.Form]
			if !ok {
				c.errorf(s.Pos, s.ID, "form %q is not registered", s.Form)
				return engine.StepDef{}, false
			}
			return c.formStep(s, f)
		}
		for _, x := range s.Conditions {
			c.compile(x.Src, x.Pos, s.ID)
		}
		if s.OnFail != nil {
			for _, f := range s.OnFail.Context {
				c.compileValue(f.Value, f.Pos, s.ID)
			}
			c.compileLimit(s.OnFail.MaxIterations, s.ID)
		}
		return c.gateStep(s, next), true
	case def.TypeDelay:
		if s.Until != "" {
			c.compileValue(s.Until, s.Pos, s.ID)
		}
		if s.Poll != nil {
			c.compile(s.Poll.Condition.Src, s.Poll.Condition.Pos, s.ID)
		}
		return c.delayStep(s, next), true
	case def.TypeWebhook:
		if c.webhook == nil || s.Request == nil {
			c.errorf(s.Pos, s.ID, "webhook stages cannot run here: no webhook caller is configured")
			return engine.StepDef{}, false
		}
		c.compileValue(s.Request.URL, s.Request.Pos, s.ID)
		for _, f := range s.Request.Headers {
			c.compileValue(f.Value, f.Pos, s.ID)
		}
		c.compileValue(s.Request.Body, s.Request.Pos, s.ID)
		if s.Expect != nil {
			c.compileValue(s.Expect.JSON, s.Pos, s.ID)
		}
		return c.webhookStep(s, next), true
	}
	if s.Type == def.TypeParallel {
		return c.parallelStep(s, next)
	}
	c.errorf(s.Pos, s.ID, "%s stages are not run by the engine yet", s.Type)
	return engine.StepDef{}, false
}

// needActions reports whether action can run here: start_workflow
// always can (the engine starts runs); the others need Options.Actions.
func (c *compiler) needActions(action string, p def.Pos, stage string) bool {
	if action == def.ActionStartWorkflow || c.actions != nil {
		return true
	}
	c.errorf(p, stage, "%s actions cannot run here: no action runner is configured", action)
	return false
}

// compileCommon compiles the expressions every stage type may have.
func (c *compiler) compileCommon(s *def.Stage) {
	if s.Condition.Src != "" {
		c.compile(s.Condition.Src, s.Condition.Pos, s.ID)
	}
	c.compileLimit(s.MaxIterations, s.ID)
}

func (c *compiler) compileLimit(l def.Limit, stage string) {
	if l.Expr != "" {
		c.compileValue(l.Expr, l.Pos, stage)
	}
}

// target resolves a transition: "" is dflt, complete is engine.End.
func target(t def.Target, dflt string) string {
	id := t.ID
	if id == "" {
		id = dflt
	}
	if id == def.Complete {
		return engine.End
	}
	return id
}

// then maps a def.Then onto the outcome the engine takes when retries (or
// a loop bound) run out: escalate asks a person (""), fail (the default)
// is Fail, which has no transition and so fails the run, goto is a Goto.
func then(t def.Then) engine.Outcome {
	switch t.Action {
	case def.ThenEscalate:
		return ""
	case def.ThenGoto:
		return engine.Goto(target(t.Goto, def.Complete))
	}
	return engine.Fail
}

// transitions is the table shared by skill, action, set and delay stages
// and by gates without options: OK goes to def's on_complete (or on_pass),
// Skip to skip_to when the stage has a condition (else on as OK, so a
// person may skip it at an escalation), and each goto target of on_error
// is declared.
func (c *compiler) transitions(s *def.Stage, onOK string, next string) engine.Next {
	n := engine.Next{}
	if onOK != "" {
		n[engine.OK] = onOK
	}
	switch {
	case s.Condition.Src != "":
		n[engine.Skip] = target(s.SkipTo, next)
	case onOK != "":
		n[engine.Skip] = onOK
	}
	if s.OnError != nil && s.OnError.Then.Action == def.ThenGoto {
		declare(n, target(s.OnError.Then.Goto, def.Complete))
	}
	return n
}

func declare(n engine.Next, to string) {
	n[engine.Goto(to)] = to
}

// retry maps on_error onto the engine's policy: retry N is N+1 attempts,
// the backoff is constant, and without on_error a failure fails the run
// at once.
func retry(s *def.Stage) engine.RetryPolicy {
	p := engine.RetryPolicy{MaxAttempts: 1, Then: engine.Fail}
	if s.OnError != nil {
		p.MaxAttempts = s.OnError.Retry + 1
		p.Backoff, p.MaxBackoff = s.OnError.Backoff, s.OnError.Backoff
		p.Then = then(s.OnError.Then)
		p.AskToResume = s.OnError.Resume == def.ResumeAsk
	}
	return p
}

// params turns the definition's params into the engine's declarations (on
// the entry step), so Start resolves and checks them as for any workflow.
func params(d *def.Definition) []engine.Param {
	out := make([]engine.Param, 0, len(d.Params))
	for _, p := range d.Params {
		ep := engine.Param{Name: p.Name, Description: p.Description, Required: p.Required,
			Min: p.Min, Max: p.Max, Choices: slices.Clone(p.Enum), Default: p.Default}
		switch p.Type {
		case def.ParamString:
			ep.Type = engine.ParamString
		case def.ParamInt:
			ep.Type = engine.ParamInt
		case def.ParamFloat:
			ep.Type = engine.ParamFloat
		case def.ParamBool:
			ep.Type = engine.ParamBool
		case def.ParamList:
			ep.Type = engine.ParamStrings
		}
		out = append(out, ep)
	}
	return out
}
