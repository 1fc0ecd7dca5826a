package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// quarry backup writes a recorded copy beside the database, and quarry
// restore refuses a damaged file (exit 1,
// nothing touched) and restores a good one.
func TestBackupAndRestoreCommands(t *testing.T) {
	t.Parallel()
	storetest.SkipOnPostgres(t, "backups are VACUUM INTO copies; TestBackupAndRestoreRefusedOnPostgres is PostgreSQL's")
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	env := map[string]string{"QUARRY_DB": db, "QUARRY_BACKUP_KEEP": "5"}

	got := quarry(t, "", env, "backup")
	require.Equal(t, 0, got.code, got.stderr)
	require.Contains(t, got.stdout, "backed up "+db+" to "+filepath.Join(dir, "backups"))
	ris := filepath.Join(dir, "a.ris")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	got = quarry(t, "", env, "import", ris)
	require.Equal(t, 0, got.code, got.stderr)

	st, err := store.Open(t.Context(), db, store.Options{})
	require.NoError(t, err)
	list, err := st.Backups(t.Context())
	require.NoError(t, err)
	require.NoError(t, st.Close())
	require.Len(t, list, 1, "a small import (one batch) is no bulk import and takes no backup")
	require.Equal(t, store.BackupManual, list[0].Reason)
	empty := list[0].Path // the library before the import

	garbage := filepath.Join(dir, "garbage.db")
	require.NoError(t, os.WriteFile(garbage, []byte("SQLite format 3\x00 and then nothing that makes sense"), 0o644))
	got = quarry(t, "", env, "restore", garbage)
	require.Equal(t, 1, got.code, "a refused file is a failure, not a misuse: %s", got.stderr)
	require.Contains(t, got.stderr, "cannot restore "+garbage)
	got = quarry(t, "", env, "restore")
	require.Equal(t, 2, got.code)

	got = quarry(t, "", env, "restore", empty)
	require.Equal(t, 0, got.code, got.stderr)
	require.Contains(t, got.stdout, "the replaced database is kept as "+filepath.Join(dir, "backups"))
	st, err = store.Open(t.Context(), db, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	n, err := st.LibraryCount(t.Context())
	require.NoError(t, err)
	require.Zero(t, n, "the library is as it was before the import")
}

// On PostgreSQL (QUARRY_DATABASE_URL) quarry backup writes pg_dump's
// archive into the backup directory, beside QUARRY_DB, without printing
// the URL; quarry restore refuses and names pg_restore.
func TestBackupCommandOnPostgres(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := pg.NewDatabase(t)
	env := map[string]string{"QUARRY_DB": filepath.Join(dir, "q.db"), "QUARRY_DATABASE_URL": url}

	got := quarry(t, "", env, "backup")
	require.Equal(t, 0, got.code, got.stderr)
	require.Contains(t, got.stdout, "backed up the PostgreSQL database to "+filepath.Join(dir, "backups"))
	require.NotContains(t, got.stdout+got.stderr, url)
	archives, err := filepath.Glob(filepath.Join(dir, "backups", "*.dump"))
	require.NoError(t, err)
	require.Len(t, archives, 1)

	ris := filepath.Join(dir, "a.ris")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	got = quarry(t, "", env, "import", ris)
	require.Equal(t, 0, got.code, got.stderr)
	require.NoFileExists(t, env["QUARRY_DB"], "every command opens the PostgreSQL database, none a SQLite file")

	got = quarry(t, "", env, "restore", archives[0])
	require.Equal(t, 1, got.code, got.stderr)
	require.Contains(t, got.stderr, "pg_restore")
}
