package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// BranchQueue is the River queue branch jobs run in: its own, so the
// number of branches running at once (QueueOptions.BranchWorkers) is
// bounded apart from the runs advancing.
const BranchQueue = "branches"

// BranchArgs is the River job that advances one branch of a parallel
// stage. Like advances, branch jobs are idempotent.
type BranchArgs struct {
	RunID  string `json:"run_id"`
	Fan    int64  `json:"fan"`
	Branch string `json:"branch"`
}

// Kind implements river.JobArgs.
func (BranchArgs) Kind() string { return "advance_branch" }

// InsertOpts implements river.JobArgsWithInsertOpts: branch jobs go to
// their own queue.
func (BranchArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: BranchQueue} }

// BranchAdvancer is what the branch worker calls: engine.Engine implements it.
type BranchAdvancer interface {
	AdvanceBranch(ctx context.Context, runID string, fan int64, id string) error
}

type branchWorker struct {
	river.WorkerDefaults[BranchArgs]
	adv     BranchAdvancer
	store   *Store
	timeout time.Duration // jobTimeout's answer
}

// Work advances the branch; a full disk waits as advanceWorker.Work does.
func (w *branchWorker) Work(ctx context.Context, job *river.Job[BranchArgs]) error {
	for {
		err := w.adv.AdvanceBranch(ctx, job.Args.RunID, job.Args.Fan, job.Args.Branch)
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return err
		}
		if err := w.store.waitWritable(ctx); err != nil {
			return err
		}
	}
}

// Timeout is jobTimeout: on SQLite a branch's own stage timeouts bound it,
// not River; on PostgreSQL the rescue bound, so a dead replica's branch
// is run again by another.
func (w *branchWorker) Timeout(*river.Job[BranchArgs]) time.Duration { return w.timeout }

func branchArgs(b engine.Branch) BranchArgs {
	return BranchArgs{RunID: b.RunID, Fan: b.Fan, Branch: b.ID}
}

// insertBranches writes a fan's branches and queues a job for each one
// that will run, inside the commit that parks the run.
func (s *Store) insertBranches(ctx context.Context, tx *tx, fan int64, bs []engine.Branch) error {
	var jobs []river.InsertManyParams
	for _, b := range bs {
		b.Fan = fan
		st, err := encodeState(b.State)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO branch_runs
			(run_id, fan, branch, step, position, status, cursor, attempt, state, error, version, started_at, finished_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)`,
			b.RunID, fan, b.ID, b.Step, b.Position, string(b.Status), b.Cursor, st, b.Error,
			optTime(b.StartedAt), optTime(b.FinishedAt)); err != nil {
			return fmt.Errorf("store: insert branch %s: %w", b.ID, err)
		}
		if b.Status.Open() {
			jobs = append(jobs, river.InsertManyParams{Args: branchArgs(b)})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	if _, err := s.jobs.InsertManyTx(ctx, tx.Tx, jobs); err != nil {
		return fmt.Errorf("store: queue branches: %w", err)
	}
	return nil
}

// cancelBranches closes a run's open branches: the join no longer needs
// them, or the run ended.
func cancelBranches(ctx context.Context, tx *tx, runID, at string) error {
	_, err := tx.ExecContext(ctx, `UPDATE branch_runs SET status = 'canceled', cursor = '', finished_at = ?, version = version + 1
		WHERE run_id = ? AND status IN ('pending', 'running')`, at, runID)
	if err != nil {
		return fmt.Errorf("store: cancel branches: %w", err)
	}
	return nil
}

const branchColumns = `run_id, fan, branch, step, position, status, cursor, attempt, state, error, version, started_at, finished_at`

func scanBranch(row scanner) (engine.Branch, error) {
	var b engine.Branch
	var status, state, started, finished string
	if err := row.Scan(&b.RunID, &b.Fan, &b.ID, &b.Step, &b.Position, &status, &b.Cursor, &b.Attempt, &state, &b.Error,
		&b.Version, &started, &finished); err != nil {
		return b, err
	}
	b.Status = engine.BranchStatus(status)
	if started != "" {
		b.StartedAt = parseTime(started)
	}
	if finished != "" {
		b.FinishedAt = parseTime(finished)
	}
	if err := json.Unmarshal([]byte(state), &b.State); err != nil {
		return b, fmt.Errorf("store: branch %s state: %w", b.ID, err)
	}
	return b, nil
}

func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// Branches returns the branches of the run's latest visit of step, in
// position order.
func (s *Store) Branches(ctx context.Context, runID, step string) ([]engine.Branch, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+branchColumns+` FROM branch_runs
		WHERE run_id = ? AND step = ? AND fan = (SELECT MAX(fan) FROM branch_runs WHERE run_id = ? AND step = ?)
		ORDER BY position`, runID, step, runID, step)
	if err != nil {
		return nil, fmt.Errorf("store: branches of %s: %w", runID, err)
	}
	return collectBranches(rows)
}

// RunBranches returns every branch of a run's latest visit of each
// parallel stage (the run page's and API's stage list).
func (s *Store) RunBranches(ctx context.Context, runID string) ([]engine.Branch, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+branchColumns+` FROM branch_runs b
		WHERE run_id = ? AND fan = (SELECT MAX(fan) FROM branch_runs WHERE run_id = b.run_id AND step = b.step)
		ORDER BY step, position`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: branches of %s: %w", runID, err)
	}
	return collectBranches(rows)
}

func collectBranches(rows *sql.Rows) ([]engine.Branch, error) {
	defer rows.Close()
	var out []engine.Branch
	for rows.Next() {
		b, err := scanBranch(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Branch returns one branch.
func (s *Store) Branch(ctx context.Context, runID string, fan int64, id string) (engine.Branch, error) {
	b, err := scanBranch(s.read.QueryRowContext(ctx, `SELECT `+branchColumns+` FROM branch_runs
		WHERE run_id = ? AND fan = ? AND branch = ?`, runID, fan, id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, fault.Errorf(fault.ENotFound, "run %s has no branch %s in fan %d", runID, id, fan)
	}
	if err != nil {
		return b, fmt.Errorf("store: branch %s: %w", id, err)
	}
	return b, nil
}

// CommitBranch applies one branch transition atomically: the branch's
// new position, state and status, its step's audit record, and the job
// that goes on (a retry later).
// A branch that moved on or was canceled is an fault.EConflict.
func (s *Store) CommitBranch(ctx context.Context, c engine.BranchCommit) (engine.Branch, error) {
	b := c.Branch
	st, err := encodeState(b.State)
	if err != nil {
		return b, err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return b, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE branch_runs SET status = ?, cursor = ?, attempt = ?, state = ?, error = ?,
		started_at = ?, finished_at = ?, version = version + 1
		WHERE run_id = ? AND fan = ? AND branch = ? AND version = ? AND status IN ('pending', 'running')`,
		string(b.Status), b.Cursor, b.Attempt, st, b.Error, optTime(b.StartedAt), optTime(b.FinishedAt),
		b.RunID, b.Fan, b.ID, b.Version)
	if err != nil {
		return b, fmt.Errorf("store: commit branch %s: %w", b.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return b, fault.Errorf(fault.EConflict, "branch %s of run %s moved on or was canceled", b.ID, b.RunID)
	}
	if r := c.Step; r != nil {
		var output any
		if len(r.Output) > 0 {
			output = string(r.Output)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO branch_steps
			(run_id, fan, branch, seq, step, attempt, outcome, error, started_at, finished_at, duration_ms, output)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.RunID, b.Fan, b.ID, b.Version+1, r.Step, r.Attempt, r.Outcome, r.Error, formatTime(r.StartedAt),
			formatTime(r.FinishedAt), float64(r.Duration().Microseconds())/1000, output); err != nil {
			return b, fmt.Errorf("store: insert branch step: %w", err)
		}
	}
	var retryJob int64
	if !c.RetryAt.IsZero() {
		res, err := s.jobs.InsertTx(ctx, tx.Tx, branchArgs(b), &river.InsertOpts{Queue: BranchQueue, ScheduledAt: c.RetryAt})
		if err != nil {
			return b, fmt.Errorf("store: schedule branch %s: %w", b.ID, err)
		}
		retryJob = res.Job.ID
	}
	if err := tx.Commit(); err != nil {
		return b, fmt.Errorf("store: commit branch: %w", err)
	}
	if retryJob != 0 {
		s.promptAt(c.RetryAt, retryJob, BranchQueue)
	}
	b.Version++
	return b, nil
}

// OpenBranches lists every branch still pending or running (on
// PostgreSQL, those River holds no job for: riverHolds).
func (s *Store) OpenBranches(ctx context.Context) ([]engine.Branch, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+branchColumns+` FROM branch_runs
		WHERE status IN ('pending', 'running')
		`+s.riverHolds("advance_branch", "j.args->>'run_id' = branch_runs.run_id AND CAST(j.args->>'fan' AS bigint) = branch_runs.fan AND j.args->>'branch' = branch_runs.branch")+`
		ORDER BY run_id, fan, position`)
	if err != nil {
		return nil, fmt.Errorf("store: open branches: %w", err)
	}
	return collectBranches(rows)
}

// ScheduleBranch queues a branch's job through this process's workers.
func (s *Store) ScheduleBranch(ctx context.Context, b engine.Branch) error {
	c := s.jobs
	if s.worker != nil {
		c = s.worker
	}
	if _, err := c.Insert(ctx, branchArgs(b), nil); err != nil {
		return fmt.Errorf("store: schedule branch %s: %w", b.ID, err)
	}
	return nil
}

// WakeBranches nudges this process's branch workers to fetch now, after a
// commit queued branch jobs inside its transaction (see Wake).
func (s *Store) WakeBranches(ctx context.Context) {
	w := s.worker
	if w == nil {
		return
	}
	if _, err := w.Insert(ctx, wakeArgs{}, &river.InsertOpts{Queue: BranchQueue}); err != nil {
		s.log.Warn("store: wake branch workers", "err", err)
	}
}

// BranchStep is one attempt of a branch's step, from branch_steps.
type BranchStep struct {
	Fan    int64
	Branch string
	engine.StepRecord
}

// BranchSteps returns a run's branch step attempts, by fan, branch and
// order.
func (s *Store) BranchSteps(ctx context.Context, runID string) ([]BranchStep, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT fan, branch, step, attempt, outcome, error, started_at, finished_at, COALESCE(output, '')
		FROM branch_steps WHERE run_id = ? ORDER BY fan, branch, seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: branch steps of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []BranchStep
	for rows.Next() {
		var b BranchStep
		var started, finished, output string
		if err := rows.Scan(&b.Fan, &b.Branch, &b.Step, &b.Attempt, &b.Outcome, &b.Error, &started, &finished, &output); err != nil {
			return nil, err
		}
		b.RunID, b.StartedAt, b.FinishedAt = runID, parseTime(started), parseTime(finished)
		if output != "" {
			b.Output = json.RawMessage(output)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
