package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"quarry/internal/fault"
)

// DefaultBackupKeep is Options.BackupKeep's default.
const DefaultBackupKeep = 10

// Why a backup was taken (Backup.Reason).
const (
	BackupMigration = "migration" // before applying migrations
	BackupManual    = "manual"    // quarry backup
	BackupImport    = "import"    // before a bulk import
	BackupRestore   = "restore"   // the database a restore replaced
	BackupRun       = "run"       // before a run of a workflow that declares backup: true
)

// DefaultBackupDir is where backups go unless configured: a directory
// "backups" beside the database, so they live on the same disk and move
// with it.
func DefaultBackupDir(dbPath string) string {
	return filepath.Join(filepath.Dir(dbPath), "backups")
}

// Backup is one recorded backup: a complete database file.
type Backup struct {
	ID   int64
	Path string
	// Reason is one of the Backup* reasons.
	Reason string
	// RunID is the run it was taken for, if any.
	RunID string
	// FromVersion is the schema version the copy has.
	FromVersion int64
	Size        int64
	CreatedAt   time.Time
}

// Backup copies the live database into the backup directory, records it
// and applies retention. reason is one of the Backup* reasons; runID names
// the run it was taken for, or is empty.
func (s *Store) Backup(ctx context.Context, reason, runID string) (Backup, error) {
	var version int64
	if err := s.write.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil {
		return Backup{}, fmt.Errorf("store: backup: schema version: %w", err)
	}
	if s.postgres() {
		b, err := s.dumpPostgres(ctx, reason, runID, version)
		if err != nil {
			return Backup{}, err
		}
		return b, s.keep(ctx, b)
	}
	if s.path == ":memory:" || strings.HasPrefix(s.path, "file::memory:") {
		return Backup{}, fault.Errorf(fault.EInvalid, "an in-memory database has no file to back up")
	}
	// The copy is read on a connection of its own, in one read
	// transaction: the writer, which the server's runs share, goes on
	// meanwhile (WAL).
	db, err := OpenRaw(s.path, "")
	if err != nil {
		return Backup{}, fmt.Errorf("store: backup: %w", err)
	}
	b, err := s.snapshot(ctx, db, reason, runID, version)
	db.Close()
	if err != nil {
		return Backup{}, err
	}
	return b, s.keep(ctx, b)
}

// keep records a backup Backup made and puts it in the audit log.
func (s *Store) keep(ctx context.Context, b Backup) error {
	if err := s.record(ctx, b); err != nil {
		return err
	}
	s.auditBackup(ctx, b)
	return nil
}

// auditBackup puts a backup in the audit log, once the schema has one (a
// backup before the migration that adds it is only in backups). The copy
// is made: a failure to log it is logged, not returned.
func (s *Store) auditBackup(ctx context.Context, b Backup) {
	if ok, err := s.write.hasTable(ctx, "audit_log"); err != nil || !ok {
		return
	}
	detail := b.Reason
	if b.RunID != "" {
		detail += " (run " + b.RunID + ")"
	}
	if err := s.Audit(ctx, AuditEntry{Action: "backup", Actor: "quarry", Target: filepath.Base(b.Path), Detail: detail}); err != nil {
		s.log.Warn("store: backup not in the audit log", "backup", b.Path, "err", err)
	}
}

// BackupBeforeRun is the backup the engine takes before the first step
// of a run whose workflow declares backup: true (reason BackupRun, with
// the run's id). An in-memory database has nothing to copy: it is
// skipped with a warning rather than failing the run.
func (s *Store) BackupBeforeRun(ctx context.Context, runID string) error {
	if s.postgres() {
		if _, err := pgDumpProgram(s.pgDump); err != nil {
			// Failing the run would stop every workflow that asks for a
			// backup on an installation that has no pg_dump; the
			// operator's own dumps are the backup there.
			s.log.Warn("store: no backup before the run", "run", runID, "err", err)
			return nil
		}
	} else if s.path == ":memory:" || strings.HasPrefix(s.path, "file::memory:") {
		s.log.Warn("store: no backup before the run: the database is in memory", "run", runID)
		return nil
	}
	b, err := s.Backup(ctx, BackupRun, runID)
	if err != nil {
		return err
	}
	s.log.Info("store: backed up database before a run", "run", runID, "backup", b.Path, "size", b.Size)
	return nil
}

// snapshot writes a VACUUM INTO copy of the live database, read through
// db (consistent even while other connections write), to a new file in
// the backup directory; it records nothing. An in-memory database gives a
// zero Backup.
func (s *Store) snapshot(ctx context.Context, db *sql.DB, reason, runID string, version int64) (Backup, error) {
	if s.path == ":memory:" || strings.HasPrefix(s.path, "file::memory:") {
		return Backup{}, nil
	}
	b := Backup{Reason: reason, RunID: runID, FromVersion: version, CreatedAt: s.Now()}
	path, size, err := vacuumInto(ctx, db, s.backupDir, filepath.Base(s.path), reason, b.CreatedAt)
	if err != nil {
		return Backup{}, fmt.Errorf("store: backup (%s): %w", reason, err)
	}
	b.Path, b.Size = path, size
	return b, nil
}

// vacuumInto is the one way Quarry copies a database: VACUUM INTO a new
// file dir/<base>-<reason>-<time>.db, returning its path and size.
func vacuumInto(ctx context.Context, db *sql.DB, dir, base, reason string, at time.Time) (string, int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.db", strings.TrimSuffix(base, filepath.Ext(base)), reason, at.UTC().Format("20060102T150405.000000000Z")))
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, name); err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(name)
	if err != nil {
		return "", 0, err
	}
	return name, fi.Size(), nil
}

// record adds b to the backups table and deletes the backups past the
// newest backupKeep, files first. A database migrated only to an older
// schema (tests of upgrades) has no reason, run or size columns; the
// backup is then recorded without them.
func (s *Store) record(ctx context.Context, b Backup) error {
	full, err := s.write.hasColumn(ctx, "backups", "size")
	if err != nil {
		return fmt.Errorf("store: record backup: %w", err)
	}
	if !full {
		_, err = s.write.ExecContext(ctx, `INSERT INTO backups (path, from_version, created_at) VALUES (?, ?, ?)`,
			b.Path, b.FromVersion, formatTime(b.CreatedAt))
	} else {
		_, err = s.write.ExecContext(ctx, `INSERT INTO backups (path, from_version, created_at, reason, run_id, size) VALUES (?, ?, ?, ?, NULLIF(?, ''), ?)`,
			b.Path, b.FromVersion, formatTime(b.CreatedAt), b.Reason, b.RunID, b.Size)
	}
	if err != nil {
		return fmt.Errorf("store: record backup: %w", err)
	}
	return s.prune(ctx)
}

// prune deletes the backups older than the newest backupKeep: the file,
// then its row, so a failure leaves a row naming a missing file (retried
// next time), never a file no row names.
func (s *Store) prune(ctx context.Context) error {
	q := `SELECT id, path FROM backups ORDER BY id DESC LIMIT -1 OFFSET ?`
	if s.postgres() {
		q = `SELECT id, path FROM backups ORDER BY id DESC OFFSET ?`
	}
	rows, err := s.write.QueryContext(ctx, q, s.backupKeep)
	if err != nil {
		return fmt.Errorf("store: backup retention: %w", err)
	}
	type old struct {
		id   int64
		path string
	}
	var olds []old
	for rows.Next() {
		var o old
		if err := rows.Scan(&o.id, &o.path); err != nil {
			rows.Close()
			return fmt.Errorf("store: backup retention: %w", err)
		}
		olds = append(olds, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: backup retention: %w", err)
	}
	for _, o := range olds {
		if err := os.Remove(o.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: backup retention: %w", err)
		}
		if _, err := s.write.ExecContext(ctx, `DELETE FROM backups WHERE id = ?`, o.id); err != nil {
			return fmt.Errorf("store: backup retention: %w", err)
		}
	}
	return nil
}

// Backups lists the recorded backups, newest first.
func (s *Store) Backups(ctx context.Context) ([]Backup, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, path, from_version, created_at, reason, COALESCE(run_id, ''), size FROM backups ORDER BY id DESC`)
	if err != nil {
		// An older schema (tests of upgrades) lacks reason, run_id, size.
		rows, err = s.read.QueryContext(ctx, `SELECT id, path, from_version, created_at, 'migration', '', 0 FROM backups ORDER BY id DESC`)
	}
	if err != nil {
		return nil, fmt.Errorf("store: backups: %w", err)
	}
	defer rows.Close()
	var out []Backup
	for rows.Next() {
		var b Backup
		var at string
		if err := rows.Scan(&b.ID, &b.Path, &b.FromVersion, &at, &b.Reason, &b.RunID, &b.Size); err != nil {
			return nil, fmt.Errorf("store: backups: %w", err)
		}
		b.CreatedAt = parseTime(at)
		out = append(out, b)
	}
	return out, rows.Err()
}

// Restored is what Restore did.
type Restored struct {
	// Replaced is the backup of the database the restore replaced; its
	// Path is empty when there was none.
	Replaced Backup
	// Version is the restored database's schema version once migrated.
	Version int64
}

// Restore replaces the database at dbPath with the backup file: the file
// must pass SQLite's integrity check and be a Quarry database (else a
// fault.EInvalid error, and nothing is touched); the database it replaces
// is backed up first (reason BackupRestore, recorded in the restored
// database); the copy is swapped in by a rename, migrated if it is older,
// and checked again. No server may have the database open meanwhile: on
// Linux and macOS a database another process has open (SQLite's lock on
// its -shm file) is refused with fault.EConflict, nothing touched; call
// Restore before this process opens it.
func Restore(ctx context.Context, dbPath, file string, opts Options) (Restored, error) {
	busy, err := openElsewhere(dbPath)
	if err != nil {
		return Restored{}, err
	}
	if busy {
		return Restored{}, fault.Errorf(fault.EConflict, "%s is open in another process (a running server or import?): stop it, then restore", dbPath)
	}
	if err := CheckBackupFile(ctx, file); err != nil {
		return Restored{}, err
	}
	dir := opts.BackupDir
	if dir == "" {
		dir = DefaultBackupDir(dbPath)
	}
	now := time.Now()
	var replaced Backup
	if _, err := os.Stat(dbPath); err == nil {
		live, err := OpenRaw(dbPath, "FULL")
		if err != nil {
			return Restored{}, fmt.Errorf("store: restore: %w", err)
		}
		replaced = Backup{Reason: BackupRestore, CreatedAt: now}
		_ = live.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&replaced.FromVersion)
		replaced.Path, replaced.Size, err = vacuumInto(ctx, live, dir, filepath.Base(dbPath), BackupRestore, now)
		live.Close()
		if err != nil {
			return Restored{}, fmt.Errorf("store: restore: back up the database it replaces: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return Restored{}, fmt.Errorf("store: restore: %w", err)
	}
	// The copy is made next to the database (a rename stays on one disk)
	// by VACUUM INTO, which also folds in the file's own WAL, if any.
	tmp := dbPath + ".restoring"
	_ = os.Remove(tmp)
	src, err := openChecked(file)
	if err != nil {
		return Restored{}, err
	}
	_, err = src.ExecContext(ctx, `VACUUM INTO ?`, tmp)
	src.Close()
	if err != nil {
		_ = os.Remove(tmp)
		return Restored{}, fmt.Errorf("store: restore: copy %s: %w", file, err)
	}
	// The replaced database's WAL and shared memory belong to it: left
	// beside the new file, SQLite would read them as the new file's.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			_ = os.Remove(tmp)
			return Restored{}, fmt.Errorf("store: restore: %w", err)
		}
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		_ = os.Remove(tmp)
		return Restored{}, fmt.Errorf("store: restore: %w", err)
	}
	opts.BackupDir = dir
	st, err := Open(ctx, dbPath, opts)
	if err != nil {
		return Restored{Replaced: replaced}, fmt.Errorf("store: restore: open the restored database (the replaced one is in %s): %w", replaced.Path, err)
	}
	defer st.Close()
	if replaced.Path != "" {
		if err := st.record(ctx, replaced); err != nil {
			return Restored{Replaced: replaced}, err
		}
	}
	if err := integrity(ctx, st.write.DB); err != nil {
		return Restored{Replaced: replaced}, fault.Errorf(fault.EInternal, "the restored database fails SQLite's integrity check (the replaced one is in %s): %v", replaced.Path, err)
	}
	r := Restored{Replaced: replaced}
	err = st.write.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&r.Version)
	return r, err
}

// CheckBackupFile reports, as a fault.EInvalid error naming the file,
// whether file cannot be restored: it is missing, not a SQLite database,
// fails SQLite's integrity check, or is not Quarry's.
func CheckBackupFile(ctx context.Context, file string) error {
	fi, err := os.Stat(file)
	if err != nil {
		return fault.Errorf(fault.EInvalid, "cannot restore %s: %v", file, err)
	}
	if !fi.Mode().IsRegular() {
		return fault.Errorf(fault.EInvalid, "cannot restore %s: not a regular file", file)
	}
	db, err := openChecked(file)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := integrity(ctx, db); err != nil {
		return fault.Errorf(fault.EInvalid, "cannot restore %s: %v", file, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('goose_db_version', 'runs', 'backups')`).Scan(&n); err != nil || n != 3 {
		return fault.Errorf(fault.EInvalid, "cannot restore %s: it is a SQLite database but not Quarry's (no runs, backups or migration version tables)", file)
	}
	return nil
}

// openChecked opens file read-only on one connection.
func openChecked(file string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(file)+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", file, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// integrity runs PRAGMA integrity_check: nil when SQLite says "ok", else
// an error with its first findings. A file that is no database fails
// here too, as "file is not a database".
func integrity(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check(5)`)
	if err != nil {
		return fmt.Errorf("it fails SQLite's integrity check: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("it fails SQLite's integrity check: %w", err)
		}
		if line != "ok" {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("it fails SQLite's integrity check: %w", err)
	}
	if len(found) > 0 {
		return fmt.Errorf("it fails SQLite's integrity check: %s", strings.Join(found, "; "))
	}
	return nil
}
