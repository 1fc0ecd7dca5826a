package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"
)

// RunLimits bound the runs executing at once, across every process
// sharing the database, so a burst of runs cannot starve the server. A
// run executes while a worker advances it; a run waiting at a person's
// gate, on a timer or on its branches holds no slot. Zero is no limit.
type RunLimits struct {
	// Max bounds the runs executing at once, of every workflow.
	Max int
	// PerWorkflow bounds the runs of one workflow executing at once.
	PerWorkflow map[string]int
}

func (l RunLimits) active() bool { return l.Max > 0 || len(l.PerWorkflow) > 0 }

// Slot timings: a slot is leased, and renewed while its run executes, so
// a process killed mid-run frees its slots within slotLease; a run over
// a limit tries again after limitSnooze, or as soon as a slot of this
// process frees (slots.freed).
const (
	slotLease   = 2 * time.Minute
	slotRenew   = 30 * time.Second
	limitSnooze = 10 * time.Second
)

// slots remembers the advance jobs of this process snoozed behind a
// limit, so a freed slot wakes them at once rather than at their snooze's
// end.
type slots struct {
	mu     sync.Mutex
	queued map[string]int64 // run ID → its snoozed job
}

// errNoSlot: the run waits behind a limit.
var errNoSlot = errors.New("store: the run waits for a free slot")

// acquireSlot takes an executing slot for run id, or records it queued
// behind a limit and returns errNoSlot, in one write transaction (so two
// workers, in any process, cannot both take the last slot). held is false
// when the run needs no slot (it waits for a person, or has ended).
func (s *Store) acquireSlot(ctx context.Context, id string, l RunLimits) (held bool, err error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	var workflow, status string
	var cp sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT workflow, status, checkpoint_id FROM runs WHERE id = ?`, id).Scan(&workflow, &status, &cp)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: run slot %s: %w", id, err)
	}
	executes := status == "pending" || status == "running" || (status == "waiting" && !cp.Valid)
	now := s.Now().UTC()
	if !executes {
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_slots WHERE run_id = ?`, id); err != nil {
			return false, fmt.Errorf("store: run slot %s: %w", id, err)
		}
		return false, tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM run_slots WHERE state = 'executing' AND lease_until < ?`, formatTime(now)); err != nil {
		return false, fmt.Errorf("store: expire run slots: %w", err)
	}
	var all, same int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(*) FILTER (WHERE workflow = ?) FROM run_slots WHERE state = 'executing' AND run_id <> ?`,
		workflow, id).Scan(&all, &same); err != nil {
		return false, fmt.Errorf("store: count run slots: %w", err)
	}
	reason := ""
	if n := l.PerWorkflow[workflow]; n > 0 && same >= n {
		reason = fmt.Sprintf("queued: %d of %d runs of %s are executing (QUARRY_WORKFLOW_LIMITS)", same, n, workflow)
	} else if l.Max > 0 && all >= l.Max {
		reason = fmt.Sprintf("queued: %d of %d runs are executing (QUARRY_MAX_ACTIVE_RUNS)", all, l.Max)
	}
	state, lease := "executing", now.Add(slotLease)
	if reason != "" {
		state = "queued"
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_slots (run_id, workflow, state, lease_until, reason, since) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, lease_until = excluded.lease_until, reason = excluded.reason,
			since = CASE WHEN run_slots.state = excluded.state THEN run_slots.since ELSE excluded.since END`,
		id, workflow, state, formatTime(lease), reason, formatTime(now)); err != nil {
		return false, fmt.Errorf("store: run slot %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: run slot %s: %w", id, err)
	}
	if reason != "" {
		return false, errNoSlot
	}
	return true, nil
}

// renewSlot extends a held slot's lease.
func (s *Store) renewSlot(ctx context.Context, id string) error {
	_, err := s.write.ExecContext(ctx, `UPDATE run_slots SET lease_until = ? WHERE run_id = ? AND state = 'executing'`,
		formatTime(s.Now().UTC().Add(slotLease)), id)
	return err
}

// releaseSlot frees run id's slot and wakes the runs of this process
// queued behind a limit.
func (s *Store) releaseSlot(id string) {
	if _, err := s.write.ExecContext(context.Background(), `DELETE FROM run_slots WHERE run_id = ? AND state = 'executing'`, id); err != nil {
		s.log.Warn("store: free a run's slot", "run", id, "err", err)
	}
	s.slots.mu.Lock()
	jobs := make([]int64, 0, len(s.slots.queued))
	for run, job := range s.slots.queued {
		jobs = append(jobs, job)
		delete(s.slots.queued, run)
	}
	s.slots.mu.Unlock()
	s.wakeQueued(jobs, 0)
}

// wakeRetries bound how long wakeQueued waits for a snooze to be
// recorded: River records a job's end a moment after its Work returns,
// so a slot freed just then finds the snoozed job still running.
const (
	wakeRetries    = 20
	wakeRetryAfter = 25 * time.Millisecond
)

// wakeQueued makes snoozed jobs available now and wakes the workers.
func (s *Store) wakeQueued(jobs []int64, try int) {
	if len(jobs) == 0 || s.worker == nil {
		return
	}
	ctx := context.Background()
	woke := false
	var later []int64
	for _, job := range jobs {
		// A snoozed job is scheduled for later: it becomes available now
		// (River fetches available jobs whose scheduled_at has passed).
		var state string
		// The wall clock, not s.Now: River fetches by its own clock.
		err := s.write.QueryRowContext(ctx, `UPDATE river_job SET state = CASE state WHEN 'scheduled' THEN 'available' ELSE state END,
			scheduled_at = CASE state WHEN 'scheduled' THEN ? ELSE scheduled_at END
			WHERE id = ? RETURNING state`, s.write.d.riverTime(time.Now()), job).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			s.log.Warn("store: wake a run queued behind a limit", "job", job, "err", err)
		case state == "available":
			woke = true
		case state == "running":
			later = append(later, job)
		}
	}
	if woke {
		s.Wake(ctx)
	}
	if len(later) > 0 && try < wakeRetries {
		time.AfterFunc(wakeRetryAfter, func() { s.wakeQueued(later, try+1) })
	}
}

// queueBehindLimit remembers a snoozed job, for releaseSlot.
func (s *Store) queueBehindLimit(runID string, jobID int64) {
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	if s.slots.queued == nil {
		s.slots.queued = map[string]int64{}
	}
	s.slots.queued[runID] = jobID
}

// QueuedBehindLimit says why run id waits for a slot ("" when it does
// not), for the run page and the API.
func (s *Store) QueuedBehindLimit(ctx context.Context, id string) (string, error) {
	var reason string
	err := s.read.QueryRowContext(ctx, `SELECT reason FROM run_slots WHERE run_id = ? AND state = 'queued'`, id).Scan(&reason)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: run slot %s: %w", id, err)
	}
	return reason, nil
}

// withSlot runs advance while holding run id's slot, renewing its lease;
// a run over a limit is snoozed (river.JobSnooze) instead.
func (s *Store) withSlot(ctx context.Context, l RunLimits, id string, jobID int64, advance func() error) error {
	held, err := s.acquireSlot(ctx, id, l)
	if errors.Is(err, errNoSlot) {
		s.queueBehindLimit(id, jobID)
		return river.JobSnooze(limitSnooze)
	}
	if err != nil {
		return err
	}
	if !held {
		return advance()
	}
	defer s.releaseSlot(id)
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(slotRenew)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := s.renewSlot(context.WithoutCancel(ctx), id); err != nil {
					s.log.Warn("store: renew a run's slot", "run", id, "err", err)
				}
			}
		}
	}()
	defer func() { close(stop); <-renewed }()
	return advance()
}
