package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
)

// Fan makes a step run its work as branches (a parallel stage): each
// branch is its own durable job, runs its own steps along their Next
// until End, and commits its progress on its own, so branches run
// concurrently (bounded by the job queue's branch workers), a crash
// re-runs only the branches that had not finished, and a failed branch
// is retried per its step's policy without touching the others. The run
// waits at the step meanwhile; each finished branch asks the run to
// advance, and Join decides, from the branches' rows, when it may go on.
type Fan struct {
	// Branches lists this visit's branches, evaluated when the step starts
	// (a for_each list, branch conditions).
	Branches func(ctx context.Context, sc StepContext) (FanOut, error)
	// Steps are the steps branches run, by ID. A step's Handler (or its
	// Gate's Precheck, which must decide) does the work; its Next says
	// where the branch goes, End ending the branch; an outcome without a
	// transition fails the branch. A step's State is the run's (as of the
	// fan's start) merged with the branch's own.
	Steps map[string]*StepDef
	// Join decides from the branches (in position order) whether the step
	// is done: decided false waits for more branches; otherwise the step
	// takes outcome with update. An error is a failed attempt of the step.
	Join func(sc StepContext, branches []Branch) (outcome Outcome, update Update, decided bool, err error)
}

// FanOut is what a parallel step's visit starts with.
type FanOut struct {
	Branches []BranchSpec
	// Update is committed with the branches (the stage's visit counted).
	Update Update
	// Skip takes the step's Skip transition instead of fanning out (the
	// stage's condition does not hold).
	Skip bool
}

// BranchSpec is one branch as Fan.Branches lists it.
type BranchSpec struct {
	ID string
	// Entry is the branch's first step (a key of Fan.Steps).
	Entry string
	// State is the branch's own starting state (a for_each item).
	State State
	// Skip records the branch as skipped; it never runs.
	Skip bool
}

// BranchStatus is where a branch is:
// pending → running → completed | failed, or skipped, or canceled once
// the join no longer needs it.
type BranchStatus string

// The branch statuses.
const (
	BranchPending   BranchStatus = "pending"
	BranchRunning   BranchStatus = "running"
	BranchCompleted BranchStatus = "completed"
	BranchFailed    BranchStatus = "failed"
	BranchSkipped   BranchStatus = "skipped"
	BranchCanceled  BranchStatus = "canceled"
)

// Open reports whether the branch may still run.
func (s BranchStatus) Open() bool { return s == BranchPending || s == BranchRunning }

// Branch is one branch's durable record.
type Branch struct {
	RunID string
	// Fan is the seq of the commit that started the parallel step's
	// visit: a step visited twice (a loop) has two fans.
	Fan      int64
	ID       string
	Step     string // the parallel step
	Position int
	Status   BranchStatus
	// Cursor is the branch's next step ("" once finished).
	Cursor string
	// Attempt counts failed attempts of Cursor.
	Attempt int
	State   State
	Error   string
	// Version grows by one per branch commit (optimistic locking).
	Version    int64
	StartedAt  time.Time
	FinishedAt time.Time
}

// BranchCommit is one branch transition, applied atomically by the store.
type BranchCommit struct {
	// Branch holds the new values; Branch.Version is the version read, and
	// the store refuses the commit (fault.EConflict) when the branch moved
	// on or is no longer open.
	Branch Branch
	// Step is the audit record of the branch step's attempt.
	Step *StepRecord
	// RetryAt, when set, schedules the branch's job again at that time.
	RetryAt time.Time
}

// fanStore is the persistence parallel steps need.
type fanStore interface {
	// Branches returns the branches of the run's latest fan at step, in
	// position order (none when the step never fanned out).
	Branches(ctx context.Context, runID, step string) ([]Branch, error)
	// Branch returns one branch.
	Branch(ctx context.Context, runID string, fan int64, id string) (Branch, error)
	// CommitBranch applies one branch transition.
	CommitBranch(ctx context.Context, c BranchCommit) (Branch, error)
	// OpenBranches lists the branches a crash may have left unfinished.
	OpenBranches(ctx context.Context) ([]Branch, error)
	// ScheduleBranch queues a branch's job.
	ScheduleBranch(ctx context.Context, b Branch) error
}

func (e *Engine) fans() (fanStore, error) {
	fs, ok := e.cfg.Store.(fanStore)
	if !ok {
		return nil, errors.New("engine: this store cannot run parallel steps")
	}
	return fs, nil
}

// fanOut starts a visit of a parallel step: its branches are committed,
// with a job each, in the same transaction that parks the run.
func (e *Engine) fanOut(ctx context.Context, wf *Workflow, run Run, step *StepDef, sc StepContext, started time.Time) (Run, error) {
	out, err := step.Fan.Branches(ctx, sc)
	if err != nil {
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		return e.retryOrEscalate(ctx, wf, run, step, started, sc.Attempt, err)
	}
	now := e.cfg.Now().UTC()
	if out.Skip {
		rec := &StepRecord{RunID: run.ID, Step: step.ID, Iteration: run.Iteration, Attempt: sc.Attempt,
			Outcome: string(Skip), StartedAt: started, FinishedAt: now}
		return e.transition(ctx, wf, run, step, Skip, out.Update, Commit{Step: rec})
	}
	branches := make([]Branch, 0, len(out.Branches))
	for i, sp := range out.Branches {
		b := Branch{RunID: run.ID, Fan: run.Version + 1, ID: sp.ID, Step: step.ID, Position: i,
			Status: BranchPending, Cursor: sp.Entry, State: sp.State}
		if sp.Skip {
			b.Status, b.Cursor, b.StartedAt, b.FinishedAt = BranchSkipped, "", now, now
		} else if _, ok := step.Fan.Steps[sp.Entry]; !ok {
			return e.fail(ctx, run, fmt.Sprintf("step %q: branch %q starts at %q, which is not a branch step", step.ID, sp.ID, sp.Entry))
		}
		branches = append(branches, b)
	}
	next := run
	next.State = run.State.merge(out.Update)
	next.Status = StatusWaiting
	next.Attempt, next.Error = 0, ""
	rec := &StepRecord{RunID: run.ID, Step: step.ID, Iteration: run.Iteration, Attempt: sc.Attempt,
		Outcome: "branches", StartedAt: started, FinishedAt: now, Output: encodeUpdate(out.Update)}
	r, err := e.commit(ctx, Commit{From: run.Status, Run: next, Step: rec, Branches: branches})
	if err != nil {
		return r, err
	}
	if w, ok := e.cfg.Store.(interface{ WakeBranches(context.Context) }); ok {
		w.WakeBranches(ctx)
	}
	return r, nil // Advance joins next: at once when no branch runs
}

// join asks the step's Join about its latest fan and, once decided, moves
// the run on, canceling the branches it no longer needs in the same
// commit. Undecided, the run keeps waiting.
func (e *Engine) join(ctx context.Context, wf *Workflow, run Run, step *StepDef) (Run, error) {
	fs, err := e.fans()
	if err != nil {
		return run, err
	}
	branches, err := fs.Branches(ctx, run.ID, step.ID)
	if err != nil {
		return run, err
	}
	sc := e.stepContext(run, step.ID)
	started := e.cfg.Now().UTC()
	outcome, update, decided, err := step.Fan.Join(sc, branches)
	if err == nil && !decided {
		return run, nil
	}
	if err != nil {
		then := step.Retry.Then // joining again cannot change the branches
		var stop *stopError
		if errors.As(err, &stop) {
			then = stop.then
		}
		return e.giveUp(ctx, wf, run, step, started, sc.Attempt, then, err.Error(), Commit{EndBranches: true}, keptOf(err))
	}
	rec := &StepRecord{RunID: run.ID, Step: step.ID, Iteration: run.Iteration, Attempt: sc.Attempt,
		Outcome: string(outcome), StartedAt: started, FinishedAt: e.cfg.Now().UTC(), Output: encodeUpdate(update)}
	return e.transition(ctx, wf, run, step, outcome, update, Commit{Step: rec, EndBranches: true})
}

// AdvanceBranch runs one branch from its last committed step until it
// ends or waits (a retry's backoff, a timer). It is what the job queue
// calls; a branch that has finished, or whose run has moved on, is a
// no-op.
func (e *Engine) AdvanceBranch(ctx context.Context, runID string, fan int64, id string) error {
	defer e.lock(fmt.Sprintf("%s/%d/%s", runID, fan, id))()
	fs, err := e.fans()
	if err != nil {
		return err
	}
	b, err := fs.Branch(ctx, runID, fan, id)
	if err != nil || !b.Status.Open() {
		return err
	}
	run, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return err
	}
	if run.Step != b.Step || run.Status != StatusWaiting || run.CheckpointID != "" {
		return nil // the run moved on; its commit canceled the branch
	}
	wf, err := e.Workflow(ctx, run)
	if err != nil {
		return err
	}
	parallel, ok := wf.Step(b.Step)
	if !ok || parallel.Fan == nil {
		return fmt.Errorf("engine: run %s: step %q has no branches", runID, b.Step)
	}
	for b.Status.Open() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var wait bool
		b, wait, err = e.branchStep(ctx, fs, parallel, run, b)
		if err != nil || wait {
			return ignoreConflict(err)
		}
	}
	return nil
}

// ignoreConflict treats a refused branch commit as the end of this job:
// the join canceled the branch, or another job ran it.
func ignoreConflict(err error) error {
	if fault.ErrorCode(err) == fault.EConflict {
		return nil
	}
	return err
}

// branchStep runs the branch's current step once and commits what
// happened; wait is true when the branch's job is scheduled again later.
func (e *Engine) branchStep(ctx context.Context, fs fanStore, parallel *StepDef, run Run, b Branch) (Branch, bool, error) {
	step, ok := parallel.Fan.Steps[b.Cursor]
	if !ok {
		return e.endBranch(ctx, fs, parallel, run, b, BranchFailed, fmt.Sprintf("branch step %q is not in step %q", b.Cursor, parallel.ID), nil)
	}
	sc := e.stepContext(run, step.ID)
	sc.State = run.State.merge(b.State)
	sc.Attempt = b.Attempt + 1
	sc.PrevError = ""
	if b.Attempt > 0 {
		sc.PrevError = b.Error
	}
	started := e.cfg.Now().UTC()
	rec := &StepRecord{RunID: run.ID, Step: step.ID, Iteration: run.Iteration, Attempt: sc.Attempt, StartedAt: started}
	var (
		outcome Outcome
		update  Update
		err     error
	)
	switch {
	case step.Handler != nil:
		outcome, update, err = step.Handler(ctx, sc)
	case step.Gate != nil && step.Gate.Precheck != nil:
		var done bool
		outcome, update, done, err = step.Gate.Precheck(ctx, sc)
		if err == nil && !done {
			err = Stop(fmt.Errorf("gate %q would ask a person, which a branch cannot", step.ID), Fail)
		}
	default:
		err = Stop(fmt.Errorf("branch step %q has nothing to run", step.ID), Fail)
	}
	if err != nil && ctx.Err() != nil {
		return b, true, ctx.Err() // shutting down: the attempt is not recorded and runs again
	}
	next := b
	next.Status = BranchRunning
	if next.StartedAt.IsZero() {
		next.StartedAt = started
	}
	var wait *waitError
	if errors.As(err, &wait) {
		next.State = b.State.merge(update)
		rec.Outcome, rec.FinishedAt, rec.Output = "waiting", e.cfg.Now().UTC(), encodeUpdate(update)
		nb, cerr := fs.CommitBranch(ctx, BranchCommit{Branch: next, Step: rec, RetryAt: wait.until.UTC()})
		return nb, true, cerr
	}
	if err != nil {
		if kept := keptOf(err); len(kept) > 0 { // what the attempt spent, kept in the branch
			next.State = b.State.merge(kept)
		}
		rec.Outcome, rec.Error, rec.FinishedAt = "error", err.Error(), e.cfg.Now().UTC()
		then := step.Retry.Then
		var stop *stopError
		retry := !errors.As(err, &stop) && sc.Attempt < step.Retry.attempts()
		if stop != nil {
			then = stop.then
		}
		if retry {
			next.Attempt, next.Error = sc.Attempt, err.Error()
			nb, cerr := fs.CommitBranch(ctx, BranchCommit{Branch: next, Step: rec,
				RetryAt: e.cfg.Now().UTC().Add(step.Retry.delay(sc.Attempt))})
			return nb, true, cerr
		}
		if to, ok := step.resolve(then); ok && then != "" {
			return e.moveBranch(ctx, fs, parallel, run, next, to, nil, rec)
		}
		return e.endBranch(ctx, fs, parallel, run, next, BranchFailed, fmt.Sprintf("%s: %s", step.ID, err), rec)
	}
	rec.Outcome, rec.FinishedAt, rec.Output = string(outcome), e.cfg.Now().UTC(), encodeUpdate(update)
	to, ok := step.resolve(outcome)
	if !ok {
		next.State = b.State.merge(update)
		return e.endBranch(ctx, fs, parallel, run, next, BranchFailed, fmt.Sprintf("%s: %s", step.ID, outcomeMessage(outcome)), rec)
	}
	return e.moveBranch(ctx, fs, parallel, run, next, to, update, rec)
}

func outcomeMessage(o Outcome) string {
	if o == Fail {
		return "failed"
	}
	return fmt.Sprintf("returned %q, which has no transition", o)
}

// moveBranch commits a branch step's result and its move to the next step
// (End finishes the branch).
func (e *Engine) moveBranch(ctx context.Context, fs fanStore, parallel *StepDef, run Run, b Branch, to string, update Update, rec *StepRecord) (Branch, bool, error) {
	b.State = b.State.merge(update)
	b.Attempt, b.Error = 0, ""
	if to == End {
		return e.endBranch(ctx, fs, parallel, run, b, BranchCompleted, "", rec)
	}
	b.Cursor = to
	nb, err := fs.CommitBranch(ctx, BranchCommit{Branch: b, Step: rec})
	return nb, false, err
}

// endBranch commits a branch's end and asks the run to join.
func (e *Engine) endBranch(ctx context.Context, fs fanStore, parallel *StepDef, run Run, b Branch, status BranchStatus, msg string, rec *StepRecord) (Branch, bool, error) {
	b.Status, b.Cursor, b.Error = status, "", msg
	b.FinishedAt = e.cfg.Now().UTC()
	if b.StartedAt.IsZero() {
		b.StartedAt = b.FinishedAt
	}
	nb, err := fs.CommitBranch(ctx, BranchCommit{Branch: b, Step: rec})
	if err != nil {
		return nb, false, err
	}
	e.publish(Event{Type: EventProgress, RunID: b.RunID, Step: b.Step,
		Message: fmt.Sprintf("branch %s %s", b.ID, status), Data: map[string]string{"branch": b.ID, "status": string(status)}})
	return nb, false, e.maybeJoin(ctx, fs, parallel, run)
}

// maybeJoin asks the run to advance once its join can decide. Each branch
// asks after its own end is committed, so the last branch to end sees
// every other end, and a decidable join stays decidable: no join is
// missed. A crash between the branch's commit and this call leaves the
// run waiting with its branches ended, which Recover resumes
// (Store.ResumableRuns). Asking only then, not at every branch's end,
// saves a job and a join per branch.
func (e *Engine) maybeJoin(ctx context.Context, fs fanStore, parallel *StepDef, run Run) error {
	branches, err := fs.Branches(ctx, run.ID, parallel.ID)
	if err != nil {
		return err
	}
	_, _, decided, err := parallel.Fan.Join(e.stepContext(run, parallel.ID), branches)
	if err == nil && !decided {
		return nil
	}
	return e.cfg.Store.ScheduleAdvance(ctx, run.ID)
}

// recoverBranches queues every branch a crash left open.
func (e *Engine) recoverBranches(ctx context.Context) (int, error) {
	fs, ok := e.cfg.Store.(fanStore)
	if !ok {
		return 0, nil
	}
	open, err := fs.OpenBranches(ctx)
	if err != nil {
		return 0, err
	}
	for _, b := range open {
		if err := fs.ScheduleBranch(ctx, b); err != nil {
			return 0, err
		}
	}
	return len(open), nil
}
