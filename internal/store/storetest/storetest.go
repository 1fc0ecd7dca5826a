// Package storetest lets any package's tests run on PostgreSQL instead of
// SQLite with one switch, QUARRY_TEST_STORE=postgres: a test names its
// database by a SQLite path, as it always has, and DSN turns that path
// into what store.Open (or app.Config.DatabaseURL) should get.
//
// It does not import the store, so the store's own tests use it too.
package storetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quarry/internal/pgtest"
)

// Env selects the database tests open: "postgres" runs them on a fresh
// database of the test binary's PostgreSQL server instead of a SQLite file.
const Env = "QUARRY_TEST_STORE"

// OnPostgres reports whether the tests run on PostgreSQL (Env).
func OnPostgres() bool { return os.Getenv(Env) == "postgres" }

// SkipOnPostgres skips a test of SQLite's own behaviour (files, VACUUM
// backups, max_page_count, the guard, the WAL) when the tests run on
// PostgreSQL.
func SkipOnPostgres(t testing.TB, reason string) {
	t.Helper()
	if OnPostgres() {
		t.Skip("SQLite only: " + reason)
	}
}

// DSN is what to open for the SQLite file path: path itself, or on
// PostgreSQL the URL of a database of pg standing for it. That database
// is created the first time path is asked for and its URL written to
// path, so a test that opens the same path again (a restart after a
// crash, a second process) gets the same database.
func DSN(t testing.TB, pg *pgtest.Shared, path string) string {
	t.Helper()
	if !OnPostgres() {
		return path
	}
	if url, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(url), "postgres://") {
		return string(url)
	}
	url := pg.NewDatabase(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(url), 0o644); err != nil {
		t.Fatal(err)
	}
	return url
}

// DatabaseURL is app.Config's DatabaseURL for a server whose DB is path:
// empty on SQLite, so the server opens the file, else DSN's URL (DB then
// only places the server's upload spool).
func DatabaseURL(t testing.TB, pg *pgtest.Shared, path string) string {
	t.Helper()
	if !OnPostgres() {
		return ""
	}
	return DSN(t, pg, path)
}
