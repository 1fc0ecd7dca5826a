package store_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
	"quarry/migrations"
)

// stageRecords are records of every outcome the engine writes, with the
// status each leaves its stage in.
var stageRecords = []struct {
	rec  engine.StepRecord
	want string
}{
	{engine.StepRecord{Step: "a", Outcome: "ok"}, "completed"},
	{engine.StepRecord{Step: "a", Outcome: "goto:b"}, "completed"},
	{engine.StepRecord{Step: "a", Outcome: "iterate"}, "completed"},
	{engine.StepRecord{Step: "a", Outcome: "error", Error: "boom"}, "failed"}, // will be retried
	{engine.StepRecord{Step: "a", Outcome: "escalated", Error: "boom"}, "failed"},
	{engine.StepRecord{Step: "a", Outcome: "failed", Error: "boom"}, "failed"},
	{engine.StepRecord{Step: "a", Outcome: "goto:c", Error: "boom"}, "failed"}, // retries used up, on_error goto
	{engine.StepRecord{Step: "a", Outcome: "fail"}, "failed"},
	{engine.StepRecord{Step: "a", Outcome: "skip"}, "skipped"},
	{engine.StepRecord{Step: "g", Outcome: "ok", Output: json.RawMessage(`{"gate":"skipped"}`)}, "skipped"},
	{engine.StepRecord{Step: "g", Outcome: "checkpoint"}, "waiting"},
	{engine.StepRecord{Step: "d", Outcome: "waiting"}, "waiting"},
	{engine.StepRecord{Step: "a", Outcome: "retry"}, "pending"},
	{engine.StepRecord{Step: "a", Outcome: "aborted"}, "canceled"},
	{engine.StepRecord{Step: "a", Outcome: "canceled", Error: "canceled by ada"}, "canceled"},
}

func statuses(t *testing.T, path, runID string) (status []string, max []int) {
	t.Helper()
	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	rows, err := raw.Query(`SELECT status, max_attempts FROM step_runs WHERE run_id = ? ORDER BY seq`, runID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var s string
		var m int
		require.NoError(t, rows.Scan(&s, &m))
		status, max = append(status, s), append(max, m)
	}
	require.NoError(t, rows.Err())
	return status, max
}

// TestStepRunsKeepTheirStageStatus: each step record is stored with the
// status it leaves its stage in and the step's max attempts.
func TestStepRunsKeepTheirStageStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer st.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := seedRun(t, st, "r1", at, engine.Params{}, engine.StatusRunning, 1)
	var want []string
	for i, c := range stageRecords {
		rec := c.rec
		rec.RunID, rec.Iteration, rec.Attempt, rec.MaxAttempts, rec.StartedAt, rec.FinishedAt = "r1", 1, 1, i+1, at, at
		require.Equal(t, c.want, rec.Status(), rec.Outcome)
		r, err = st.Commit(ctx, engine.Commit{Run: r, From: r.Status, Step: &rec})
		require.NoError(t, err)
		want = append(want, c.want)
	}
	got, max := statuses(t, path, "r1")
	require.Equal(t, want, got)
	require.Equal(t, 3, max[2])
	trail, err := st.StepTrail(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, 4, trail[3].MaxAttempts)
}

// TestStageStatusMigrationDerivesOldRecords: records written before
// migration 00013 get the status StepRecord.Status derives (the SQL and
// the Go say the same), and max_attempts 0 (not known).
func TestStageStatusMigrationDerivesOldRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	old := fstest.MapFS{}
	names, err := fs.Glob(migrations.FS, "*.sql")
	require.NoError(t, err)
	for _, name := range names {
		if name >= "00013" {
			continue
		}
		data, err := migrations.FS.ReadFile(name)
		require.NoError(t, err)
		old[name] = &fstest.MapFile{Data: data}
	}
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", Migrations: old})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	_, err = raw.Exec(`INSERT INTO runs (id, workflow, status, created_at, updated_at) VALUES ('r1', 'w', 'running', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
	require.NoError(t, err)
	var want []string
	for i, c := range stageRecords {
		var output any
		if c.rec.Output != nil {
			output = string(c.rec.Output)
		}
		_, err = raw.Exec(`INSERT INTO step_runs (run_id, seq, step, iteration, attempt, outcome, error, started_at, finished_at, output)
			VALUES ('r1', ?, ?, 1, 1, ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', ?)`, i+1, c.rec.Step, c.rec.Outcome, c.rec.Error, output)
		require.NoError(t, err)
		want = append(want, c.want)
	}
	require.NoError(t, raw.Close())

	st, err = store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer st.Close()
	got, max := statuses(t, path, "r1")
	require.Equal(t, want, got)
	require.Equal(t, make([]int, len(want)), max)
}
