package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
