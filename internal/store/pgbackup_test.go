package store

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"quarry/migrations"
)

// countWhere counts table's rows matching where on the database at url.
func countWhere(t *testing.T, url, table, where string, args ...any) int {
	t.Helper()
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRowContext(t.Context(), `SELECT count(*) FROM `+table+` WHERE `+where, args...).Scan(&n))
	return n
}

// TestPostgresBackup: on PostgreSQL Backup writes pg_dump's archive to
// the backup directory, records it and audits it, and pg_restore brings
// it back whole into an empty database; retention deletes the oldest.
func TestPostgresBackup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	dir := t.TempDir()
	s, err := Open(ctx, url, Options{BackupDir: dir, BackupKeep: 2})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Audit(ctx, AuditEntry{Action: "marker", Actor: "test", Target: "before the backup"}))

	b, err := s.Backup(ctx, BackupManual, "")
	require.NoError(t, err)
	require.Equal(t, dir, filepath.Dir(b.Path))
	require.True(t, strings.HasSuffix(b.Path, ".dump"), b.Path)
	fi, err := os.Stat(b.Path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), b.Size)
	require.Positive(t, b.FromVersion)
	list, err := s.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, b.Path, list[0].Path)
	require.Equal(t, 1, countWhere(t, url, "audit_log", "action = 'backup' AND target = $1", filepath.Base(b.Path)))
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
	require.Empty(t, leftovers)

	dump, err := pgDumpProgram("")
	require.NoError(t, err)
	restore, err := exec.LookPath(filepath.Join(filepath.Dir(dump), "pg_restore"))
	require.NoError(t, err, "pg_restore beside pg_dump")
	target := pg.NewDatabase(t)
	out, err := exec.CommandContext(ctx, restore, "--no-owner", "--dbname="+target, b.Path).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, 1, countWhere(t, target, "audit_log", "action = 'marker' AND target = 'before the backup'"))
	restored, err := Open(ctx, target, Options{BackupDir: t.TempDir()})
	require.NoError(t, err, "the restored database opens with nothing to migrate")
	require.NoError(t, restored.Close())

	for range 2 {
		_, err = s.Backup(ctx, BackupManual, "")
		require.NoError(t, err)
	}
	list, err = s.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2, "retention keeps the newest BackupKeep")
	_, err = os.Stat(b.Path)
	require.ErrorIs(t, err, os.ErrNotExist, "the oldest archive is deleted with its row")
}

// TestPostgresBackupBeforeMigrating: a PostgreSQL database with a
// migration to apply is dumped first; without pg_dump the migration is
// refused, naming the version to confirm, and nothing is migrated; the
// operator's confirmation of that version (not another) lets it go ahead
// without a dump.
func TestPostgresBackupBeforeMigrating(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	s, err := Open(ctx, url, Options{BackupDir: t.TempDir()})
	require.NoError(t, err)
	list, err := s.Backups(ctx)
	require.NoError(t, err)
	require.Empty(t, list, "a new database has nothing to back up")
	require.NoError(t, s.Close())

	// Take the newest migration back (by its own Down, whichever it is),
	// so opening has one to apply.
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	var latest int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&latest))
	fsys, err := migrations.Postgres()
	require.NoError(t, err)
	down, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	require.NoError(t, err)
	unmigrate := func() {
		t.Helper()
		_, err := down.Down(ctx)
		require.NoError(t, err)
	}
	version := func() int64 {
		t.Helper()
		var v int64
		require.NoError(t, db.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&v))
		return v
	}
	unmigrate()
	from := version()

	missing := filepath.Join(t.TempDir(), "no-pg_dump")
	_, err = Open(ctx, url, Options{BackupDir: t.TempDir(), PgDump: missing})
	require.ErrorContains(t, err, "pg_dump was not found")
	require.ErrorContains(t, err, "QUARRY_PG_BACKUP_CONFIRMED="+strconv.FormatInt(from, 10))
	require.Equal(t, from, version(), "nothing is migrated without a backup")
	_, err = Open(ctx, url, Options{BackupDir: t.TempDir(), PgDump: missing, PgBackupConfirmed: from - 1})
	require.Error(t, err, "a confirmation of another version confirms nothing")

	confirmed, err := Open(ctx, url, Options{BackupDir: t.TempDir(), PgDump: missing, PgBackupConfirmed: from})
	require.NoError(t, err)
	require.NoError(t, confirmed.Close())
	require.Equal(t, latest, version())

	unmigrate()
	dir := t.TempDir()
	s, err = Open(ctx, url, Options{BackupDir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, latest, version())
	list, err = s.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, BackupMigration, list[0].Reason)
	require.Equal(t, from, list[0].FromVersion)
	require.Equal(t, dir, filepath.Dir(list[0].Path))
	require.FileExists(t, list[0].Path)
}
