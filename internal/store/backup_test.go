package store_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/store"
)

// A backup is recorded with its reason, run and size, and retention keeps
// the newest BackupKeep, deleting the older files.
func TestBackupIsRecordedAndPruned(t *testing.T) {
	store.SkipOnPostgres(t, "backups are VACUUM INTO copies")
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.OpenForTest(t, ctx, filepath.Join(dir, "q.db"), store.Options{BackupKeep: 2})
	require.NoError(t, err)
	defer st.Close()

	var made []store.Backup
	for _, reason := range []string{store.BackupManual, store.BackupImport, store.BackupRun} {
		runID := ""
		if reason == store.BackupRun {
			runID = "r1"
		}
		b, err := st.Backup(ctx, reason, runID)
		require.NoError(t, err)
		fi, err := os.Stat(b.Path)
		require.NoError(t, err)
		require.Equal(t, fi.Size(), b.Size)
		require.Positive(t, b.Size)
		require.Equal(t, filepath.Join(dir, "backups"), filepath.Dir(b.Path))
		made = append(made, b)
	}
	list, err := st.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, store.BackupRun, list[0].Reason)
	require.Equal(t, "r1", list[0].RunID)
	require.Equal(t, made[2].Size, list[0].Size)
	require.Equal(t, store.BackupImport, list[1].Reason)
	require.Positive(t, list[0].FromVersion)
	_, err = os.Stat(made[0].Path)
	require.ErrorIs(t, err, os.ErrNotExist, "the oldest backup's file is deleted")
	require.NoError(t, store.CheckBackupFile(ctx, made[2].Path))
	// Every backup is in the audit log, the pruned ones too.
	log, err := st.AuditLog(ctx, store.AuditFilter{All: true, Limit: 100})
	require.NoError(t, err)
	var backups []string
	for _, e := range log {
		if e.Action == "backup" {
			backups = append(backups, e.Detail)
		}
	}
	require.Equal(t, []string{store.BackupRun + " (run r1)", store.BackupImport, store.BackupManual}, backups)
}

// Restore refuses a file that fails the integrity check or is not a
// Quarry database, touching nothing; a good one replaces the database,
// keeping the replaced one as a backup.
func TestRestore(t *testing.T) {
	store.SkipOnPostgres(t, "backups are VACUUM INTO copies")
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "q.db")
	st, err := store.OpenForTest(t, ctx, path, store.Options{})
	require.NoError(t, err)
	_, err = st.SettingOrInit(ctx, "before", []byte("x"))
	require.NoError(t, err)
	good, err := st.Backup(ctx, store.BackupManual, "")
	require.NoError(t, err)
	_, err = st.SettingOrInit(ctx, "after", []byte("x"))
	require.NoError(t, err)
	require.NoError(t, st.Close())

	// A truncated copy, garbage, scrambled pages, and a SQLite file that
	// is not Quarry's.
	whole, err := os.ReadFile(good.Path)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "truncated.db")
	require.NoError(t, os.WriteFile(truncated, whole[:len(whole)/2], 0o644))
	garbage := filepath.Join(dir, "garbage.db")
	require.NoError(t, os.WriteFile(garbage, []byte("this is not a database, just text that goes on for a while"), 0o644))
	corrupt := filepath.Join(dir, "corrupt.db")
	bad := append([]byte(nil), whole...)
	for i := 4096 + 100; i < len(bad) && i < 4096*6; i++ {
		bad[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(corrupt, bad, 0o644))
	other := filepath.Join(dir, "other.db")
	odb, err := store.RawForTest(t, other, "")
	require.NoError(t, err)
	_, err = odb.Exec(`CREATE TABLE t (x)`)
	require.NoError(t, err)
	require.NoError(t, odb.Close())
	for _, f := range []string{truncated, garbage, corrupt, other, filepath.Join(dir, "missing.db")} {
		_, err := store.Restore(ctx, path, f, store.Options{})
		require.Error(t, err, f)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%s: %v", f, err)
	}
	st, err = store.OpenForTest(t, ctx, path, store.Options{})
	require.NoError(t, err)
	_, err = st.Setting(ctx, "after")
	require.NoError(t, err, "a refused restore touches nothing")
	require.NoError(t, st.Close())

	r, err := store.Restore(ctx, path, good.Path, store.Options{})
	require.NoError(t, err)
	require.NotEmpty(t, r.Replaced.Path)
	st, err = store.OpenForTest(t, ctx, path, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Setting(ctx, "before")
	require.NoError(t, err)
	_, err = st.Setting(ctx, "after")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "the restored database is the backup's")
	list, err := st.Backups(ctx)
	require.NoError(t, err)
	require.Equal(t, store.BackupRestore, list[0].Reason)
	require.Equal(t, r.Replaced.Path, list[0].Path)
	// The replaced database is kept, whole.
	require.NoError(t, store.CheckBackupFile(ctx, r.Replaced.Path))
}

// A bulk import (staged, then merged) backs the database up first.
func TestBulkImportIsBackedUpFirst(t *testing.T) {
	store.SkipOnPostgres(t, "backups are VACUUM INTO copies")
	t.Parallel()
	ctx := context.Background()
	st, _ := openLibraryFile(t)
	recs := []library.Record{paper("First quokka paper", "", 2020, "10.3/1"), paper("Second quokka paper", "", 2020, "10.3/2")}
	n := 0
	next := func() (library.Record, error) {
		if n == len(recs) {
			return library.Record{}, io.EOF
		}
		n++
		return recs[n-1], nil
	}
	_, err := library.Import(ctx, st, next, library.ImportOptions{BatchSize: 1})
	require.NoError(t, err)
	list, err := st.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, store.BackupImport, list[0].Reason)
	require.NoError(t, store.CheckBackupFile(ctx, list[0].Path))
}
