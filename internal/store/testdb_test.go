package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreEnv selects the database the store's tests open: "postgres"
// runs them on a fresh database of the test binary's PostgreSQL server
// (pg) instead of a SQLite file.
const TestStoreEnv = "QUARRY_TEST_STORE"

// OnPostgres reports whether the tests run on PostgreSQL (TestStoreEnv).
func OnPostgres() bool { return os.Getenv(TestStoreEnv) == "postgres" }

// SkipOnPostgres skips a test of SQLite's own behaviour (files, VACUUM
// backups, max_page_count, the guard, the WAL) when the tests run on
// PostgreSQL.
func SkipOnPostgres(t testing.TB, reason string) {
	t.Helper()
	if OnPostgres() {
		t.Skip("SQLite only: " + reason)
	}
}

// OpenForTest is Open for tests: path is a SQLite file, or on PostgreSQL
// the stand-in for one. There a new database is created the first time
// path is opened, and its URL written to path, so a test that opens the
// same path again (reopen, a second process) gets the same database.
func OpenForTest(t testing.TB, ctx context.Context, path string, opts Options) (*Store, error) {
	t.Helper()
	if !OnPostgres() {
		return Open(ctx, path, opts)
	}
	if opts.Migrations != nil {
		t.Skip("SQLite only: the test brings its own SQLite migrations")
	}
	if opts.MaxBytes > 0 {
		t.Skip("SQLite only: Options.MaxBytes fills the \"disk\" with max_page_count")
	}
	url, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(url), "postgres://") {
		url = []byte(pg.NewDatabase(t))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, url, 0o644); err != nil {
			return nil, err
		}
	}
	return Open(ctx, string(url), opts)
}

// RawForTest is OpenRaw for tests that reach under the store into its
// SQLite file; on PostgreSQL it skips the test.
func RawForTest(t testing.TB, path, synchronous string) (*sql.DB, error) {
	t.Helper()
	SkipOnPostgres(t, "the test opens the database file with a raw SQLite connection")
	return OpenRaw(path, synchronous)
}
