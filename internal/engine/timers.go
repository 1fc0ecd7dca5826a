package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
)

// TimeoutBy is who a decision taken by a gate's timer is by, so pages and
// the API can say the gate timed out rather than name a person.
const TimeoutBy = "timeout"

// GateTimeout is how long a person has at a gate (Gate.Timeout), what
// the gate does when nobody decided in time, and whom it tells. The
// timer is durable: it is stored with the checkpoint's commit, with a
// job due when it runs out (Engine.FireTimer).
type GateTimeout struct {
	// After is how long the person has from when the gate asks; 0 means
	// no timer (notices on entering only).
	After time.Duration
	// Default, when set, is the option the gate takes when the time is up;
	// Choose builds the decision that picks it.
	Default string
	Choose  func(option string) Decision
	// Otherwise the time is extended by Extend up to MaxExtensions times,
	// and then the gate takes Then ("" escalates; an outcome with a
	// transition takes it; any other fails the run), as a step whose
	// retries ran out does.
	Extend        time.Duration
	MaxExtensions int
	Then          Outcome
	// Targets are whom notices go to; Notify sends one (nil: notices are
	// only recorded). The engine calls it after the commit that records
	// the notice, never inside a transaction.
	Targets []NoticeTarget
	Notify  func(ctx context.Context, n Notice) error
}

// TimerStatus is a gate timer's life cycle: pending until it fires or a
// person decides first (canceled).
type TimerStatus string

// The timer statuses.
const (
	TimerPending  TimerStatus = "pending"
	TimerFired    TimerStatus = "fired"
	TimerCanceled TimerStatus = "canceled"
)

// GateTimer is the durable timer of one gate checkpoint.
type GateTimer struct {
	CheckpointID string `json:"checkpoint_id"`
	RunID        string `json:"run_id"`
	Stage        string `json:"stage"`
	Iteration    int    `json:"iteration"`
	// Due is when the timer fires next (after an extension, the new time).
	Due           time.Time   `json:"due"`
	Extensions    int         `json:"extensions"`
	MaxExtensions int         `json:"max_extensions"`
	Default       string      `json:"default,omitempty"`
	Status        TimerStatus `json:"status"`
	// Outcome is what the timer did once fired: "default" (it took
	// Default), "escalate", "fail" or "goto:<stage>".
	Outcome   string     `json:"outcome,omitempty"`
	FiredAt   *time.Time `json:"fired_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// NoticeEvent is what a notice tells.
type NoticeEvent string

// The events a gate's notify is told of.
const (
	NoticeEntered  NoticeEvent = "entered"
	NoticeExtended NoticeEvent = "extended"
	NoticeTimedOut NoticeEvent = "timed_out"
)

// NoticeStatus is what became of a notice.
type NoticeStatus string

// A notice is pending from its commit until it is sent (or fails);
// recorded when there was nothing to send it with or to.
const (
	NoticePending  NoticeStatus = "pending"
	NoticeSent     NoticeStatus = "sent"
	NoticeFailed   NoticeStatus = "failed"
	NoticeRecorded NoticeStatus = "recorded"
)

// NoticeTarget is where a notice goes: a webhook URL or an e-mail address.
type NoticeTarget struct {
	Webhook string `json:"webhook,omitempty"`
	Email   string `json:"email,omitempty"`
}

// Notice is one event of a gate's timer and whom it was told to.
type Notice struct {
	ID           string      `json:"id"`
	RunID        string      `json:"run_id"`
	Workflow     string      `json:"workflow"`
	Stage        string      `json:"stage"`
	CheckpointID string      `json:"checkpoint_id"`
	Event        NoticeEvent `json:"event"`
	// Due is when the gate decides itself (entered, extended), or when it
	// was due (timed_out); zero for a gate without a timer.
	Due        time.Time `json:"due"`
	Extensions int       `json:"extensions"`
	// Outcome says, for timed_out, what the gate did.
	Outcome   string         `json:"outcome,omitempty"`
	Targets   []NoticeTarget `json:"targets"`
	Status    NoticeStatus   `json:"status"`
	Error     string         `json:"error,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
}

// TimerStore is the persistence gate timers need besides Commit (whose
// Timer and Notices fields store them with the transition).
type TimerStore interface {
	// GateTimer returns a checkpoint's timer, or fault.ENotFound.
	GateTimer(ctx context.Context, checkpointID string) (GateTimer, error)
	// DueGateTimers lists the pending timers due at or before now.
	DueGateTimers(ctx context.Context, now time.Time) ([]GateTimer, error)
	// ScheduleGateTimer queues the timer's job again for its due time
	// (a job that ran early).
	ScheduleGateTimer(ctx context.Context, t GateTimer) error
	// RecordNotice records what sending a notice did.
	RecordNotice(ctx context.Context, id string, status NoticeStatus, errMsg string) error
	// PendingNotices lists the notices recorded but never attempted (a
	// crash came between their commit and their sending), oldest first.
	PendingNotices(ctx context.Context) ([]Notice, error)
}

// gateTimer is the timer and the entered notice of a gate asking at cp
// (nil, nil for a gate without a timeout or notify).
func (e *Engine) gateTimer(run Run, step *StepDef, cp Checkpoint) (*GateTimer, []Notice) {
	gt := step.Gate.Timeout
	if gt == nil {
		return nil, nil
	}
	now := e.cfg.Now().UTC()
	var t *GateTimer
	var due time.Time
	if gt.After > 0 {
		due = now.Add(gt.After)
		t = &GateTimer{CheckpointID: cp.ID, RunID: run.ID, Stage: step.ID, Iteration: run.Iteration, Due: due,
			MaxExtensions: gt.MaxExtensions, Default: gt.Default, Status: TimerPending, CreatedAt: now}
	}
	return t, []Notice{e.notice(gt, run, cp, NoticeEntered, due, 0, "")}
}

func (e *Engine) notice(gt *GateTimeout, run Run, cp Checkpoint, ev NoticeEvent, due time.Time, ext int, outcome string) Notice {
	n := Notice{ID: e.cfg.NewID(), RunID: run.ID, Workflow: run.Workflow, Stage: cp.Step, CheckpointID: cp.ID,
		Event: ev, Due: due, Extensions: ext, Outcome: outcome, Targets: gt.Targets, Status: NoticeRecorded,
		CreatedAt: e.cfg.Now().UTC()}
	if n.Targets == nil {
		n.Targets = []NoticeTarget{}
	}
	if gt.Notify != nil && len(gt.Targets) > 0 {
		n.Status = NoticePending
	}
	return n
}

// notify sends the pending notices a commit recorded and records what
// became of each. A notice that cannot be sent fails alone: the run has
// moved on already.
func (e *Engine) notify(ctx context.Context, gt *GateTimeout, notices []Notice) {
	ts, ok := e.cfg.Store.(TimerStore)
	if gt == nil || gt.Notify == nil || !ok {
		return
	}
	for _, n := range notices {
		if n.Status != NoticePending {
			continue
		}
		status, msg := NoticeSent, ""
		if err := gt.Notify(ctx, n); err != nil {
			status, msg = NoticeFailed, err.Error()
		}
		if err := ts.RecordNotice(ctx, n.ID, status, msg); err != nil {
			e.cfg.Logger.Warn("engine: record a notice", "run", n.RunID, "notice", n.ID, "err", err)
		}
	}
}

// resendNotices sends the notices a crash left pending (recorded with
// their commit, never attempted), so a notice is sent at least once. A
// gate that no longer notifies, or a server without a notifier, records
// them instead. Errors are logged: notices never hold a start-up back.
func (e *Engine) resendNotices(ctx context.Context) int {
	ts, ok := e.cfg.Store.(TimerStore)
	if !ok {
		return 0
	}
	pending, err := ts.PendingNotices(ctx)
	if err != nil {
		e.cfg.Logger.Warn("engine: pending notices", "err", err)
		return 0
	}
	for _, n := range pending {
		var gt *GateTimeout
		if run, err := e.cfg.Store.Run(ctx, n.RunID); err == nil {
			if wf, err := e.Workflow(ctx, run); err == nil {
				if step, ok := wf.Step(n.Stage); ok && step.Gate != nil {
					gt = step.Gate.Timeout
				}
			}
		}
		if gt == nil || gt.Notify == nil {
			if err := ts.RecordNotice(ctx, n.ID, NoticeRecorded, "not sent: nothing sends this gate's notices now"); err != nil {
				e.cfg.Logger.Warn("engine: record a notice", "run", n.RunID, "notice", n.ID, "err", err)
			}
			continue
		}
		e.notify(ctx, gt, []Notice{n})
	}
	return len(pending)
}

// FireTimers fires every gate timer due by the engine's clock, as their
// jobs would, and returns how many it found due. Tests call it with an
// injected clock; a timer fired already is a no-op, so calling it
// besides the jobs is harmless. One timer's error does not keep the
// others from firing; the errors are returned together.
func (e *Engine) FireTimers(ctx context.Context) (int, error) {
	ts, ok := e.cfg.Store.(TimerStore)
	if !ok {
		return 0, errors.New("engine: this store keeps no gate timers")
	}
	due, err := ts.DueGateTimers(ctx, e.cfg.Now().UTC())
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, t := range due {
		if err := e.FireTimer(ctx, t.RunID, t.CheckpointID); err != nil {
			errs = append(errs, fmt.Errorf("run %s, gate %s: %w", t.RunID, t.Stage, err))
		}
	}
	return len(due), errors.Join(errs...)
}

// FireTimer is what a gate timer's job does. If the gate was decided (or
// the run moved on) it does nothing; if the engine's clock says the timer
// is not due yet it queues the job again; otherwise it does exactly one
// of: take the default option (a decision by TimeoutBy), extend the time
// (and tell notify), or, once the extensions are used up, take Then. The
// commit is checked against the run's version, and a decision's against
// the checkpoint still pending, so of any number of firings and a
// person's decision racing, exactly one moves the run; the others find
// it moved and do nothing.
func (e *Engine) FireTimer(ctx context.Context, runID, checkpointID string) error {
	ts, ok := e.cfg.Store.(TimerStore)
	if !ok {
		return errors.New("engine: this store keeps no gate timers")
	}
	gt, notices, err := e.fireTimer(ctx, ts, runID, checkpointID)
	if fault.ErrorCode(err) == fault.EConflict {
		e.cfg.Logger.Info("engine: a gate timer found its run moved on", "run", runID, "checkpoint", checkpointID, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	e.notify(ctx, gt, notices) // outside the run's lock: a slow target holds no run back
	return nil
}

func (e *Engine) fireTimer(ctx context.Context, ts TimerStore, runID, checkpointID string) (*GateTimeout, []Notice, error) {
	defer e.lock(runID)()
	t, err := ts.GateTimer(ctx, checkpointID)
	if fault.ErrorCode(err) == fault.ENotFound {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if t.Status != TimerPending || t.RunID != runID {
		return nil, nil, nil
	}
	run, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	if run.Status != StatusWaiting || run.CheckpointID != checkpointID {
		return nil, nil, nil // decided, canceled or moved on: the timer has nothing to do
	}
	now := e.cfg.Now().UTC()
	if now.Before(t.Due) {
		return nil, nil, ts.ScheduleGateTimer(ctx, t)
	}
	cp, dec, err := e.cfg.Store.Checkpoint(ctx, checkpointID)
	if err != nil {
		return nil, nil, err
	}
	if dec != nil || cp.Status != CheckpointPending {
		return nil, nil, nil
	}
	wf, err := e.Workflow(ctx, run)
	if err != nil {
		return nil, nil, err
	}
	step, ok := wf.Step(cp.Step)
	if !ok || step.Gate == nil || step.Gate.Timeout == nil || step.Gate.Timeout.After == 0 {
		return nil, nil, fault.Errorf(fault.EInternal, "run %s: gate %q has a timer but its workflow gives it no timeout", runID, cp.Step)
	}
	gt := step.Gate.Timeout
	sc := e.stepContext(run, step.ID)
	fired := t
	fired.Status, fired.FiredAt = TimerFired, &now
	switch {
	case gt.Default != "":
		d := gt.Choose(gt.Default)
		d.DecidedBy = TimeoutBy
		d.Note = fmt.Sprintf("nobody decided by %s: the gate took its default %q", t.Due.Format("2006-01-02 15:04 UTC"), gt.Default)
		fired.Outcome = "default"
		// WakeAt: the run goes on by its own job, queued with the commit.
		c := Commit{Decision: &DecisionRecord{Decision: d, CheckpointID: cp.ID, DecidedAt: now}, Timer: &fired, WakeAt: now,
			Notices: []Notice{e.notice(gt, run, cp, NoticeTimedOut, t.Due, t.Extensions, fmt.Sprintf("took the default %q", gt.Default))}}
		_, err = e.decideByTimer(ctx, wf, run, step, sc, cp, d, now, c)
		if err == nil {
			if o := e.cfg.Observer; o != nil {
				o.Decided(run.Workflow, cp.Kind, d.Action)
			}
			e.publish(Event{Type: EventDecision, RunID: runID, Step: cp.Step, Kind: cp.Kind, Message: "timed out: took the default " + gt.Default})
		}
		return gt, c.Notices, err
	case t.Extensions < gt.MaxExtensions:
		next := t
		next.Extensions++
		next.Due = now.Add(gt.Extend)
		c := Commit{From: run.Status, Run: run, Timer: &next,
			Notices: []Notice{e.notice(gt, run, cp, NoticeExtended, next.Due, next.Extensions, "")}}
		_, err = e.commit(ctx, c)
		return gt, c.Notices, err
	default:
		fired.Outcome = thenName(gt.Then, step)
		msg := fmt.Sprintf("gate %q timed out: nobody decided by %s, after %d extension(s)", step.ID, t.Due.Format("2006-01-02 15:04 UTC"), t.Extensions)
		c := Commit{ResolveCheckpoint: cp.ID, Timer: &fired, WakeAt: now,
			Notices: []Notice{e.notice(gt, run, cp, NoticeTimedOut, t.Due, t.Extensions, fired.Outcome)}}
		_, err = e.giveUp(ctx, wf, run, step, now, sc.Attempt, gt.Then, msg, c, nil)
		return gt, c.Notices, err
	}
}

// decideByTimer applies the timer's decision d at the gate and commits
// it with its transition and the extras in c.
func (e *Engine) decideByTimer(ctx context.Context, wf *Workflow, run Run, step *StepDef, sc StepContext, cp Checkpoint, d Decision, now time.Time, c Commit) (Run, error) {
	if err := e.validateDecision(step, sc, cp, d); err != nil {
		return e.escalate(ctx, run, step, now, sc.Attempt, "the gate's default decision: "+err.Error(), withResolve(c, cp.ID))
	}
	outcome, update, err := step.Gate.Apply(ctx, sc, cp, d)
	if err != nil {
		var stop *stopError
		if errors.As(err, &stop) {
			return e.giveUp(ctx, wf, run, step, now, sc.Attempt, stop.then, err.Error(), c, nil)
		}
		return e.escalate(ctx, run, step, now, sc.Attempt, "applying decision: "+err.Error(), c)
	}
	c.Step = &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
		Outcome: string(outcome), StartedAt: now, FinishedAt: now, Output: decisionOutput(d)}
	return e.transition(ctx, wf, run, step, outcome, update, c)
}

// withResolve is c without its decision, expiring checkpoint cp instead.
func withResolve(c Commit, cp string) Commit {
	c.Decision, c.ResolveCheckpoint = nil, cp
	return c
}

// thenName is how a timer's record names the Then it took.
func thenName(then Outcome, step *StepDef) string {
	if then == "" {
		return "escalate"
	}
	if to, ok := then.GotoTarget(); ok {
		if _, declared := step.resolve(then); declared {
			return "goto:" + to
		}
	}
	return "fail"
}
