package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
	"quarry/migrations"
)

// TestAccountsMigrationDown: migration 00024 undone leaves the schema as
// 00023 had it (runs keep their rows, without project_id), and applies
// again.
func TestAccountsMigrationDown(t *testing.T) {
	store.SkipOnPostgres(t, "SQLite's migrations down (TestPostgresMigrationsDown checks PostgreSQL's)")
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	require.NoError(t, st.CreateRun(ctx, engine.Run{ID: "r1", Workflow: "search", Status: engine.StatusPending, Iteration: 1,
		CreatedAt: at, UpdatedAt: at, Project: "p1"}))
	require.NoError(t, st.Close())

	db, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS)
	require.NoError(t, err)
	_, err = p.DownTo(ctx, 23)
	require.NoError(t, err)
	count := func(q string) int {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRow(q).Scan(&n))
		return n
	}
	require.Zero(t, count(`SELECT count(*) FROM sqlite_master WHERE name IN ('accounts', 'sessions', 'login_failures', 'projects',
		'project_members', 'invitations', 'api_tokens', 'share_links', 'audit_log', 'runs_project', 'runs_id_project')`))
	require.Zero(t, count(`SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'project_id'`))
	require.Equal(t, 1, count(`SELECT count(*) FROM runs`))
	_, err = p.Up(ctx)
	require.NoError(t, err)
	require.Equal(t, 9, count(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('accounts', 'sessions', 'login_failures', 'projects',
		'project_members', 'invitations', 'api_tokens', 'share_links', 'audit_log')`))
}
