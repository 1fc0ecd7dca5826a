// Package dbcopy moves a Quarry installation from SQLite to PostgreSQL:
// it builds the PostgreSQL schema in an empty database (goose and River
// migrations), copies every application table and checks each table's
// rows and checksum on both sides. It is a one-shot tool for `quarry
// migrate-db`; the running store never uses it.
package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // the source database

	"quarry/internal/fault"
)

// Options tune Copy.
type Options struct {
	// Progress, when set, is called as a table's rows are written: done
	// of total so far, and once more when the table is complete.
	Progress func(table string, done, total int64)
}

// TableReport is one table's outcome: its rows and checksums on both
// sides (checksum.go says what they cover).
type TableReport struct {
	Name           string
	Rows           int64 // in SQLite
	TargetRows     int64 // in PostgreSQL
	Checksum       string
	TargetChecksum string
	Match          bool
}

// Report is what Copy or Verify found.
type Report struct {
	Version int64 // the goose version both databases are at
	Tables  []TableReport
	// Notes are what the operator must know that is no error: data that
	// was deliberately not copied, files that stay on disk.
	Notes    []string
	Duration time.Duration
}

// Mismatched names the tables whose rows or checksums differ.
func (r Report) Mismatched() []string {
	var bad []string
	for _, t := range r.Tables {
		if !t.Match {
			bad = append(bad, t.Name)
		}
	}
	return bad
}

// OpenSQLite opens the SQLite database at path read-only (the file must
// exist; nothing is created and no migration runs), for Copy and Verify.
func OpenSQLite(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fault.Errorf(fault.EInvalid, "no SQLite database at %s: %v", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	// One connection: Copy reads everything in one transaction, a
	// consistent snapshot even if a server still writes.
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("dbcopy: open %s: %w", path, err)
	}
	return db, nil
}

// uriPath escapes what a SQLite URI filename reads as syntax (as the
// store's dsn does).
func uriPath(path string) string {
	out := make([]byte, 0, len(path))
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '%', '?', '#':
			out = append(out, fmt.Sprintf("%%%02x", c)...)
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

// Copy copies the SQLite database src into the empty PostgreSQL database
// at dstURL and verifies the copy. It refuses, writing nothing, a target
// that holds any table and a source not at the newest migration. A
// failure after the schema was created leaves the target non-empty: drop
// and recreate it before trying again. A table that does not match is
// an error returned with the filled report.
func Copy(ctx context.Context, src *sql.DB, dstURL string, opts Options) (Report, error) {
	start := time.Now()
	var rep Report
	pool, err := connect(ctx, dstURL)
	if err != nil {
		return rep, err
	}
	defer pool.Close()
	if err := checkEmpty(ctx, pool); err != nil {
		return rep, err
	}
	tx, err := src.BeginTx(ctx, nil)
	if err != nil {
		return rep, fmt.Errorf("dbcopy: read source: %w", err)
	}
	defer tx.Rollback()
	if rep.Version, err = checkSourceVersion(ctx, tx); err != nil {
		return rep, err
	}
	if err := migrateTarget(ctx, pool, rep.Version); err != nil {
		return rep, partial(err)
	}
	tables, err := plan(ctx, tx, pool)
	if err != nil {
		return rep, partial(err)
	}
	if err := copyTables(ctx, tx, pool, tables, opts.Progress); err != nil {
		return rep, partial(err)
	}
	requeued, err := requeueJobs(ctx, tx, pool)
	if err != nil {
		return rep, err
	}
	if rep.Notes, err = notes(ctx, tx, requeued); err != nil {
		return rep, err
	}
	rep.Tables, err = verifyTables(ctx, tx, pool, tables)
	rep.Duration = time.Since(start)
	if err != nil {
		return rep, err
	}
	return rep, mismatch(rep)
}

// Verify compares src and the PostgreSQL database at dstURL table by
// table, as Copy does after copying; a mismatch is an error returned with
// the filled report.
func Verify(ctx context.Context, src *sql.DB, dstURL string) (Report, error) {
	start := time.Now()
	var rep Report
	pool, err := connect(ctx, dstURL)
	if err != nil {
		return rep, err
	}
	defer pool.Close()
	tx, err := src.BeginTx(ctx, nil)
	if err != nil {
		return rep, fmt.Errorf("dbcopy: read source: %w", err)
	}
	defer tx.Rollback()
	if rep.Version, err = sourceVersion(ctx, tx); err != nil {
		return rep, err
	}
	tables, err := plan(ctx, tx, pool)
	if err != nil {
		return rep, err
	}
	rep.Tables, err = verifyTables(ctx, tx, pool, tables)
	rep.Duration = time.Since(start)
	if err != nil {
		return rep, err
	}
	return rep, mismatch(rep)
}

// partial says, with err, what a failure after the schema was begun
// leaves: Copy would refuse the target now.
func partial(err error) error {
	return fmt.Errorf("%w (the target now holds the schema but no copied rows: drop and recreate it before trying again)", err)
}

// mismatch is the error for a report with unequal tables, or nil.
func mismatch(rep Report) error {
	if bad := rep.Mismatched(); len(bad) > 0 {
		return fault.Errorf(fault.EConflict, "the copy differs from the source in %d table(s): %v", len(bad), bad)
	}
	return nil
}

// connect opens a small pool on the target: goose, River and the copy
// take one connection at a time.
func connect(ctx context.Context, dstURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dstURL)
	if err != nil {
		return nil, fault.Errorf(fault.EInvalid, "bad PostgreSQL URL: %v", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("dbcopy: connect to %s: %w", redact(cfg.ConnConfig), err)
	}
	return pool, nil
}

// redact names the target without its password.
func redact(c *pgx.ConnConfig) string {
	return fmt.Sprintf("database %q on %s:%d as %s", c.Database, c.Host, c.Port, c.User)
}
