package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/pgtest"
)

// pg is the binary's throwaway PostgreSQL, started by the first test that
// asks for a database.
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// quarry migrate-db copies an imported library into PostgreSQL and prints
// the comparison; a second run into the same database is refused.
func TestMigrateDBCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	env := map[string]string{"QUARRY_DB": db}
	ris := filepath.Join(dir, "a.ris")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	got := quarry(t, "", env, "import", ris)
	require.Equal(t, 0, got.code, got.stderr)
	url := pg.NewDatabase(t)

	got = quarry(t, "", env, "migrate-db", "--to", url)
	require.Equal(t, 0, got.code, got.stderr)
	t.Log(got.stdout)
	require.Contains(t, got.stdout, "copying "+db+" into PostgreSQL")
	require.Regexp(t, `(?m)^papers +[1-9][0-9]* +[0-9a-f]{12} +ok`, got.stdout)
	require.NotContains(t, got.stdout, "DIFFERS")

	got = quarry(t, "", env, "migrate-db", "--to", url)
	require.Equal(t, 1, got.code)
	require.Contains(t, got.stderr, "the target database is not empty")
}

func TestMigrateDBUsage(t *testing.T) {
	t.Parallel()
	env := map[string]string{"QUARRY_DB": filepath.Join(t.TempDir(), "q.db")}
	got := quarry(t, "", env, "migrate-db")
	require.Equal(t, 2, got.code)
	require.Contains(t, got.stderr, "--to is required")
	got = quarry(t, "", env, "migrate-db", "--to", "mysql://x")
	require.Equal(t, 2, got.code)
	require.Contains(t, got.stderr, "postgres:// or postgresql://")
	got = quarry(t, "", env, "migrate-db", "--to", "postgres://localhost/x")
	require.Equal(t, 1, got.code, "no database there: a failure, nothing created")
	require.Contains(t, got.stderr, "no SQLite database at")
	_, err := os.Stat(env["QUARRY_DB"])
	require.True(t, os.IsNotExist(err), "migrate-db creates no database")
}
