package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// advanced reports each run an advance job was worked for.
type advanced chan string

func (a advanced) Advance(_ context.Context, runID string) error {
	a <- runID
	return nil
}

// TestPostgresWorkersHearAnotherStore: on PostgreSQL a job queued by
// another store (another replica) reaches this store's workers through
// LISTEN/NOTIFY, long before their poll.
func TestPostgresWorkersHearAnotherStore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	worker, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	defer worker.Close()
	require.NotNil(t, worker.PgxPool())
	require.Empty(t, worker.Path(), "a URL may hold a password")
	other, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	defer other.Close()

	got := make(advanced, 4)
	require.NoError(t, worker.StartWorkers(ctx, got, QueueOptions{FetchPollInterval: time.Minute}))
	// Let the first fetch (at start) pass, so only a notification can
	// bring the job in time.
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, other.ScheduleAdvance(ctx, "r1"))
	select {
	case id := <-got:
		require.Equal(t, "r1", id)
	case <-time.After(15 * time.Second):
		t.Fatal("the job was not worked: no notification reached the workers")
	}
}

// TestPostgresWriteTransactionsTakeTurns: write transactions of two stores
// on one database run one after the other (writeLockKey), as SQLite's one
// writer made them; reads do not wait.
func TestPostgresWriteTransactionsTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	a, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	defer b.Close()

	first, err := a.write.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer first.Rollback()
	began := make(chan error, 1)
	go func() {
		second, err := b.write.BeginTx(ctx, nil)
		if err == nil {
			err = second.Rollback()
		}
		began <- err
	}()
	select {
	case err := <-began:
		t.Fatalf("a second write transaction began while the first was open (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	read, err := b.read.BeginTx(ctx, nil)
	require.NoError(t, err, "reads do not wait for the writer")
	require.NoError(t, read.Rollback())
	require.NoError(t, first.Commit())
	select {
	case err := <-began:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the second write transaction did not begin once the first ended")
	}
}

// TestPostgresBusyWriterTimesOut: a write transaction that waits longer
// than Options.BusyTimeout for another's lock fails as busy, as SQLite's
// does.
func TestPostgresBusyWriterTimesOut(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	a, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(ctx, url, Options{BusyTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	defer b.Close()
	first, err := a.write.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer first.Rollback()
	_, err = b.write.BeginTx(ctx, nil)
	require.Error(t, err)
	require.True(t, Busy(err), "%v", err)
	require.Equal(t, fault.EUnavailable, fault.ErrorCode(Fault(err)))
}

// TestPostgresRecoveryLeavesRiversJobs: on PostgreSQL a starting replica
// re-queues only the runs and branches River holds no job for: a run
// whose job is queued or running (on a live replica, or a dead one River
// will rescue) is not run a second time at once; a run whose job ended
// without moving it is.
func TestPostgresRecoveryLeavesRiversJobs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, pg.NewDatabase(t), Options{})
	require.NoError(t, err)
	defer s.Close()
	now := time.Now().UTC()
	require.NoError(t, s.CreateRun(ctx, engine.Run{ID: "r1", Workflow: "w", Status: engine.StatusPending, Iteration: 1, CreatedAt: now, UpdatedAt: now}))
	setJob := func(state string) {
		t.Helper()
		_, err := s.write.ExecContext(ctx, `UPDATE river_job SET state = CAST(?1 AS river_job_state),
			finalized_at = CASE WHEN ?1 IN ('cancelled', 'completed', 'discarded') THEN now() END WHERE kind = 'advance_run' AND args->>'run_id' = 'r1'`, state)
		require.NoError(t, err)
	}
	resumable := func() []string {
		t.Helper()
		ids, err := s.ResumableRuns(ctx)
		require.NoError(t, err)
		return ids
	}
	require.Empty(t, resumable(), "its job is queued")
	setJob("running")
	require.Empty(t, resumable(), "its job is running: a live replica's, or River's to rescue")
	setJob("discarded")
	require.Equal(t, []string{"r1"}, resumable(), "no job will move it")
	branches, err := s.OpenBranches(ctx)
	require.NoError(t, err)
	require.Empty(t, branches)
}
