package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"quarry/internal/store"
	"quarry/migrations"
)

func TestOpenAppliesMigrationsWithSettings(t *testing.T) {
	store.SkipOnPostgres(t, "reads the file's journal mode and sqlite_master")
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := store.OpenForTest(t, context.Background(), path, store.Options{})
	require.NoError(t, err)
	defer st.Close()

	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
	for _, table := range []string{"runs", "step_runs", "checkpoints", "decisions", "backups", "settings", "river_job"} {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?`, table).Scan(&n))
		require.Equal(t, 1, n, "table %s", table)
	}
	// A fresh database needs no backup.
	backups, err := st.Backups(context.Background())
	require.NoError(t, err)
	require.Empty(t, backups)
}

func TestPendingMigrationsAreBackedUpFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "q.db")
	first, err := migrations.FS.ReadFile("00001_engine.sql")
	require.NoError(t, err)
	v1 := fstest.MapFS{"00001_engine.sql": {Data: first}}
	st, err := store.OpenForTest(t, ctx, path, store.Options{Migrations: v1})
	require.NoError(t, err)
	_, err = st.Run(ctx, "none") // the store works at v1
	require.Error(t, err)
	require.NoError(t, st.Close())

	v2 := fstest.MapFS{
		"00001_engine.sql": {Data: first},
		"00002_extra.sql":  {Data: []byte("-- +goose Up\nCREATE TABLE extra (id INTEGER PRIMARY KEY);\n-- +goose Down\nDROP TABLE extra;\n")},
	}
	st, err = store.OpenForTest(t, ctx, path, store.Options{Migrations: v2})
	require.NoError(t, err)
	defer st.Close()
	backups, err := st.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, backups, 1)
	require.Equal(t, int64(1), backups[0].FromVersion)
	require.Equal(t, filepath.Join(dir, "backups"), filepath.Dir(backups[0].Path))
	_, err = os.Stat(backups[0].Path)
	require.NoError(t, err)

	// The backup is a consistent copy of the database before the migration.
	bdb, err := sql.Open("sqlite", "file:"+backups[0].Path+"?mode=ro")
	require.NoError(t, err)
	defer bdb.Close()
	var n int
	require.NoError(t, bdb.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name='extra'`).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, bdb.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name='runs'`).Scan(&n))
	require.Equal(t, 1, n)

	// Reopening with nothing pending takes no further backup.
	require.NoError(t, st.Close())
	st, err = store.OpenForTest(t, ctx, path, store.Options{Migrations: v2})
	require.NoError(t, err)
	backups, err = st.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, backups, 1)
}

func TestConcurrentOpensOfANewDatabaseAllSucceed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	const n = 6
	errs := make(chan error, n)
	for range n {
		go func() {
			st, err := store.OpenForTest(t, context.Background(), path, store.Options{})
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
}

// TestOpenPathWithURISyntax: a database whose path holds "#", "?" or "%"
// (a test's temp dir named after a subtest, a folder "runs#2") opens that
// file, not the path cut at the first "#" or "?".
func TestOpenPathWithURISyntax(t *testing.T) {
	store.SkipOnPostgres(t, "a file path with URI syntax")
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs#2?x=1%41")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "q.db")
	st, err := store.OpenForTest(t, t.Context(), path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	info, err := os.Stat(path)
	require.NoError(t, err, "the database is the file at the path given")
	require.Positive(t, info.Size())
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing beside the directory: no file named after a cut path")
}
