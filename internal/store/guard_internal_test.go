package store

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/migrations"
)

// The guard refuses DROP, ALTER and unbounded DELETE on the store's own
// connections once it is open, and lets bounded deletes, cascades and the
// full-text index's own upkeep through.
func TestGuardRefusesDestructiveStatements(t *testing.T) {
	SkipOnPostgres(t, "the guard is SQLite's authorizer")
	t.Parallel()
	ctx := context.Background()
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.write.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('a', 'x'), ('b', 'y')`)
	require.NoError(t, err)

	for _, q := range []string{
		`DROP TABLE runs`,
		`DROP TABLE IF EXISTS settings`,
		`DROP INDEX IF EXISTS river_job_kind`,
		`ALTER TABLE runs ADD COLUMN x TEXT`,
		`ALTER TABLE settings RENAME TO gone`,
		`DELETE FROM settings`,
		`delete from settings where 1`,
		`DELETE FROM settings WHERE ? IS NULL`,
		`SELECT 1; DELETE FROM settings WHERE key = 'a'`, // a script's later statements may not delete
	} {
		_, err := s.write.ExecContext(ctx, q)
		require.Error(t, err, q)
		require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err), "%s: %v", q, err)
		require.Contains(t, err.Error(), "refused outside migrations", q)
	}
	rows, err := s.write.QueryContext(ctx, `DELETE FROM settings RETURNING 1`)
	if err == nil {
		rows.Close()
	}
	require.Error(t, err)
	tx, err := s.write.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `DELETE FROM settings`)
	require.Error(t, err, "inside a transaction too")
	require.NoError(t, tx.Rollback())
	_, err = s.write.PrepareContext(ctx, `DELETE FROM settings`)
	require.Error(t, err, "prepared too")

	// The readers may not turn query_only off, nor drop anything.
	_, err = s.read.ExecContext(ctx, `PRAGMA query_only = 0`)
	require.Error(t, err)
	_, err = s.read.ExecContext(ctx, `DROP TABLE runs`)
	require.Error(t, err)

	var n int
	require.NoError(t, s.read.QueryRowContext(ctx, `SELECT count(*) FROM settings WHERE key IN ('a', 'b')`).Scan(&n))
	require.Equal(t, 2, n, "nothing was deleted")
	require.NoError(t, s.read.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'runs'`).Scan(&n))
	require.Equal(t, 1, n)

	// Bounded deletes run, through Exec, Query and prepared statements.
	_, err = s.write.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, "a")
	require.NoError(t, err)
	var key string
	require.NoError(t, s.write.QueryRowContext(ctx, `DELETE FROM settings WHERE key = 'b' RETURNING key`).Scan(&key))
	require.Equal(t, "b", key)
	st, err := s.write.PrepareContext(ctx, `DELETE FROM settings WHERE key = ?`)
	require.NoError(t, err)
	_, err = st.ExecContext(ctx, "c")
	require.NoError(t, err)
	require.NoError(t, st.Close())
	// Temporary tables are the connection's own.
	_, err = s.write.ExecContext(ctx, `CREATE TEMP TABLE scratch (x)`)
	require.NoError(t, err)
	_, err = s.write.ExecContext(ctx, `DELETE FROM scratch`)
	require.NoError(t, err)
	_, err = s.write.ExecContext(ctx, `DROP TABLE scratch`)
	require.NoError(t, err)
	// The write probe still works.
	require.NoError(t, s.Writable(ctx))
}

// A cascade from a bounded delete is the schema's own and runs.
func TestGuardAllowsCascades(t *testing.T) {
	SkipOnPostgres(t, "the guard is SQLite's authorizer")
	t.Parallel()
	ctx := context.Background()
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.write.ExecContext(ctx, `INSERT INTO runs (id, workflow, status, state, created_at, updated_at) VALUES ('r1', 'w', 'running', '{}', 'now', 'now')`)
	require.NoError(t, err)
	_, err = s.write.ExecContext(ctx, `DELETE FROM runs WHERE id = 'r1'`)
	require.NoError(t, err)
}

// SQLite compiles a statement again when a bound value could change its
// plan (here LIMIT ?2); the vetted delete's second compile runs.
func TestGuardLetsAVettedDeleteRecompile(t *testing.T) {
	SkipOnPostgres(t, "the guard is SQLite's authorizer")
	t.Parallel()
	ctx := context.Background()
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.write.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('a', 'x'), ('b', 'y')`)
	require.NoError(t, err)
	res, err := s.write.ExecContext(ctx, `DELETE FROM settings WHERE key = ?1 AND key IN (SELECT key FROM settings WHERE key = ?1 LIMIT ?2)`, "a", 5)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// River's maintenance deletes (the job cleaner, leader and queue expiry,
// deleting a job) are bounded and pass the guard.
func TestGuardLetsRiverMaintain(t *testing.T) {
	SkipOnPostgres(t, "the guard is SQLite's authorizer")
	t.Parallel()
	ctx := context.Background()
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{})
	require.NoError(t, err)
	defer s.Close()
	ex := riversqlite.New(s.write.DB).GetExecutor()
	now := time.Now()
	_, err = ex.JobDeleteBefore(ctx, &riverdriver.JobDeleteBeforeParams{
		CancelledDoDelete: true, CancelledFinalizedAtHorizon: now, CompletedDoDelete: true, CompletedFinalizedAtHorizon: now,
		DiscardedDoDelete: true, DiscardedFinalizedAtHorizon: now, Max: 100})
	require.NoError(t, err)
	_, err = ex.LeaderDeleteExpired(ctx, &riverdriver.LeaderDeleteExpiredParams{Now: &now})
	require.NoError(t, err)
	_, err = ex.QueueDeleteExpired(ctx, &riverdriver.QueueDeleteExpiredParams{Max: 100, UpdatedAtHorizon: now})
	require.NoError(t, err)
	_, err = ex.JobDelete(ctx, &riverdriver.JobDeleteParams{ID: 12345})
	require.ErrorIs(t, err, rivertype.ErrNotFound)
}

// Migrations run before the guard is armed: they may drop and alter;
// the same statements after Open are refused.
func TestGuardLetsMigrationsThrough(t *testing.T) {
	SkipOnPostgres(t, "the guard is SQLite's authorizer")
	t.Parallel()
	ctx := context.Background()
	first, err := migrations.FS.ReadFile("00001_engine.sql")
	require.NoError(t, err)
	fsys := fstest.MapFS{
		"00001_engine.sql": {Data: first},
		"00002_reshape.sql": {Data: []byte("-- +goose Up\nCREATE TABLE t (x);\nDELETE FROM t;\nDROP TABLE t;\nALTER TABLE settings ADD COLUMN note TEXT;\n" +
			"-- +goose Down\nALTER TABLE settings DROP COLUMN note;\n")},
	}
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{Migrations: fsys})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.write.ExecContext(ctx, `ALTER TABLE settings DROP COLUMN note`)
	require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err), "%v", err)
}
