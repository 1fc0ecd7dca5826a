package engine

import (
	"context"
	"errors"
	"fmt"
	"quarry/internal/fault"
	"slices"
	"sort"
	"strings"
	"time"
)

// Outcome is what a step says happened; the workflow's transition table,
// not the handler, decides where the run goes next.
type Outcome string

// The outcomes a step may return. Default is not returned by handlers: it is
// the key of the fallback transition used when an outcome is not mapped.
const (
	OK      Outcome = "ok"
	Fail    Outcome = "fail"
	Skip    Outcome = "skip"
	Iterate Outcome = "iterate"
	// More is a gate's answer "show me more before I decide": its
	// transition goes to a step that adds to what the gate shows and
	// comes back to the gate, which asks again with a new checkpoint.
	// Unlike Iterate it does not count an iteration; what bounds it is
	// the step's own (the review's next page ends when the sources have
	// no more).
	More    Outcome = "more"
	Default Outcome = "_default"
)

// End is the explicit terminal marker: a transition to End completes the run.
const End = "_end"

// Outcomes lists every outcome, for validation and exhaustive tests.
func Outcomes() []Outcome { return []Outcome{OK, Fail, Skip, Iterate, More, Default} }

// gotoPrefix marks an outcome that names its own target.
const gotoPrefix = "goto:"

// Goto is the outcome "go to step id" (or End). Workflows compiled from
// definition files route by target rather than by a fixed outcome (a gate
// has one target per option); the edge must still be declared in Next, as
// Next{Goto(id): id}, so the graph stays data that is validated and drawn.
func Goto(id string) Outcome { return Outcome(gotoPrefix + id) }

// GotoTarget returns the target a Goto outcome names.
func (o Outcome) GotoTarget() (string, bool) {
	return strings.CutPrefix(string(o), gotoPrefix)
}

// Next maps outcomes to the ID of the next step (or End).
type Next map[Outcome]string

// Handler runs one step. It is a plain function so it can be tested alone:
// it gets the step's context and returns an outcome, the state keys it
// changes, and an error (which triggers the retry policy).
type Handler func(ctx context.Context, sc StepContext) (Outcome, Update, error)

// Condition is a named check on a step's context (preconditions) or on the
// context after the step's update is applied (postconditions).
type Condition struct {
	Name    string
	Check   func(sc StepContext) bool
	Message string
}

// RetryPolicy says how often a failing step is tried, and what happens when
// every attempt failed.
type RetryPolicy struct {
	// MaxAttempts counts the first try; 0 means the engine default (3).
	MaxAttempts int
	// Backoff is the wait before the second attempt; it doubles after each
	// failure up to MaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Then is the outcome the step takes once its attempts are used up (or
	// a handler returned Stop): "" asks a person (an escalation); an
	// outcome without a transition, such as Fail, fails the run with the
	// last error.
	Then Outcome
	// AskToResume: after a restart, a step that was waiting out its
	// backoff is not retried by itself; the run waits at a resume
	// checkpoint until a person says resume (Engine.Recover).
	AskToResume bool
}

// stopError is a step error that retrying cannot fix.
type stopError struct {
	err    error
	then   Outcome
	update Update
}

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// waitError parks a run until a time.
type waitError struct{ until time.Time }

func (e *waitError) Error() string {
	return "waiting until " + e.until.UTC().Format(time.RFC3339)
}

// WaitUntil is what a handler returns to wait, durably, until t (a delay
// stage): the engine commits the handler's update with the run waiting
// (no checkpoint) and, in the same transaction, a job that advances it at
// t; then the step runs again and should find its time has come. No
// goroutine sleeps, so the wait survives restarts.
func WaitUntil(t time.Time) error { return &waitError{until: t} }

// Stop wraps an error retrying cannot fix (a loop bound used up, a gate's
// conditions failing for good): the engine makes no further attempt and
// takes then at once, as RetryPolicy.Then when retries run out ("" asks a
// person; an outcome without a transition fails the run with err).
func Stop(err error, then Outcome) error {
	if err == nil {
		return nil
	}
	return &stopError{err: err, then: then}
}

// StopWith is Stop with an update the step still commits on its way out
// (a start_workflow stage forgets the child that failed, so coming back
// to the stage starts a new one).
func StopWith(err error, then Outcome, update Update) error {
	if err == nil {
		return nil
	}
	return &stopError{err: err, then: then, update: update}
}

// keptError is a step error with an update the engine commits although
// the attempt failed.
type keptError struct {
	err    error
	update Update
}

func (e *keptError) Error() string { return e.err.Error() }
func (e *keptError) Unwrap() error { return e.err }

// KeepOnFailure wraps a step's error with an update the engine commits
// with the failed attempt, whether it is retried, escalated or ends the
// run (a branch's attempt: in the branch's state): for counts of what the attempt spent (a run's language-model
// tokens), which a retry must start from so a budget holds, never for
// results (nothing else of a failed attempt is kept). It combines with
// Stop and StopWith (their update is applied after this one).
func KeepOnFailure(err error, update Update) error {
	if err == nil || len(update) == 0 {
		return err
	}
	return &keptError{err: err, update: update}
}

// keptOf is the update a failed attempt's error asks to keep (nil for none).
func keptOf(err error) Update {
	var k *keptError
	if errors.As(err, &k) {
		return k.update
	}
	return nil
}

func (p RetryPolicy) attempts() int {
	if p.MaxAttempts <= 0 {
		return 3
	}
	return p.MaxAttempts
}

func (p RetryPolicy) delay(failed int) time.Duration {
	d := p.Backoff
	for i := 1; i < failed && d > 0; i++ {
		d *= 2
		if p.MaxBackoff > 0 && d > p.MaxBackoff {
			return p.MaxBackoff
		}
	}
	if p.MaxBackoff > 0 && d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	return d
}

// StepDef is one node of a workflow: either a Handler (work) or a Gate (a
// human checkpoint), never both.
type StepDef struct {
	ID    string
	Title string
	// Handler does the step's work. Nil for gate steps.
	Handler Handler
	// Gate makes this step a human checkpoint.
	Gate *Gate
	// Fan makes this step run branches (a parallel stage).
	Fan *Fan
	// Next maps outcomes to next steps; Default is the fallback.
	Next Next
	// Exit is where an Iterate goes once the workflow's max_iterations is
	// reached; when empty the OK (then Default) transition, else End.
	Exit           string
	Preconditions  []Condition
	Postconditions []Condition
	// ReadBacks are postconditions the store checks inside the commit of
	// the step's result, reading back what it wrote (ReadBack).
	ReadBacks []ReadBack
	Retry     RetryPolicy
	// Params declares the run parameters this step reads, for validation
	// and for forms.
	Params []Param
}

// Workflow is a named, validated graph of steps. It is data: transitions
// live here, not in handler code, so they can be checked and drawn.
type Workflow struct {
	Name        string
	Title       string
	Description string
	Entry       string
	Steps       []StepDef
	// MaxIterations bounds Iterate transitions; a run may override it with
	// the "max_iterations" parameter when a step declares it.
	MaxIterations int
	// Init, if set, builds a new run's first state from its resolved
	// parameters (a definition file's initial context). It runs once, in
	// Start, so the state is stored with the run it belongs to.
	Init func(p Params) (State, error)
	// Source is the definition text the workflow was compiled from (nil
	// for a workflow written in Go); runs store it when they start.
	Source *Source
	// Backup asks the store for a database backup before each run's
	// first step (a definition's backup: true).
	Backup bool
	// CheckStart, if set, says whether a run may start at step with the
	// given state (Engine.StartAt): nil, or a fault.EInvalid naming each
	// missing value. Nil: runs start only at Entry.
	CheckStart func(step string, given State) error
	// Triggers start runs of the workflow without a person (Scheduler,
	// Engine.Fire).
	Triggers []Trigger
	// MaxActiveRuns bounds its runs executing at once (0: no bound of its
	// own); the server's job queue enforces it.
	MaxActiveRuns int
	// OnComplete and OnFailure name hook steps (a definition's
	// on_complete and on_error actions): a run about to complete goes to
	// OnComplete first, and a run about to fail goes to OnFailure, which
	// runs once and then fails the run with the first error. They are
	// reached by the engine, not by transitions.
	OnComplete string
	OnFailure  string
}

// MaxIterationsParam is the run parameter that overrides Workflow.MaxIterations.
const MaxIterationsParam = "max_iterations"

// Step returns the step with the given ID.
func (w *Workflow) Step(id string) (*StepDef, bool) {
	for i := range w.Steps {
		if w.Steps[i].ID == id {
			return &w.Steps[i], true
		}
	}
	return nil, false
}

// Validate checks the definition and names the culprit of the first
// problems found: the entry exists, every transition target exists or is
// End, at least one transition reaches End, every step is reachable, each
// step is either work or a gate, and parameter metadata is consistent.
func (w *Workflow) Validate() error {
	fe := fault.FieldErrors{}
	if strings.TrimSpace(w.Name) == "" {
		fe.Add("name", "workflow has no name")
	}
	ids := map[string]bool{}
	for i, s := range w.Steps {
		switch {
		case s.ID == "":
			fe.Add(fmt.Sprintf("steps[%d].id", i), "step has no ID")
		case s.ID == End:
			fe.Add("step "+s.ID, fmt.Sprintf("step ID %q is reserved for the end marker", End))
		case ids[s.ID]:
			fe.Add("step "+s.ID, fmt.Sprintf("step ID %q is used twice", s.ID))
		}
		ids[s.ID] = true
	}
	if w.Entry == "" {
		fe.Add("entry", "workflow has no entry point")
	} else if !ids[w.Entry] {
		fe.Add("entry", fmt.Sprintf("entry point %q is not a step", w.Entry))
	}
	terminal := false
	iterates := false
	for _, s := range w.Steps {
		key := "step " + s.ID
		if kinds := btoi(s.Handler != nil) + btoi(s.Gate != nil) + btoi(s.Fan != nil); kinds != 1 {
			fe.Add(key, fmt.Sprintf("step %q must have exactly one of a handler, a gate or branches", s.ID))
		}
		if s.Fan != nil && (s.Fan.Branches == nil || s.Fan.Join == nil) {
			fe.Add(key, fmt.Sprintf("step %q: branches need a list and a join", s.ID))
		}
		if s.Gate != nil {
			if err := s.Gate.validate(); err != nil {
				fe.Add(key, fmt.Sprintf("step %q: %v", s.ID, err))
			}
		}
		if len(s.Next) == 0 {
			fe.Add(key, fmt.Sprintf("step %q has no transitions", s.ID))
		}
		for _, o := range sortedOutcomes(s.Next) {
			to := s.Next[o]
			if target, ok := o.GotoTarget(); ok {
				if target != to {
					fe.Add(key, fmt.Sprintf("step %q: outcome %q must go to %q, not %q", s.ID, o, target, to))
				}
			} else if !slices.Contains(Outcomes(), o) {
				fe.Add(key, fmt.Sprintf("step %q maps unknown outcome %q", s.ID, o))
			}
			if to == End {
				terminal = true
			} else if !ids[to] {
				fe.Add(key, fmt.Sprintf("step %q: outcome %q goes to %q, which is not a step", s.ID, o, to))
			}
			if o == Iterate {
				iterates = true
			}
		}
		if s.Exit != "" {
			if s.Exit == End {
				terminal = true
			} else if !ids[s.Exit] {
				fe.Add(key, fmt.Sprintf("step %q: exit path %q is not a step", s.ID, s.Exit))
			}
		}
		for j, c := range append(slices.Clone(s.Preconditions), s.Postconditions...) {
			if c.Name == "" || c.Check == nil {
				fe.Add(key, fmt.Sprintf("step %q: condition %d needs a name and a check", s.ID, j))
			}
		}
		if s.Retry.MaxAttempts < 0 || s.Retry.Backoff < 0 || s.Retry.MaxBackoff < 0 {
			fe.Add(key, fmt.Sprintf("step %q: retry policy has a negative value", s.ID))
		}
		if t, ok := s.Retry.Then.GotoTarget(); ok {
			if _, mapped := s.Next[s.Retry.Then]; !mapped {
				fe.Add(key, fmt.Sprintf("step %q: retry policy goes to %q, which the step's transitions do not declare", s.ID, t))
			}
		}
	}
	if !terminal && len(w.Steps) > 0 {
		fe.Add("steps", "no transition reaches the end marker: the workflow could never complete")
	}
	if iterates && w.MaxIterations < 1 {
		fe.Add("max_iterations", "workflow iterates, so max_iterations must be at least 1")
	}
	if w.Entry != "" && ids[w.Entry] {
		reached := w.reachable()
		for _, s := range w.Steps {
			if s.ID != "" && !reached[s.ID] {
				fe.Add("step "+s.ID, fmt.Sprintf("step %q is not reachable from the entry point %q", s.ID, w.Entry))
			}
		}
	}
	if _, err := w.Params(); err != nil {
		fe.Add("params", fault.ErrorMessage(err))
	}
	return fe.Err(fmt.Sprintf("workflow %q is invalid", w.Name))
}

func (w *Workflow) reachable() map[string]bool {
	seen := map[string]bool{w.Entry: true}
	queue := []string{w.Entry}
	for _, hook := range []string{w.OnComplete, w.OnFailure} {
		if hook != "" && !seen[hook] {
			seen[hook] = true
			queue = append(queue, hook)
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		s, ok := w.Step(id)
		if !ok {
			continue
		}
		targets := make([]string, 0, len(s.Next)+1)
		for _, to := range s.Next {
			targets = append(targets, to)
		}
		if s.Exit != "" {
			targets = append(targets, s.Exit)
		}
		for _, to := range targets {
			if to != End && !seen[to] {
				seen[to] = true
				queue = append(queue, to)
			}
		}
	}
	return seen
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fans reports whether step id runs branches.
func (w *Workflow) fans(id string) bool {
	s, ok := w.Step(id)
	return ok && s.Fan != nil
}

// resolve returns the target of an outcome, falling back to Default.
func (s *StepDef) resolve(o Outcome) (string, bool) {
	if to, ok := s.Next[o]; ok {
		return to, true
	}
	to, ok := s.Next[Default]
	return to, ok
}

// Skippable reports whether a person may skip this step at an escalation:
// it needs a skip (or default) transition.
func (s *StepDef) Skippable() bool {
	_, ok := s.resolve(Skip)
	return ok
}

// exit returns where an Iterate goes once the loop bound is reached.
func (s *StepDef) exit() string {
	if s.Exit != "" {
		return s.Exit
	}
	if to, ok := s.resolve(OK); ok {
		return to
	}
	return End
}

func sortedOutcomes(n Next) []Outcome {
	out := make([]Outcome, 0, len(n))
	for o := range n {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Registry holds the workflows an engine can run. It is built explicitly in
// main, so what runs is visible in one place (no init() registration).
type Registry struct {
	byName map[string]*Workflow
	order  []string
}

// NewRegistry validates every workflow and rejects duplicate names.
func NewRegistry(wfs ...*Workflow) (*Registry, error) {
	r := &Registry{byName: map[string]*Workflow{}}
	for _, w := range wfs {
		if w == nil {
			return nil, errors.New("engine: nil workflow")
		}
		if err := w.Validate(); err != nil {
			return nil, err
		}
		if _, dup := r.byName[w.Name]; dup {
			return nil, fault.Errorf(fault.EInvalid, "workflow %q is registered twice", w.Name)
		}
		r.byName[w.Name] = w
		r.order = append(r.order, w.Name)
	}
	return r, nil
}

// Get returns the named workflow or a not_found error.
func (r *Registry) Get(name string) (*Workflow, error) {
	w, ok := r.byName[name]
	if !ok {
		return nil, fault.Errorf(fault.ENotFound, "no workflow named %q", name)
	}
	return w, nil
}

// List returns the workflows in registration order.
func (r *Registry) List() []*Workflow {
	out := make([]*Workflow, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byName[n])
	}
	return out
}
