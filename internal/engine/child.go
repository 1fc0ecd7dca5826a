package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ChildRun is a sub-workflow run a step asks the engine to start
// (StartChild): the child is created in the same commit as the step's
// result, so a crash never leaves a child without the parent knowing it,
// nor a parent waiting for a child that was never created.
type ChildRun struct {
	Workflow string
	Params   map[string]any
	// Wait parks the parent (waiting, no checkpoint, no timer) until the
	// child ends; the child's last commit schedules the parent's advance,
	// and the step runs again to read how the child ended (ReadRun).
	// Without Wait the step ends OK at once.
	Wait bool
	// Record is the update that remembers the child in the parent's
	// state, committed with the child; nil records nothing.
	Record func(childID string) (Update, error)
}

// Parent is where a child run was started: the parent run and its step,
// and whether the parent waits for it.
type Parent struct {
	RunID string `json:"run_id"`
	Step  string `json:"step"`
	Wait  bool   `json:"wait"`
}

// childError carries a ChildRun out of a handler.
type childError struct{ spec ChildRun }

func (e *childError) Error() string { return "starting a run of " + e.spec.Workflow }

// StartChild is what a handler returns to start a sub-workflow run (an
// action stage's start_workflow). The handler's update is committed with
// the child: with Wait, as the parent's waiting state (so the step should
// give only what it needs when it runs again); without, with the step's
// OK transition.
func StartChild(c ChildRun) error { return &childError{spec: c} }

// ReadRun returns a run as stored: a step waiting for a child run reads
// how it ended.
func (sc StepContext) ReadRun(ctx context.Context, id string) (Run, error) {
	if sc.read == nil {
		return Run{}, errors.New("engine: runs cannot be read here")
	}
	return sc.read(ctx, id)
}

// MaxChildDepth bounds how deeply runs may start runs: a workflow that
// starts itself stops there instead of starting runs for ever.
const MaxChildDepth = 8

// parentReader is implemented by stores that link child runs to their
// parent (store.Store).
type parentReader interface {
	RunParent(ctx context.Context, runID string) (*Parent, error)
}

// depth is how many runs started run id, one above the other.
func (e *Engine) depth(ctx context.Context, id string) (int, error) {
	pr, ok := e.cfg.Store.(parentReader)
	if !ok {
		return 0, nil
	}
	n := 0
	for ; n <= MaxChildDepth; n++ {
		p, err := pr.RunParent(ctx, id)
		if err != nil {
			return 0, err
		}
		if p == nil {
			break
		}
		id = p.RunID
	}
	return n, nil
}

// startChild creates the child run a step asked for and commits it with
// the step: the parent waiting for it, or moved on.
func (e *Engine) startChild(ctx context.Context, wf *Workflow, run Run, step *StepDef, started time.Time, attempt int, update Update, spec ChildRun) (Run, error) {
	if depth, err := e.depth(ctx, run.ID); err != nil {
		return run, err
	} else if depth >= MaxChildDepth {
		return e.retryOrEscalate(ctx, wf, run, step, started, attempt, Stop(fmt.Errorf("start_workflow %s: runs are nested %d deep already, the most there may be (does a workflow start itself?)", spec.Workflow, depth), step.Retry.Then))
	}
	child, err := e.newRun(spec.Workflow, spec.Params)
	if err != nil {
		return e.retryOrEscalate(ctx, wf, run, step, started, attempt, fmt.Errorf("start_workflow %s: %w", spec.Workflow, err))
	}
	child.Parent = &Parent{RunID: run.ID, Step: step.ID, Wait: spec.Wait}
	child.Project, child.StartedBy = run.Project, run.StartedBy
	if spec.Record != nil {
		rec, err := spec.Record(child.ID)
		if err != nil {
			return e.retryOrEscalate(ctx, wf, run, step, started, attempt, err)
		}
		update = update.merge(rec)
	}
	var r Run
	if spec.Wait {
		next := run
		next.State = run.State.merge(update)
		next.Status = StatusWaiting
		next.Attempt, next.Error = 0, ""
		rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: attempt,
			Outcome: "waiting", StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(update)}
		r, err = e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, Child: &child})
	} else {
		rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: attempt,
			Outcome: string(OK), StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(update)}
		r, err = e.transition(ctx, wf, run, step, OK, update, Commit{Step: rec, Child: &child})
	}
	if err != nil {
		return r, err
	}
	e.publish(Event{Type: EventStatus, RunID: child.ID, Status: child.Status})
	return r, nil
}

// ChildLink is a run a step started, as the parent's page lists it.
type ChildLink struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Step     string `json:"step"`
	Wait     bool   `json:"wait"`
	// Status is the child's status when read (empty where a cached page
	// leaves it out: the child's own page says).
	Status Status `json:"status,omitempty"`
}

// ActionRecord is one attempt of a built-in action (an action stage, or a
// workflow's on_complete / on_error hook, Stage naming the hook): the
// audit that shows a notice that could not be sent without failing the
// run.
type ActionRecord struct {
	RunID   string    `json:"-"`
	Stage   string    `json:"stage"`
	Action  string    `json:"action"`
	Attempt int       `json:"attempt"`
	Status  string    `json:"status"` // ActionOK or ActionFailed
	Error   string    `json:"error,omitempty"`
	At      time.Time `json:"at"`
}

// The statuses of an ActionRecord.
const (
	ActionOK     = "ok"
	ActionFailed = "failed"
)

// FailureKey holds, while a run's OnFailure hook step runs, the error
// the run fails with once the hooks are done.
const FailureKey = "run.failure"

// failing is next, a run about to fail with msg, sent to the workflow's
// OnFailure step instead when it has one and is not in it already.
func (w *Workflow) failing(next Run, msg string) Run {
	if w.OnFailure == "" || next.Status != StatusFailed {
		return next
	}
	if first, _, _ := Get[string](next.State, FailureKey); first != "" {
		next.Error = first + " (then on_error: " + msg + ")" // the hooks failed too: fail for good
		return next
	}
	next.State = next.State.merge(State{})
	if err := next.State.Set(FailureKey, msg); err != nil {
		return next
	}
	next.Status, next.Step, next.Error = StatusRunning, w.OnFailure, ""
	return next
}
