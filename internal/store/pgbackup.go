package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Backups on PostgreSQL are pg_dump's archives (custom format, restored
// with pg_restore), written to the backup directory and recorded in the
// backups table as SQLite's VACUUM INTO copies are: the same rule (a
// backup before migrations, `quarry backup`, before a run that asks) and
// the same retention. pg_dump reads one consistent snapshot while the
// replicas keep writing.

// errNoPgDump is returned (wrapped) when no pg_dump program is found.
var errNoPgDump = errors.New("pg_dump was not found")

// pgDumpProgram is the pg_dump to run: configured (Options.PgDump) when
// set, else pg_dump on PATH (Debian's wrapper picks the newest installed
// version), else the newest under /usr/lib/postgresql/<major>/bin.
func pgDumpProgram(configured string) (string, error) {
	if configured != "" {
		if _, err := exec.LookPath(configured); err != nil {
			return "", fmt.Errorf("%w at %s (QUARRY_PG_DUMP): %v", errNoPgDump, configured, err)
		}
		return configured, nil
	}
	if p, err := exec.LookPath("pg_dump"); err == nil {
		return p, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
	slices.SortFunc(found, func(a, b string) int { return majorOf(a) - majorOf(b) })
	if len(found) > 0 {
		return found[len(found)-1], nil
	}
	return "", fmt.Errorf("%w on PATH or under /usr/lib/postgresql (Debian: apt-get install postgresql-client; or set QUARRY_PG_DUMP)", errNoPgDump)
}

// majorOf is the major version in /usr/lib/postgresql/<major>/bin/pg_dump.
func majorOf(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// dumpPostgres writes a pg_dump archive of the database to a new file in
// the backup directory and returns it, recording nothing. The archive is
// written under a ".partial" name and renamed once pg_dump succeeds, so
// a failed dump never leaves a file that looks complete.
func (s *Store) dumpPostgres(ctx context.Context, reason, runID string, version int64) (Backup, error) {
	prog, err := pgDumpProgram(s.pgDump)
	if err != nil {
		return Backup{}, err
	}
	if err := os.MkdirAll(s.backupDir, 0o755); err != nil {
		return Backup{}, fmt.Errorf("store: backup (%s): %w", reason, err)
	}
	b := Backup{Reason: reason, RunID: runID, FromVersion: version, CreatedAt: s.Now()}
	name := filepath.Join(s.backupDir, fmt.Sprintf("%s-%s-%s.dump", pgDatabaseName(s.dsn), reason, b.CreatedAt.UTC().Format("20060102T150405.000000000Z")))
	partial := name + ".partial"
	cmd := exec.CommandContext(ctx, prog, "--format=custom", "--no-password", "--file="+partial, "--dbname="+withConnectTimeout(s.dsn))
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(partial)
		return Backup{}, fmt.Errorf("store: backup (%s): %s failed: %v: %s", reason, prog, err, lastLine(out))
	}
	if err := os.Rename(partial, name); err != nil {
		os.Remove(partial)
		return Backup{}, fmt.Errorf("store: backup (%s): %w", reason, err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		return Backup{}, fmt.Errorf("store: backup (%s): %w", reason, err)
	}
	b.Path, b.Size = name, fi.Size()
	return b, nil
}

// pgBackupBeforeMigrating is the backup before migrations on PostgreSQL:
// pg_dump's archive of the database at version, or nothing when the
// operator confirmed a backup of that very version (confirmed, from
// QUARRY_PG_BACKUP_CONFIRMED; a confirmation of another version confirms
// nothing, so a setting left in place never skips a later upgrade's
// backup). Without pg_dump and without the confirmation the migration is
// refused, saying what to do.
func (s *Store) pgBackupBeforeMigrating(ctx context.Context, version, confirmed int64) (Backup, error) {
	if confirmed == version {
		s.log.Info("store: migrating without pg_dump: the operator confirmed a backup of this schema version (QUARRY_PG_BACKUP_CONFIRMED)", "from_version", version)
		return Backup{}, nil
	}
	if confirmed != 0 {
		s.log.Warn("store: QUARRY_PG_BACKUP_CONFIRMED names another schema version than the database's; backing up with pg_dump", "confirmed", confirmed, "from_version", version)
	}
	b, err := s.dumpPostgres(ctx, BackupMigration, "", version)
	if err != nil {
		return Backup{}, fmt.Errorf("%w; the database (schema version %d) has migrations to apply and Quarry backs a database up before migrating it: "+
			"make pg_dump available, or back the database up yourself and start once with QUARRY_PG_BACKUP_CONFIRMED=%d", err, version, version)
	}
	return b, nil
}

// withConnectTimeout adds libpq's connect_timeout (30 s) to a URL that
// sets none: a server that does not answer fails the dump rather than
// hanging the migration that waits for it.
func withConnectTimeout(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	if q.Has("connect_timeout") {
		return dsn
	}
	q.Set("connect_timeout", "30")
	u.RawQuery = q.Encode()
	return u.String()
}

// pgDatabaseName is the database's name in a PostgreSQL URL, for backup
// file names ("quarry" when the URL names none).
func pgDatabaseName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "quarry"
	}
	name := strings.Trim(u.Path, "/")
	if name == "" || strings.ContainsAny(name, `/\`) {
		return "quarry"
	}
	return name
}

// lastLine is the last non-empty line of a program's output: pg_dump's
// reason for failing.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
