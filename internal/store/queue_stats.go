package store

import (
	"context"
	"fmt"
	"time"

	"quarry/internal/engine"
)

// RunCounts counts runs by status, every status present (zero included),
// for the operator's metrics.
func (s *Store) RunCounts(ctx context.Context) (map[engine.Status]int, error) {
	out := make(map[engine.Status]int, len(engine.Statuses()))
	for _, st := range engine.Statuses() {
		out[st] = 0
	}
	rows, err := s.read.QueryContext(ctx, `SELECT status, count(*) FROM runs GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("store: run counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("store: run counts: %w", err)
		}
		out[engine.Status(st)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run counts: %w", err)
	}
	return out, nil
}

// QueueStats is the state of River's job queue: how many jobs wait
// (available: due now; scheduled: due later; retryable: failed, to be
// retried), how many run, and how long the oldest due job has waited.
type QueueStats struct {
	Available, Running, Retryable, Scheduled int
	// OldestAvailable is how long ago the oldest available job became due
	// (zero when none is): a growing value means the workers are stuck
	// or too few.
	OldestAvailable time.Duration
}

// QueueStats reads the job queue's depth from the river_job table.
func (s *Store) QueueStats(ctx context.Context) (QueueStats, error) {
	var q QueueStats
	var oldest float64
	err := s.read.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE state = 'available'),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state = 'retryable'),
		count(*) FILTER (WHERE state = 'scheduled'),
		COALESCE(`+s.read.d.secondsSince("min(scheduled_at) FILTER (WHERE state = 'available')")+`, 0)
		FROM river_job WHERE state IN ('available', 'running', 'retryable', 'scheduled')`).
		Scan(&q.Available, &q.Running, &q.Retryable, &q.Scheduled, &oldest)
	if err != nil {
		return QueueStats{}, fmt.Errorf("store: queue stats: %w", err)
	}
	q.OldestAvailable = max(0, time.Duration(oldest*float64(time.Second)))
	return q, nil
}
