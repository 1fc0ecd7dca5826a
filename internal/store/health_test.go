package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// idle is an Advancer with nothing to do.
type idle struct{}

func (idle) Advance(context.Context, string) error { return nil }

// failed returns the names of the checks that failed, with their errors.
func failed(checks []store.Check) map[string]string {
	out := map[string]string{}
	for _, c := range checks {
		if c.Err != nil {
			out[c.Name] = c.Err.Error()
		}
	}
	return out
}

func openStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := store.OpenForTest(t, context.Background(), path, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, path
}

func TestReadyChecksWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := openStore(t)
	checks := st.Ready(ctx)
	require.Equal(t, []string{store.CheckDatabase, store.CheckMigrations, store.CheckWorkers},
		[]string{checks[0].Name, checks[1].Name, checks[2].Name})
	require.Equal(t, map[string]string{store.CheckWorkers: "not started"}, failed(checks))

	workerCtx, stop := context.WithCancel(ctx)
	require.NoError(t, st.StartWorkers(workerCtx, idle{}, store.QueueOptions{}))
	require.Empty(t, failed(st.Ready(ctx)))

	// Cancelling the workers' context stops them (as app.Close does).
	stop()
	require.Eventually(t, func() bool {
		return failed(st.Ready(ctx))[store.CheckWorkers] == "stopped"
	}, 10*time.Second, 10*time.Millisecond)
}

// TestReadyFailsWhenTheDatabaseCannotBeRead: the pools keep the file open
// and go on working after it becomes unreadable, so the check must not
// trust them. The probe runs once before the file is broken, as a
// server's probes do, since SQLite reuses descriptors between connections.
// Root ignores file permissions, so as root the chmod case is skipped
// (run the test binary as another user to try it) and a replaced or
// removed file stands in for an unreadable one.
func TestReadyFailsWhenTheDatabaseCannotBeRead(t *testing.T) {
	store.SkipOnPostgres(t, "breaks the database file")
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(t *testing.T, path string)
	}{
		{"Unreadable", func(t *testing.T, path string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file whatever its mode; run as another user to try chmod 000")
			}
			require.NoError(t, os.Chmod(path, 0))
			t.Cleanup(func() { os.Chmod(path, 0o644) })
		}},
		{"Replaced", func(t *testing.T, path string) {
			junk := path + ".junk"
			require.NoError(t, os.WriteFile(junk, []byte("not a database, not at all, not even close"), 0o644))
			require.NoError(t, os.Rename(junk, path))
		}},
		{"Removed", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st, path := openStore(t)
			require.NoError(t, st.StartWorkers(ctx, idle{}, store.QueueOptions{}))
			require.Empty(t, failed(st.Ready(ctx)))

			tt.breakIt(t, path)
			got := failed(st.Ready(ctx))
			require.Contains(t, got, store.CheckDatabase)
			require.Contains(t, got[store.CheckDatabase], path)
			require.Contains(t, got, store.CheckMigrations)
			require.NotContains(t, got, store.CheckWorkers)
			if tt.name == "Removed" {
				_, err := os.Stat(path)
				require.ErrorIs(t, err, os.ErrNotExist, "the probe must not create a database")
			}
		})
	}
}

func TestReadyComparesTheMigrationVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, path := openStore(t)
	require.NoError(t, st.StartWorkers(ctx, idle{}, store.QueueOptions{}))
	raw, err := store.RawForTest(t, path, "")
	require.NoError(t, err)
	defer raw.Close()
	var latest int64
	require.NoError(t, raw.QueryRow(`SELECT max(version_id) FROM goose_db_version`).Scan(&latest))

	_, err = raw.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1 = 1)`, latest+1)
	require.NoError(t, err)
	require.Regexp(t, `the database is at version \d+, this binary's newest migration is \d+`, failed(st.Ready(ctx))[store.CheckMigrations])
}

func TestQueueStatsAndRunCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := openStore(t)
	counts, err := st.RunCounts(ctx)
	require.NoError(t, err)
	require.Len(t, counts, len(engine.Statuses()))
	for _, n := range counts {
		require.Zero(t, n)
	}
	q, err := st.QueueStats(ctx)
	require.NoError(t, err)
	require.Equal(t, store.QueueStats{}, q)

	// Creating a run queues its first job; no worker takes it.
	now := time.Now().UTC()
	require.NoError(t, st.CreateRun(ctx, engine.Run{ID: "r1", Workflow: "wf", Params: engine.Params{}, State: engine.State{},
		Step: "a", Status: engine.StatusPending, Iteration: 1, CreatedAt: now, UpdatedAt: now}))
	counts, err = st.RunCounts(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, counts[engine.StatusPending])
	q, err = st.QueueStats(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, q.Available)
	require.Less(t, q.OldestAvailable, time.Minute)
}
