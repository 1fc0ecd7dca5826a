package dbcopy

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// River's job tables are not copied (SQLite's and PostgreSQL's differ),
// but a job still to do is queued again in the target through River's
// own client: a gate timer's job at its due time, a run's delayed
// advance at its wake time, whatever else was queued or running at once.
// The engine's recovery at start re-enqueues runs left pending or running
// and open branches, but nothing else knows that a run waiting on a
// delay stage or a gate waiting on its timer needs waking. A job queued
// twice is harmless: advancing a run and firing a timer are idempotent.

// unfinished are River's states of a job still to be worked.
const unfinished = `'available', 'pending', 'retryable', 'running', 'scheduled'`

// skippedKinds are jobs with nothing to carry over: "wake" only nudges
// the workers of the process that queued it.
var skippedKinds = []string{"wake"}

// rawJob is a job read from the source: its kind and its args as River
// encoded them, inserted again unchanged.
type rawJob struct {
	kind string
	args json.RawMessage
}

// Kind implements river.JobArgs.
func (j rawJob) Kind() string { return j.kind }

// MarshalJSON gives River the args as they were.
func (j rawJob) MarshalJSON() ([]byte, error) { return j.args, nil }

// requeueJobs queues in the target, at their times, the source's
// unfinished jobs, returning how many of each kind ("2 advance_run, 1
// gate_timer"; "" for none).
func requeueJobs(ctx context.Context, src *sql.Tx, pool *pgxpool.Pool) (string, error) {
	if ok, err := hasRiver(ctx, src); err != nil || !ok {
		return "", err
	}
	rows, err := src.QueryContext(ctx, `SELECT kind, queue, json(args), state, strftime('%Y-%m-%dT%H:%M:%fZ', scheduled_at)
		FROM river_job WHERE state IN (`+unfinished+`) ORDER BY id`)
	if err != nil {
		return "", fmt.Errorf("dbcopy: read river_job: %w", err)
	}
	defer rows.Close()
	var params []river.InsertManyParams
	counts := map[string]int{}
	for rows.Next() {
		var kind, queue, args, state, at string
		if err := rows.Scan(&kind, &queue, &args, &state, &at); err != nil {
			return "", fmt.Errorf("dbcopy: read river_job: %w", err)
		}
		if slices.Contains(skippedKinds, kind) {
			continue
		}
		opts := &river.InsertOpts{Queue: queue}
		if state == "scheduled" || state == "retryable" {
			// A past time makes the job available at once.
			if opts.ScheduledAt, err = time.Parse("2006-01-02T15:04:05.000Z", at); err != nil {
				return "", fmt.Errorf("dbcopy: read river_job: scheduled_at %q: %w", at, err)
			}
		}
		params = append(params, river.InsertManyParams{Args: rawJob{kind: kind, args: json.RawMessage(args)}, InsertOpts: opts})
		counts[kind]++
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("dbcopy: read river_job: %w", err)
	}
	if len(params) == 0 {
		return "", nil
	}
	client, err := river.NewClient[pgx.Tx](riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return "", fmt.Errorf("dbcopy: queue jobs: %w", err)
	}
	if _, err := client.InsertMany(ctx, params); err != nil {
		return "", fmt.Errorf("dbcopy: queue jobs: %w", err)
	}
	kinds := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, ", "), nil
}

// hasRiver reports whether the source has River's job table.
func hasRiver(ctx context.Context, src *sql.Tx) (bool, error) {
	var exists int
	if err := src.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_list WHERE schema = 'main' AND name = 'river_job'`).Scan(&exists); err != nil {
		return false, fmt.Errorf("dbcopy: read river_job: %w", err)
	}
	return exists > 0, nil
}
