package engine

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"quarry/internal/fault"
	"strings"
	"sync"
	"time"
)

// Store is the persistence the engine needs. internal/store implements it on
// SQLite; each method is one transaction, which is what makes runs durable.
type Store interface {
	// CreateRun inserts a pending run and schedules its first advance in the
	// same transaction.
	CreateRun(ctx context.Context, r Run) error
	// Run returns a run or an fault.ENotFound error.
	Run(ctx context.Context, id string) (Run, error)
	// Checkpoint returns a checkpoint and its decision (nil while pending).
	Checkpoint(ctx context.Context, id string) (Checkpoint, *DecisionRecord, error)
	// Commit applies one transition atomically and returns the run as
	// stored; fault.EConflict when the run's version moved on.
	Commit(ctx context.Context, c Commit) (Run, error)
	// Decide records a decision for a pending checkpoint, moves the run back
	// to running and schedules its advance, all in one transaction. A
	// checkpoint already decided is an fault.EConflict naming who decided and when.
	Decide(ctx context.Context, runID string, d DecisionRecord) error
	// ResumableRuns lists runs a crash may have left mid-flight (pending or
	// running).
	ResumableRuns(ctx context.Context) ([]string, error)
	// ScheduleAdvance asks the job queue to advance a run.
	ScheduleAdvance(ctx context.Context, runID string) error
}

// StepContext is what a step handler sees.
type StepContext struct {
	RunID  string
	StepID string
	// Project is the team project the run belongs to ("" for none), for
	// steps whose work is the project's (a search of its library selection).
	Project string
	// Params are the run's immutable parameters.
	Params Params
	// State is the state carried between steps; treat it as read-only and
	// return changes as an Update.
	State     State
	Iteration int
	// Now is the engine's clock when the attempt started (injectable, so
	// timers can be tested without waiting).
	Now time.Time
	// Attempt is 1 for the first try of this step.
	Attempt int
	// PrevError is the previous attempt's error, so a retry can do better.
	PrevError string
	emit      func(Event)
	check     func(GateCheck) // a gate visit's recorder (Check)
	read      func(ctx context.Context, id string) (Run, error)
}

// Progress publishes a progress event for pages that watch the run.
func (sc StepContext) Progress(message string, data any) {
	if sc.emit != nil {
		sc.emit(Event{Type: EventProgress, RunID: sc.RunID, Step: sc.StepID, Message: message, Data: data})
	}
}

// Config wires an Engine.
type Config struct {
	Store    Store
	Registry *Registry
	// Handler answers gates; nil means gates take their Auto outcome.
	Handler CheckpointHandler
	Events  *Broker
	Logger  *slog.Logger
	// Observer, if set, is told of every committed step, decision and
	// progress report (metrics); nil observes nothing.
	Observer Observer
	// Resolve, if set, finds the workflow an existing run advances by
	// (Engine.Workflow), so a run of an edited definition file finishes
	// by the text it started with; nil uses the registered workflow.
	Resolve Resolver
	// Roles answers whether person holds role (or a higher one) in
	// project, for gates whose approval asks for a role (Approval.From);
	// nil lets anyone vote there.
	Roles func(ctx context.Context, project, person, role string) (bool, error)
	// Now, NewID and Sleep are injectable for tests.
	Now   func() time.Time
	NewID func() string
	Sleep func(ctx context.Context, d time.Duration) error
}

// Engine advances runs step by step, committing each transition before
// taking the next, so a crash loses at most the step in flight.
type Engine struct {
	cfg   Config
	locks sync.Map // run ID → *sync.Mutex: one advancer per run in this process
	// checks holds, by run ID, the GateChecks of the gate visit in
	// flight (under the run's lock) until the commit that ends it.
	checks sync.Map
	// retries holds, by run ID, the failed attempt whose retry this
	// process scheduled (or a person resumed): a run found waiting to
	// retry without it was left so by an earlier process, which is how a
	// step whose policy says AskToResume knows a restart came between.
	retries sync.Map
}

// New checks the configuration and returns an Engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Registry == nil {
		return nil, errors.New("engine: store and registry are required")
	}
	if cfg.Events == nil {
		cfg.Events = NewBroker()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = NewID
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	return &Engine{cfg: cfg}, nil
}

// Events returns the broker progress is published on.
func (e *Engine) Events() *Broker { return e.cfg.Events }

// Registry returns the workflows this engine runs.
func (e *Engine) Registry() *Registry { return e.cfg.Registry }

// NewID returns an unguessable identifier (128 random bits, base32): run IDs
// are share links, so knowing one run's ID must not reveal another's.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("engine: crypto/rand failed: %v", err)) // the OS is broken; nothing sane to do
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Start validates the parameters, stores a pending run and schedules it.
func (e *Engine) Start(ctx context.Context, workflow string, input map[string]any) (Run, error) {
	return e.StartAs(ctx, Starter{}, workflow, input)
}

// Starter is whose a new run is: its project and the person starting it
// (Run.Project, Run.StartedBy).
type Starter struct {
	Project, By string
}

// StartAs is Start for a run s starts.
func (e *Engine) StartAs(ctx context.Context, s Starter, workflow string, input map[string]any) (Run, error) {
	r, err := e.newRun(workflow, input)
	if err != nil {
		return Run{}, err
	}
	r.Project, r.StartedBy = s.Project, s.By
	if err := e.cfg.Store.CreateRun(ctx, r); err != nil {
		return Run{}, err
	}
	e.started(ctx, r)
	return r, nil
}

// started announces a run just stored and wakes the workers for it.
func (e *Engine) started(ctx context.Context, r Run) {
	e.publish(Event{Type: EventStatus, RunID: r.ID, Status: r.Status})
	e.wake(ctx)
}

// newRun is a pending run of workflow with input as its params (checked),
// not yet stored.
func (e *Engine) newRun(workflow string, input map[string]any) (Run, error) {
	wf, err := e.cfg.Registry.Get(workflow)
	if err != nil {
		return Run{}, err
	}
	params, err := wf.ResolveParams(input)
	if err != nil {
		return Run{}, err
	}
	state := State{}
	if wf.Init != nil {
		if state, err = wf.Init(params); err != nil {
			return Run{}, err
		}
	}
	now := e.cfg.Now().UTC()
	r := Run{
		ID: e.cfg.NewID(), Workflow: wf.Name, Params: params, State: state,
		Step: wf.Entry, Status: StatusPending, Iteration: 1, CreatedAt: now, UpdatedAt: now,
		Source: wf.Source,
	}
	return r, nil
}

// waker is implemented by stores whose job queue can be nudged to pick up
// a just-committed job at once instead of at its next poll.
type waker interface {
	Wake(ctx context.Context)
}

func (e *Engine) wake(ctx context.Context) {
	if w, ok := e.cfg.Store.(waker); ok {
		w.Wake(ctx)
	}
}

// Recover schedules every run a crash left pending or running, and sends
// the gate notices a crash left unsent; call it on start-up. Advancing
// is idempotent, so a run scheduled twice is harmless.
func (e *Engine) Recover(ctx context.Context) (int, error) {
	ids, err := e.cfg.Store.ResumableRuns(ctx)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := e.cfg.Store.ScheduleAdvance(ctx, id); err != nil {
			return 0, err
		}
	}
	if _, err := e.recoverBranches(ctx); err != nil {
		return 0, err
	}
	e.resendNotices(ctx)
	return len(ids), nil
}

func (e *Engine) lock(runID string) func() {
	m, _ := e.locks.LoadOrStore(runID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// Advance executes a run from its last committed step until it waits at a
// checkpoint, escalates or ends. It is what the job queue calls; calling it
// on a run with nothing to do is a no-op.
func (e *Engine) Advance(ctx context.Context, runID string) error {
	defer e.lock(runID)()
	run, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return err
	}
	wf, err := e.Workflow(ctx, run)
	if err != nil {
		return err
	}
	// A run found waiting on a timer is woken once per call; a timer this
	// call reaches ends it, until its own job comes due. A run waiting on
	// its branches joins once per call: a branch's end schedules the next.
	timer := run.Status == StatusWaiting && run.CheckpointID == ""
	joined := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case run.Status == StatusWaiting && run.CheckpointID == "" && wf.fans(run.Step):
			if joined {
				return nil
			}
			joined = true
			step, _ := wf.Step(run.Step)
			run, err = e.join(ctx, wf, run, step)
		case run.Status == StatusWaiting && run.CheckpointID == "" && timer:
			// A timer's job came due (or a duplicate came early): the step
			// runs once more and checks the time itself; if it is early it
			// waits again and this call returns.
			timer = false
			next := run
			next.Status = StatusRunning
			run, err = e.commit(ctx, Commit{From: run.Status, Run: next})
		case run.Status == StatusPending:
			if wf.Backup {
				if berr := e.backupBefore(ctx, run); berr != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					run, err = e.fail(ctx, run, "the backup this workflow takes before a run failed: "+berr.Error())
					break
				}
			}
			next := run
			next.Status = StatusRunning
			run, err = e.commit(ctx, Commit{From: run.Status, Run: next})
		case run.Status == StatusRunning && run.CheckpointID != "":
			run, err = e.resume(ctx, wf, run)
		case run.Status == StatusRunning:
			run, err = e.execute(ctx, wf, run)
		default:
			return nil // waiting, escalated or complete: nothing to do until a decision
		}
		if err != nil {
			if fault.ErrorCode(err) == fault.EConflict {
				// Another advancer moved the run on; it owns it now.
				e.cfg.Logger.Warn("engine: run advanced elsewhere", "run", runID, "err", err)
				return nil
			}
			return err
		}
	}
}

// runBackuper is a store that can back the database up before a run
// (internal/store: VACUUM INTO, recorded with the run's id and size).
type runBackuper interface {
	BackupBeforeRun(ctx context.Context, runID string) error
}

// backupBefore takes the backup a workflow that declares one wants
// before a run's first stage. A crash between the backup and the run's
// first commit takes a second one on resume, which is harmless.
func (e *Engine) backupBefore(ctx context.Context, run Run) error {
	b, ok := e.cfg.Store.(runBackuper)
	if !ok {
		return errors.New("this store cannot take backups")
	}
	if err := b.BackupBeforeRun(ctx, run.ID); err != nil {
		return err
	}
	e.publish(Event{Type: EventProgress, RunID: run.ID, Step: run.Step, Message: "database backed up before the run"})
	return nil
}

func (e *Engine) commit(ctx context.Context, c Commit) (Run, error) {
	c.Run.UpdatedAt = e.cfg.Now().UTC()
	c.Checks = append(c.Checks, e.takeChecks(c.Run.ID)...)
	prev := c.Run.Status
	r, err := e.cfg.Store.Commit(ctx, c)
	if err != nil {
		return Run{}, err
	}
	e.observeCommit(c)
	e.publish(Event{Type: EventStatus, RunID: r.ID, Step: r.Step, Status: r.Status, Iteration: r.Iteration, Message: string(prev)})
	return r, nil
}

func (e *Engine) stepContext(run Run, step string) StepContext {
	sc := StepContext{
		RunID: run.ID, StepID: step, Project: run.Project, Params: run.Params, State: run.State,
		Iteration: run.Iteration, Attempt: run.Attempt + 1, Now: e.cfg.Now().UTC(), emit: e.publish,
		read: e.cfg.Store.Run,
	}
	if o := e.cfg.Observer; o != nil {
		sc.emit = func(ev Event) {
			o.Progress(run.Workflow, ev)
			e.publish(ev)
		}
	}
	if run.Attempt > 0 {
		sc.PrevError = run.Error
	}
	return sc
}

// execute runs the current step once (a handler attempt or a gate visit)
// and commits what happened.
func (e *Engine) execute(ctx context.Context, wf *Workflow, run Run) (Run, error) {
	step, ok := wf.Step(run.Step)
	if !ok {
		return e.fail(ctx, run, fmt.Sprintf("step %q is not in workflow %q (was the workflow changed?)", run.Step, wf.Name))
	}
	if run.Attempt > 0 && step.Retry.AskToResume && !e.retryScheduled(run) {
		return e.askToResume(ctx, run, step)
	}
	e.retries.Delete(run.ID)
	sc := e.stepContext(run, step.ID)
	started := e.cfg.Now().UTC()
	e.publish(Event{Type: EventStepStarted, RunID: run.ID, Step: step.ID, Iteration: run.Iteration, Attempt: sc.Attempt})
	for _, c := range step.Preconditions {
		if !c.Check(sc) {
			// A precondition describes the state the step needs; retrying
			// cannot change it, so a person is asked at once.
			return e.escalate(ctx, run, step, started, sc.Attempt, fmt.Sprintf("precondition %q failed: %s", c.Name, c.Message), Commit{})
		}
	}
	if step.Gate != nil {
		return e.visitGate(ctx, wf, run, step, sc, started)
	}
	if step.Fan != nil {
		return e.fanOut(ctx, wf, run, step, sc, started)
	}
	outcome, update, err := step.Handler(ctx, sc)
	var wait *waitError
	if errors.As(err, &wait) {
		return e.wait(ctx, run, step, started, sc.Attempt, update, wait.until)
	}
	var child *childError
	if errors.As(err, &child) {
		return e.startChild(ctx, wf, run, step, started, sc.Attempt, update, child.spec)
	}
	if err == nil && outcome != Skip { // a skipped step wrote nothing to check
		after := sc
		after.State = run.State.merge(update)
		for _, c := range step.Postconditions {
			if !c.Check(after) {
				err = fmt.Errorf("postcondition %q failed: %s", c.Name, c.Message)
				break
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down (or crashing): the attempt did not finish, so it
			// is not recorded and will run again on resume.
			return run, ctx.Err()
		}
		return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, err)
	}
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
		Outcome: string(outcome), StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(update)}
	c := Commit{Step: rec}
	if outcome != Skip && len(step.ReadBacks) > 0 {
		c.ReadBacks, c.Update = step.ReadBacks, update
	}
	r, err := e.transition(ctx, wf, run, step, outcome, update, c)
	if err != nil && isReadBack(err) {
		// The store rolled the step's commit back: the attempt failed.
		return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, err)
	}
	return r, err
}

// wait parks the run on a timer: waiting, no checkpoint, with the step's
// update and a job scheduled for until, all in one commit.
func (e *Engine) wait(ctx context.Context, run Run, step *StepDef, started time.Time, attempt int, update Update, until time.Time) (Run, error) {
	next := run
	next.State = run.State.merge(update)
	next.Status = StatusWaiting
	next.Attempt, next.Error = 0, ""
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: attempt,
		Outcome: "waiting", StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(update)}
	return e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, WakeAt: until.UTC()})
}

func encodeUpdate(u Update) json.RawMessage {
	if len(u) == 0 {
		return nil
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil
	}
	return b
}

// transition moves the run along the edge for outcome and commits it with
// the extra records in c.
func (e *Engine) transition(ctx context.Context, wf *Workflow, run Run, step *StepDef, outcome Outcome, update Update, c Commit) (Run, error) {
	next := run
	next.State = run.State.merge(update)
	next.Attempt = 0
	next.Error = ""
	next.CheckpointID = ""
	to, ok := step.resolve(outcome)
	if step.ID == wf.OnFailure && wf.OnFailure != "" {
		// The run's on_error hooks have run: it fails with its first error.
		msg, _, _ := Get[string](next.State, FailureKey)
		next.Status, next.Error, next.Step = StatusFailed, msg, ""
		c.From, c.Run = run.Status, next
		return e.commit(ctx, c)
	}
	if !ok {
		msg := fmt.Sprintf("step %q returned %q, which has no transition", step.ID, outcome)
		if outcome == Fail {
			msg = fmt.Sprintf("step %q failed", step.ID)
		}
		next.Status = StatusFailed
		next.Error = msg
		next.Step = ""
		c.From, c.Run = run.Status, wf.failing(next, msg)
		return e.commit(ctx, c)
	}
	if outcome == Iterate {
		if run.Iteration >= wf.maxIterations(run.Params) {
			to = step.exit() // the loop bound is reached: take the exit path
		} else {
			next.Iteration = run.Iteration + 1
		}
	}
	if to == End && wf.OnComplete != "" && step.ID != wf.OnComplete {
		to = wf.OnComplete // the run's on_complete hooks run first
	}
	if to == End {
		next.Status = StatusCompleted
		next.Step = ""
	} else {
		next.Step = to
		next.Status = StatusRunning
	}
	c.From, c.Run = run.Status, next
	r, err := e.commit(ctx, c)
	if err == nil {
		e.publish(Event{Type: EventStepFinished, RunID: run.ID, Step: step.ID, Outcome: outcome, Iteration: run.Iteration})
	}
	return r, err
}

// retryOrEscalate records a failed attempt: the step runs again after its
// backoff while attempts remain, and otherwise takes its retry policy's
// Then (by default a person is asked). A Stop error skips the remaining
// attempts and takes its own Then. What a KeepOnFailure error keeps is
// committed with the attempt on every path.
func (e *Engine) retryOrEscalate(ctx context.Context, wf *Workflow, run Run, step *StepDef, started time.Time, attempt int, failure error) (Run, error) {
	msg := failure.Error()
	kept := keptOf(failure)
	var stop *stopError
	if errors.As(failure, &stop) {
		return e.giveUp(ctx, wf, run, step, started, attempt, stop.then, msg, Commit{}, kept.merge(stop.update))
	}
	if attempt >= step.Retry.attempts() {
		return e.giveUp(ctx, wf, run, step, started, attempt, step.Retry.Then, msg, Commit{}, kept)
	}
	next := run
	if len(kept) > 0 {
		next.State = run.State.merge(kept)
	}
	next.Attempt = attempt
	next.Error = msg
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: attempt,
		Outcome: "error", Error: msg, StartedAt: started, FinishedAt: e.cfg.Now().UTC()}
	r, err := e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec})
	if err != nil {
		return r, err
	}
	e.publish(Event{Type: EventStepFinished, RunID: run.ID, Step: step.ID, Outcome: "error", Message: msg, Attempt: attempt})
	e.retries.Store(run.ID, attempt)
	return r, e.cfg.Sleep(ctx, step.Retry.delay(attempt))
}

// retryScheduled reports whether this process scheduled the retry the run
// waits for (its failed attempt is the one recorded).
func (e *Engine) retryScheduled(run Run) bool {
	n, ok := e.retries.Load(run.ID)
	return ok && n.(int) == run.Attempt
}

// askToResume stops a run that a restart found waiting to retry a step
// whose policy asks a person first: an escalation with reason
// EscalationResume, showing the step's last error, until a person says
// resume (approve), skip (edit) or cancel (reject).
func (e *Engine) askToResume(ctx context.Context, run Run, step *StepDef) (Run, error) {
	now := e.cfg.Now().UTC()
	cp, err := NewCheckpoint(KindEscalation, EscalationPayload{Step: step.ID, Error: run.Error, Attempts: run.Attempt,
		Reason: EscalationResume, MaxAttempts: step.Retry.attempts()}, run.ID, run.Iteration, now)
	if err != nil {
		return run, err
	}
	cp.ID, cp.Step = e.cfg.NewID(), step.ID
	next := run
	next.Status = StatusEscalated
	next.CheckpointID = cp.ID
	msg := fmt.Sprintf("the server restarted while step %q waited to retry after %d of %d attempts; its definition asks a person to resume it (last error: %s)",
		step.ID, run.Attempt, step.Retry.attempts(), run.Error)
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: run.Attempt,
		Outcome: "escalated", Error: msg, StartedAt: now, FinishedAt: now}
	r, err := e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, NewCheckpoint: &cp})
	if err == nil {
		e.publish(Event{Type: EventCheckpoint, RunID: run.ID, Step: step.ID, Kind: KindEscalation, Message: msg})
	}
	return r, err
}

// giveUp ends a step that will not be tried again: then "" escalates; an
// outcome with a transition takes it; any other fails the run with msg.
// c carries what the commit must also resolve (a decided checkpoint);
// update is what the step still records on its way out (StopWith).
func (e *Engine) giveUp(ctx context.Context, wf *Workflow, run Run, step *StepDef, started time.Time, attempt int, then Outcome, msg string, c Commit, update Update) (Run, error) {
	if then == "" {
		run.State = run.State.merge(update)
		return e.escalate(ctx, run, step, started, attempt, msg, c)
	}
	c.Step = &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: attempt,
		Outcome: string(then), Error: msg, StartedAt: started, FinishedAt: e.cfg.Now().UTC()}
	if _, ok := step.resolve(then); ok {
		return e.transition(ctx, wf, run, step, then, update, c)
	}
	next := run
	next.State = run.State.merge(update)
	next.Status, next.Step, next.CheckpointID = StatusFailed, "", ""
	next.Attempt = attempt
	next.Error = fmt.Sprintf("step %q failed: %s", step.ID, msg)
	c.Step.Outcome = "failed"
	c.From, c.Run = run.Status, wf.failing(next, next.Error)
	return e.commit(ctx, c)
}

// escalate stops the run at an escalation checkpoint: a person chooses
// retry (approve), skip (edit) or abort (reject). Escalations never go to a
// programmatic handler: an always-approve handler would retry forever.
// c carries what the commit must also write (a gate timer that fired).
func (e *Engine) escalate(ctx context.Context, run Run, step *StepDef, started time.Time, attempt int, msg string, c Commit) (Run, error) {
	cp, err := NewCheckpoint(KindEscalation, EscalationPayload{Step: step.ID, Error: msg, Attempts: attempt}, run.ID, run.Iteration, e.cfg.Now())
	if err != nil {
		return run, err
	}
	cp.ID, cp.Step = e.cfg.NewID(), step.ID
	next := run
	next.Status = StatusEscalated
	next.Attempt = attempt
	next.Error = msg
	next.CheckpointID = cp.ID
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: attempt,
		Outcome: "escalated", Error: msg, StartedAt: started, FinishedAt: e.cfg.Now().UTC()}
	c.From, c.Run, c.Step, c.NewCheckpoint = run.Status, next, rec, &cp
	r, err := e.commit(ctx, c)
	if err == nil {
		e.publish(Event{Type: EventCheckpoint, RunID: run.ID, Step: step.ID, Kind: KindEscalation, Message: msg})
	}
	return r, err
}

func (e *Engine) fail(ctx context.Context, run Run, msg string) (Run, error) {
	next := run
	next.Status = StatusFailed
	next.Error = msg
	next.Step = ""
	return e.commit(ctx, Commit{From: run.Status, Run: next, Step: &StepRecord{RunID: run.ID, Step: run.Step, Iteration: run.Iteration,
		Outcome: "failed", Error: msg, StartedAt: e.cfg.Now().UTC(), FinishedAt: e.cfg.Now().UTC()}})
}

// visitGate raises the gate's checkpoint, asks the handler, and either
// waits (pending) or applies the decision in the same commit.
func (e *Engine) visitGate(ctx context.Context, wf *Workflow, run Run, step *StepDef, sc StepContext, started time.Time) (Run, error) {
	g := step.Gate
	skip := g.Enabled != nil && !g.Enabled(sc)
	var pre Update
	if g.Precheck != nil && !skip {
		var checks []GateCheck
		sc.check = func(c GateCheck) { checks = append(checks, c) }
		outcome, update, done, err := g.Precheck(ctx, sc)
		sc.check = nil
		if len(checks) > 0 {
			e.checks.Store(run.ID, checks)
			defer e.checks.Delete(run.ID) // a visit that ends without a commit
		}
		if err != nil {
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
			return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, err)
		}
		if done {
			rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
				Outcome: string(outcome), StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(update)}
			return e.transition(ctx, wf, run, step, outcome, update, Commit{Step: rec})
		}
		pre = update
		sc.State = run.State.merge(pre)
	}
	if e.cfg.Handler == nil || skip {
		auto := g.Auto
		if auto == "" {
			auto = OK
		}
		rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
			Outcome: string(auto), StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: json.RawMessage(gateSkippedOutput)}
		return e.transition(ctx, wf, run, step, auto, pre, Commit{Step: rec})
	}
	payload, err := g.Payload(ctx, sc)
	if err == nil {
		var cp Checkpoint
		cp, err = NewCheckpoint(g.Kind, payload, run.ID, run.Iteration, e.cfg.Now())
		if err == nil {
			cp.ID, cp.Step = e.cfg.NewID(), step.ID
			return e.ask(ctx, wf, run, step, sc, cp, started, pre)
		}
	}
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, err)
}

// ask puts the checkpoint to the handler; pre is the Precheck's update,
// committed with the checkpoint or with the decision's transition.
func (e *Engine) ask(ctx context.Context, wf *Workflow, run Run, step *StepDef, sc StepContext, cp Checkpoint, started time.Time, pre Update) (Run, error) {
	d, err := e.cfg.Handler.Handle(ctx, cp)
	if errors.Is(err, ErrPending) {
		next := run
		next.Status = StatusWaiting
		next.CheckpointID = cp.ID
		next.State = run.State.merge(pre)
		rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
			Outcome: "checkpoint", StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(pre)}
		timer, notices := e.gateTimer(run, step, cp)
		r, err := e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, NewCheckpoint: &cp, Timer: timer, Notices: notices})
		if err == nil {
			e.publish(Event{Type: EventCheckpoint, RunID: run.ID, Step: step.ID, Kind: cp.Kind, Iteration: run.Iteration})
			e.notify(ctx, step.Gate.Timeout, notices)
		}
		return r, err
	}
	if err == nil {
		err = e.validateDecision(step, sc, cp, d)
	}
	if err != nil {
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, fmt.Errorf("checkpoint handler: %w", err))
	}
	cp.Status = CheckpointDecided
	dec := &DecisionRecord{Decision: d, CheckpointID: cp.ID, DecidedAt: e.cfg.Now().UTC()}
	outcome, update, err := step.Gate.Apply(ctx, sc, cp, d)
	if err != nil {
		return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, fmt.Errorf("applying decision: %w", err))
	}
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
		Outcome: string(outcome), StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: decisionOutput(d)}
	return e.transition(ctx, wf, run, step, outcome, pre.merge(update), Commit{Step: rec, NewCheckpoint: &cp, Decision: dec})
}

func decisionOutput(d Decision) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"action": d.Action, "decided_by": d.DecidedBy})
	return b
}

func (e *Engine) validateDecision(step *StepDef, sc StepContext, cp Checkpoint, d Decision) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if cp.Kind == KindEscalation {
		if d.Action == Edit {
			if _, ok := step.resolve(Skip); !ok {
				return fault.Errorf(fault.EInvalid, "step %q cannot be skipped: it has no skip or default transition; retry or abort instead", step.ID)
			}
		}
		return nil
	}
	if step.Gate == nil || step.Gate.Kind != cp.Kind {
		return fault.Errorf(fault.EInvalid, "step %q does not take %q decisions", step.ID, cp.Kind)
	}
	if step.Gate.Validate != nil {
		return step.Gate.Validate(sc, cp, d)
	}
	return nil
}

// resume applies the decision recorded for the run's current checkpoint.
func (e *Engine) resume(ctx context.Context, wf *Workflow, run Run) (Run, error) {
	cp, dec, err := e.cfg.Store.Checkpoint(ctx, run.CheckpointID)
	if err != nil {
		return run, err
	}
	if dec == nil {
		return run, fault.Errorf(fault.EInternal, "run %s is running at checkpoint %s, which has no decision", run.ID, cp.ID)
	}
	step, ok := wf.Step(cp.Step)
	if !ok {
		return e.fail(ctx, run, fmt.Sprintf("checkpoint step %q is not in workflow %q", cp.Step, wf.Name))
	}
	sc := e.stepContext(run, step.ID)
	now := e.cfg.Now().UTC()
	rec := &StepRecord{RunID: run.ID, Step: step.ID, MaxAttempts: step.Retry.attempts(), Iteration: run.Iteration, Attempt: sc.Attempt,
		StartedAt: dec.DecidedAt, FinishedAt: now, Output: decisionOutput(dec.Decision)}
	if cp.Kind == KindEscalation {
		switch dec.Action {
		case Approve: // retry from a fresh attempt count
			next := run
			next.Attempt, next.Error, next.CheckpointID = 0, "", ""
			rec.Outcome = "retry"
			if p, err := PayloadAs[EscalationPayload](cp); err == nil && p.Reason == EscalationResume {
				// Resumed on a person's word: the retry the restart held
				// back runs now, its attempts counted on.
				next.Attempt, next.Error = run.Attempt, run.Error
				rec.Outcome = "resumed"
				e.retries.Store(run.ID, run.Attempt)
			}
			return e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, ResolveCheckpoint: cp.ID})
		case Edit: // skip the step
			rec.Outcome = string(Skip)
			return e.transition(ctx, wf, run, step, Skip, nil, Commit{Step: rec, ResolveCheckpoint: cp.ID})
		default: // abort
			next := run
			next.Status, next.Step, next.CheckpointID = StatusCanceled, "", ""
			next.Error = fmt.Sprintf("aborted by %s at step %q", dec.DecidedBy, step.ID)
			rec.Outcome = "aborted"
			return e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, ResolveCheckpoint: cp.ID})
		}
	}
	if step.Gate == nil {
		return e.fail(ctx, run, fmt.Sprintf("checkpoint step %q is no longer a gate", step.ID))
	}
	outcome, update, err := step.Gate.Apply(ctx, sc, cp, dec.Decision)
	if err != nil {
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		var stop *stopError
		if errors.As(err, &stop) {
			// The decision is valid but the gate may not follow it (a loop
			// bound used up): the gate's own Then says what happens.
			return e.giveUp(ctx, wf, run, step, now, sc.Attempt, stop.then, err.Error(), Commit{ResolveCheckpoint: cp.ID}, stop.update)
		}
		return e.escalate(ctx, run, step, now, sc.Attempt, "applying decision: "+err.Error(), Commit{})
	}
	rec.Outcome = string(outcome)
	return e.transition(ctx, wf, run, step, outcome, update, Commit{Step: rec, ResolveCheckpoint: cp.ID})
}

// Decide records a person's (or script's) decision on a pending checkpoint
// and schedules the run to resume. Invalid revised data is refused here
// (fault.EInvalid) so it never reaches the run; a checkpoint decided already is an
// fault.EConflict naming who decided and when, and the run is unaffected.
func (e *Engine) Decide(ctx context.Context, runID, checkpointID string, d Decision) error {
	if err := d.Validate(); err != nil {
		return err
	}
	run, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return err
	}
	cp, dec, err := e.cfg.Store.Checkpoint(ctx, checkpointID)
	if err != nil {
		return err
	}
	if cp.RunID != runID {
		return fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", runID, checkpointID)
	}
	if dec != nil {
		return conflictDecided(dec)
	}
	if cp.Status != CheckpointPending {
		return fault.Errorf(fault.EConflict, "this checkpoint is %s; the run has moved on", cp.Status)
	}
	wf, err := e.Workflow(ctx, run)
	if err != nil {
		return err
	}
	step, ok := wf.Step(cp.Step)
	if !ok {
		return fault.Errorf(fault.EInvalid, "checkpoint step %q is not in workflow %q", cp.Step, wf.Name)
	}
	if g := step.Gate; g != nil && g.Approval != nil && g.Kind == cp.Kind {
		_, err := e.Vote(ctx, runID, checkpointID, d) // several people decide: this is one vote
		return err
	}
	if err := e.validateDecision(step, e.stepContext(run, step.ID), cp, d); err != nil {
		return err
	}
	if err := e.cfg.Store.Decide(ctx, runID, DecisionRecord{Decision: d, CheckpointID: cp.ID, DecidedAt: e.cfg.Now().UTC()}); err != nil {
		return err
	}
	if o := e.cfg.Observer; o != nil {
		o.Decided(run.Workflow, cp.Kind, d.Action)
	}
	e.publish(Event{Type: EventDecision, RunID: runID, Step: cp.Step, Kind: cp.Kind, Message: string(d.Action) + " by " + d.DecidedBy})
	e.wake(ctx)
	return nil
}

// ConflictDecided is the error for a second decision on one checkpoint.
// People read it (the 409 page), so the time is written as the run page
// writes decision times, not as an ISO timestamp.
func conflictDecided(dec *DecisionRecord) error {
	return fault.Errorf(fault.EConflict, "this checkpoint was already decided by %s at %s (%s)",
		dec.DecidedBy, dec.DecidedAt.UTC().Format("2006-01-02 15:04:05 UTC"), dec.Action)
}

// ConflictDecided builds the conflict error stores return when a checkpoint
// has been decided already, so every layer words it the same way.
func ConflictDecided(dec DecisionRecord) error { return conflictDecided(&dec) }

// Cancel stops a run that has not ended; its pending checkpoint expires.
func (e *Engine) Cancel(ctx context.Context, runID, by string) error {
	defer e.lock(runID)()
	run, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return err
	}
	if run.IsComplete() {
		return fault.Errorf(fault.EConflict, "run is already %s", run.Status)
	}
	next := run
	cpID := run.CheckpointID
	next.Status, next.Step, next.CheckpointID = StatusCanceled, "", ""
	next.Error = "canceled by " + by
	now := e.cfg.Now().UTC()
	_, err = e.commit(ctx, Commit{From: run.Status, Run: next, ResolveCheckpoint: cpID, EndBranches: true, Step: &StepRecord{RunID: run.ID, Step: run.Step,
		Iteration: run.Iteration, Outcome: "canceled", Error: next.Error, StartedAt: now, FinishedAt: now}})
	if err != nil {
		return err
	}
	return e.cancelChildren(ctx, run.ID, by)
}

// childLister is implemented by stores that link child runs to their
// parent (store.Store).
type childLister interface {
	RunChildren(ctx context.Context, runID string) ([]ChildLink, error)
}

// cancelChildren cancels the runs a canceled run was waiting for: nobody
// would read how they end. Runs started without waiting go on.
func (e *Engine) cancelChildren(ctx context.Context, runID, by string) error {
	cl, ok := e.cfg.Store.(childLister)
	if !ok {
		return nil
	}
	children, err := cl.RunChildren(ctx, runID)
	if err != nil {
		return err
	}
	for _, c := range children {
		if !c.Wait || c.Status.IsComplete() {
			continue
		}
		if err := e.Cancel(ctx, c.RunID, by+" (its parent run was canceled)"); err != nil && fault.ErrorCode(err) != fault.EConflict {
			return err
		}
	}
	return nil
}

func (e *Engine) publish(ev Event) {
	if ev.At.IsZero() {
		ev.At = e.cfg.Now().UTC()
	}
	e.cfg.Events.Publish(ev)
}
