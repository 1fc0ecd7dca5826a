package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/pressly/goose/v3"

	"quarry/migrations"
)

// Check is the result of one readiness check: Err is nil when it passed.
type Check struct {
	Name string
	Err  error
}

// The readiness checks, in the order Ready reports them.
const (
	CheckDatabase   = "database"
	CheckMigrations = "migrations"
	CheckWorkers    = "workers"
)

// Ready reports whether the store can serve: the database file can be
// opened and read now, its schema is at the newest embedded migration, and
// the job workers that advance runs are running. It returns every check,
// passed or not, so a probe can say which one failed.
//
// The database check opens the file itself and reads its header before it
// asks SQLite for the migration version. A query alone would not do: the
// pools keep the file open, so they go on answering after the file has
// become unreadable (permissions changed, file replaced or removed), and so
// does a fresh SQLite connection, which reuses a descriptor the process
// already holds on the file rather than opening it again.
func (s *Store) Ready(ctx context.Context) []Check {
	db := Check{Name: CheckDatabase}
	mig := Check{Name: CheckMigrations}
	version, err := s.probeVersion(ctx)
	if err != nil {
		db.Err = err
		mig.Err = errors.New("unknown: the database cannot be read")
	} else if latest, err := latestMigration(migrations.FS); err != nil {
		mig.Err = err
	} else if version != latest {
		mig.Err = fmt.Errorf("the database is at version %d, this binary's newest migration is %d", version, latest)
	}
	return []Check{db, mig, {Name: CheckWorkers, Err: s.workersRunning()}}
}

// probeVersion checks that the database file can be opened and is a SQLite
// database, then reads the applied migration version. The query runs only
// once the file is known to be there: a new pool connection to a missing
// file would create an empty one.
func (s *Store) probeVersion(ctx context.Context) (int64, error) {
	// On PostgreSQL there is no file: the query below is the probe.
	if !s.postgres() && !isMemory(s.path) {
		if err := readHeader(s.path); err != nil {
			return 0, err
		}
	}
	var v int64
	if err := s.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+goose.DefaultTablename).Scan(&v); err != nil {
		return 0, fmt.Errorf("read the migration version: %w", err)
	}
	return v, nil
}

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// readHeader opens path (a real open, so permissions are checked now) and
// checks that it starts as a SQLite database does.
func readHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, h); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if string(h) != sqliteHeader {
		return fmt.Errorf("%s is not a SQLite database", path)
	}
	return nil
}

// latestMigration is the highest version among the migration files.
func latestMigration(fsys fs.FS) (int64, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, name := range names {
		n, err := goose.NumericComponent(name)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", name, err)
		}
		latest = max(latest, n)
	}
	return latest, nil
}

// workersRunning is nil while River's workers are started and not stopped.
func (s *Store) workersRunning() error {
	w := s.worker
	if w == nil {
		return errors.New("not started")
	}
	select {
	case <-w.Stopped():
		return errors.New("stopped")
	default:
		return nil
	}
}

func isMemory(path string) bool {
	return path == ":memory:" || strings.HasPrefix(path, "file::memory:") || strings.Contains(path, "mode=memory")
}
