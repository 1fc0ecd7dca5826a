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

// TimerFirer is what the gate timer worker calls: engine.Engine
// implements it.
type TimerFirer interface {
	FireTimer(ctx context.Context, runID, checkpointID string) error
}

// GateTimerArgs is the River job due when a gate's timer runs out. The
// engine checks the stored timer when it runs, so a duplicate, early or
// late job is harmless.
type GateTimerArgs struct {
	RunID        string `json:"run_id"`
	CheckpointID string `json:"checkpoint_id"`
}

// Kind implements river.JobArgs.
func (GateTimerArgs) Kind() string { return "gate_timer" }

type gateTimerWorker struct {
	river.WorkerDefaults[GateTimerArgs]
	fire TimerFirer
}

// Work fires the timer; an error makes River retry the job with backoff.
func (w *gateTimerWorker) Work(ctx context.Context, job *river.Job[GateTimerArgs]) error {
	return w.fire.FireTimer(ctx, job.Args.RunID, job.Args.CheckpointID)
}

// minTimerDelay keeps a timer job queued again (its engine clock said it
// was early) from running at once in a loop when that clock is behind
// the real one (tests with an injected clock and running workers).
const minTimerDelay = time.Second

// scheduleTimerTx queues t's job for its due time inside tx, returning
// the job's ID for promptAt once tx has committed.
func (s *Store) scheduleTimerTx(ctx context.Context, tx *tx, t engine.GateTimer) (int64, error) {
	res, err := s.jobs.InsertTx(ctx, tx.Tx, GateTimerArgs{RunID: t.RunID, CheckpointID: t.CheckpointID}, &river.InsertOpts{ScheduledAt: t.Due})
	if err != nil {
		return 0, fmt.Errorf("store: schedule gate timer %s: %w", t.CheckpointID, err)
	}
	return res.Job.ID, nil
}

// ScheduleGateTimer queues t's job again for its due time (the job ran
// before the engine's clock reached it), at least a second from now.
func (s *Store) ScheduleGateTimer(ctx context.Context, t engine.GateTimer) error {
	if min := s.Now().Add(minTimerDelay); t.Due.Before(min) {
		t.Due = min
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	id, err := s.scheduleTimerTx(ctx, tx, t)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit gate timer job: %w", err)
	}
	s.promptAt(t.Due, id, river.QueueDefault)
	return nil
}

// writeTimerTx stores a gate timer as a commit left it (insert or
// update by checkpoint), with its notices; a pending timer gets its job.
func (s *Store) writeTimerTx(ctx context.Context, tx *tx, t *engine.GateTimer, notices []engine.Notice) (int64, error) {
	for _, n := range notices {
		if err := insertNotice(ctx, tx, n); err != nil {
			return 0, err
		}
	}
	if t == nil {
		return 0, nil
	}
	var fired any
	if t.FiredAt != nil {
		fired = formatTime(*t.FiredAt)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO gate_timers
		(checkpoint_id, run_id, stage, iteration, due_at, extensions, max_extensions, default_option, status, outcome, fired_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (checkpoint_id) DO UPDATE SET due_at = excluded.due_at, extensions = excluded.extensions,
			status = excluded.status, outcome = excluded.outcome, fired_at = excluded.fired_at`,
		t.CheckpointID, t.RunID, t.Stage, max(t.Iteration, 1), formatTime(t.Due), t.Extensions, t.MaxExtensions, t.Default,
		string(t.Status), t.Outcome, fired, formatTime(t.CreatedAt))
	if err != nil {
		return 0, fmt.Errorf("store: write gate timer: %w", err)
	}
	if t.Status != engine.TimerPending {
		return 0, nil
	}
	return s.scheduleTimerTx(ctx, tx, *t)
}

// cancelTimerTx ends the pending timer of a checkpoint decided or left
// behind, so pages stop promising it.
func cancelTimerTx(ctx context.Context, tx *tx, checkpointID string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE gate_timers SET status = 'canceled' WHERE checkpoint_id = ? AND status = 'pending'`, checkpointID); err != nil {
		return fmt.Errorf("store: cancel gate timer: %w", err)
	}
	return nil
}

func insertNotice(ctx context.Context, tx *tx, n engine.Notice) error {
	targets, err := json.Marshal(n.Targets)
	if err != nil {
		return fmt.Errorf("store: encode notice targets: %w", err)
	}
	if n.Targets == nil {
		targets = []byte("[]")
	}
	due := ""
	if !n.Due.IsZero() {
		due = formatTime(n.Due)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO gate_notices
		(id, run_id, checkpoint_id, stage, event, due_at, extensions, outcome, targets, status, error, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		n.ID, n.RunID, n.CheckpointID, n.Stage, string(n.Event), due, n.Extensions, n.Outcome, string(targets),
		string(n.Status), n.Error, formatTime(n.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: record notice: %w", err)
	}
	return nil
}

// RecordNotice records what sending notice id did (sent, or failed with
// errMsg), and bumps its run's version so pages show it.
func (s *Store) RecordNotice(ctx context.Context, id string, status engine.NoticeStatus, errMsg string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	var runID string
	err = tx.QueryRowContext(ctx, `UPDATE gate_notices SET status = ?, error = ?, attempted_at = ? WHERE id = ? RETURNING run_id`,
		string(status), errMsg, formatTime(s.Now()), id).Scan(&runID)
	if errors.Is(err, sql.ErrNoRows) {
		return fault.Errorf(fault.ENotFound, "no notice %q", id)
	}
	if err != nil {
		return fmt.Errorf("store: record notice: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET version = version + 1 WHERE id = ?`, runID); err != nil {
		return fmt.Errorf("store: record notice: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit notice: %w", err)
	}
	return nil
}

const timerColumns = `checkpoint_id, run_id, stage, iteration, due_at, extensions, max_extensions, default_option, status, outcome, fired_at, created_at`

func scanTimer(row scanner) (engine.GateTimer, error) {
	var t engine.GateTimer
	var due, status, created string
	var fired sql.NullString
	if err := row.Scan(&t.CheckpointID, &t.RunID, &t.Stage, &t.Iteration, &due, &t.Extensions, &t.MaxExtensions, &t.Default,
		&status, &t.Outcome, &fired, &created); err != nil {
		return t, err
	}
	t.Due, t.CreatedAt, t.Status = parseTime(due), parseTime(created), engine.TimerStatus(status)
	if fired.Valid {
		at := parseTime(fired.String)
		t.FiredAt = &at
	}
	return t, nil
}

// GateTimer returns a checkpoint's timer, or fault.ENotFound.
func (s *Store) GateTimer(ctx context.Context, checkpointID string) (engine.GateTimer, error) {
	t, err := scanTimer(s.read.QueryRowContext(ctx, `SELECT `+timerColumns+` FROM gate_timers WHERE checkpoint_id = ?`, checkpointID))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fault.Errorf(fault.ENotFound, "checkpoint %q has no timer", checkpointID)
	}
	if err != nil {
		return t, fmt.Errorf("store: gate timer %s: %w", checkpointID, err)
	}
	return t, nil
}

// DueGateTimers lists the pending timers due at or before now, oldest
// first. Times are stored as RFC 3339 text with trailing zeros trimmed,
// which sorts wrongly within one second ("…:00Z" after "…:00.5Z"), so
// the query takes a second more and the clock decides.
func (s *Store) DueGateTimers(ctx context.Context, now time.Time) ([]engine.GateTimer, error) {
	ts, err := s.queryTimers(ctx, `status = 'pending' AND due_at <= ? ORDER BY due_at`, formatTime(now.Add(time.Second)))
	if err != nil {
		return nil, err
	}
	due := ts[:0]
	for _, t := range ts {
		if !t.Due.After(now) {
			due = append(due, t)
		}
	}
	return due, nil
}

// GateTimers returns every timer of the run's gates, oldest first.
func (s *Store) GateTimers(ctx context.Context, runID string) ([]engine.GateTimer, error) {
	return s.queryTimers(ctx, `run_id = ? ORDER BY created_at, checkpoint_id`, runID)
}

func (s *Store) queryTimers(ctx context.Context, where string, arg any) ([]engine.GateTimer, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+timerColumns+` FROM gate_timers WHERE `+where, arg)
	if err != nil {
		return nil, fmt.Errorf("store: gate timers: %w", err)
	}
	defer rows.Close()
	out := []engine.GateTimer{}
	for rows.Next() {
		t, err := scanTimer(rows)
		if err != nil {
			return nil, fmt.Errorf("store: gate timers: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// GateNotices returns every notice of the run's gates, in order.
func (s *Store) GateNotices(ctx context.Context, runID string) ([]engine.Notice, error) {
	return s.queryNotices(ctx, `n.run_id = ?`, runID)
}

// PendingNotices lists the notices never attempted, oldest first.
func (s *Store) PendingNotices(ctx context.Context) ([]engine.Notice, error) {
	return s.queryNotices(ctx, `n.status = ?`, string(engine.NoticePending))
}

func (s *Store) queryNotices(ctx context.Context, where string, arg any) ([]engine.Notice, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT n.id, n.run_id, r.workflow, n.stage, n.checkpoint_id, n.event, n.due_at, n.extensions,
		n.outcome, n.targets, n.status, n.error, n.created_at
		FROM gate_notices n JOIN runs r ON r.id = n.run_id WHERE `+where+` ORDER BY n.seq`, arg)
	if err != nil {
		return nil, fmt.Errorf("store: gate notices: %w", err)
	}
	defer rows.Close()
	out := []engine.Notice{}
	for rows.Next() {
		var n engine.Notice
		var event, due, targets, status, created string
		if err := rows.Scan(&n.ID, &n.RunID, &n.Workflow, &n.Stage, &n.CheckpointID, &event, &due, &n.Extensions,
			&n.Outcome, &targets, &status, &n.Error, &created); err != nil {
			return nil, fmt.Errorf("store: gate notices: %w", err)
		}
		n.Event, n.Status, n.CreatedAt = engine.NoticeEvent(event), engine.NoticeStatus(status), parseTime(created)
		if due != "" {
			n.Due = parseTime(due)
		}
		if err := json.Unmarshal([]byte(targets), &n.Targets); err != nil {
			return nil, fmt.Errorf("store: notice %s targets: %w", n.ID, err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
