package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"quarry/internal/store/storetest"
)

// OnPostgres reports whether the tests run on PostgreSQL
// (QUARRY_TEST_STORE=postgres, storetest.Env).
func OnPostgres() bool { return storetest.OnPostgres() }

// SkipOnPostgres skips a test of SQLite's own behaviour (files, VACUUM
// backups, max_page_count, the guard, the WAL) when the tests run on
// PostgreSQL.
func SkipOnPostgres(t testing.TB, reason string) {
	t.Helper()
	storetest.SkipOnPostgres(t, reason)
}

// OpenForTest is Open for tests: path is a SQLite file, or on PostgreSQL
// the stand-in for a database of the test binary's server (storetest.DSN),
// so a test that opens the same path again gets the same database.
func OpenForTest(t testing.TB, ctx context.Context, path string, opts Options) (*Store, error) {
	t.Helper()
	if OnPostgres() && opts.Migrations != nil {
		t.Skip("SQLite only: the test brings its own SQLite migrations")
	}
	if OnPostgres() && opts.MaxBytes > 0 {
		t.Skip("SQLite only: Options.MaxBytes fills the \"disk\" with max_page_count")
	}
	if OnPostgres() && opts.BackupDir == "" {
		opts.BackupDir = DefaultBackupDir(path) // not the working directory
	}
	return Open(ctx, storetest.DSN(t, &pg, path), opts)
}

// RawForTest is OpenRaw for tests that reach under the store into its
// database: on PostgreSQL a pool on the database standing for path that
// reads the tests' SQLite-written queries (? placeholders, bools bound as
// 0/1), as the store's handles do.
func RawForTest(t testing.TB, path, synchronous string) (*sql.DB, error) {
	t.Helper()
	if !OnPostgres() {
		return OpenRaw(path, synchronous)
	}
	url, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(string(url))
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(rebindConnector{stdlib.GetConnector(*cfg)}), nil
}

// rebindConnector hands out pgx connections that rebind (rebindConn).
type rebindConnector struct{ driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rebindConn{Conn: conn.(*stdlib.Conn), d: postgresDialect()}, nil
}

// rebindConn is a pgx connection whose queries are the dialect's.
type rebindConn struct {
	*stdlib.Conn
	d dialect
}

func (c rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, c.d.rebind(query), boolsAsInts(args))
}

func (c rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, c.d.rebind(query), boolsAsInts(args))
}

func (c rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, c.d.rebind(query))
}

func boolsAsInts(args []driver.NamedValue) []driver.NamedValue {
	for i, a := range args {
		if b, ok := a.Value.(bool); ok {
			args[i].Value = int64(0)
			if b {
				args[i].Value = int64(1)
			}
		}
	}
	return args
}

// OpenPostgresForTest opens a store on a new database of the test
// binary's PostgreSQL server, whatever TestStoreEnv says: for tests of
// what only PostgreSQL has. Without PostgreSQL the test is skipped (or
// fails where the server is required, see pgtest).
func OpenPostgresForTest(t testing.TB, ctx context.Context, opts Options) (*Store, string, error) {
	t.Helper()
	url := pg.NewDatabase(t)
	st, err := Open(ctx, url, opts)
	return st, url, err
}
