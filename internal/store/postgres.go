package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", database/sql's PostgreSQL driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"quarry/migrations"
)

// IsPostgresDSN reports whether Open reads dsn as a PostgreSQL URL rather
// than a SQLite file.
func IsPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// writeLockKey is the advisory lock every write transaction on PostgreSQL
// takes first (db.BeginTx). The store's code was written for SQLite's one
// writer: read-then-write sequences (a run's version check, a slot count,
// "is this checkpoint decided") are correct because no other write
// transaction interleaves. One transaction-scoped advisory lock keeps that
// true on PostgreSQL, across every replica on the database, without
// auditing each sequence for READ COMMITTED. The library's index
// relies on it too: it follows library_log by seq, so entries must commit
// in seq order, which one writer at a time gives (every write to papers is
// in a write transaction). It serialises writes as SQLite did; the way to
// relax it later is keys per run (hash of the run id) for the engine's
// writes, keeping this key for the rest (the library's writes above all).
// Autocommit single statements need no lock. River's own transactions
// (fetching, completing jobs) do not take it. The value is "quarry" in
// ASCII.
const writeLockKey int64 = 0x717561727279

// Pool sizes on PostgreSQL. Writes are serialised by writeLockKey, but
// River's fetches and completions share the write pool, and a write
// transaction waiting for the lock holds a connection. Few connections
// stay idle: a server's connection limit is shared by every replica (and
// a test binary's stores), and an idle PostgreSQL connection costs a
// backend process.
const (
	pgWriteConns    = 10
	pgReadConns     = 4
	pgIdleConns     = 2
	pgListenerConns = 2
	pgIdleTime      = time.Minute
)

// postgres reports whether the store is on PostgreSQL.
func (s *Store) postgres() bool { return s.write.d.kind == dialectPostgres }

// PgxPool is the pgx pool River's listener uses on PostgreSQL, for other
// LISTEN/NOTIFY users (the event relay, internal/store/pgrelay); nil on
// SQLite.
func (s *Store) PgxPool() *pgxpool.Pool { return s.pgx }

// openPostgres is Open for a PostgreSQL URL: database/sql pools through
// pgx for the store's queries and River's, a pgx pool for River's
// listener. SQLite's file maintenance has no counterpart here (see
// Backup, guard, capSize, checkpoint).
func (s *Store) openPostgres(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.Migrations != nil {
		return nil, fmt.Errorf("store: Options.Migrations holds SQLite migrations; PostgreSQL's are migrations.Postgres()")
	}
	if opts.MaxBytes > 0 {
		return nil, fmt.Errorf("store: Options.MaxBytes (SQLite's max_page_count) has no PostgreSQL counterpart")
	}
	open := func(conns int, writer bool) (*db, error) {
		pool, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, err
		}
		pool.SetMaxOpenConns(conns)
		pool.SetMaxIdleConns(pgIdleConns)
		pool.SetConnMaxIdleTime(pgIdleTime)
		return &db{DB: pool, d: postgresDialect(), writer: writer, busy: opts.BusyTimeout}, nil
	}
	var err error
	if s.write, err = open(pgWriteConns, true); err != nil {
		return nil, fmt.Errorf("store: open writer: %w", err)
	}
	if err := s.write.PingContext(ctx); err != nil {
		s.write.Close()
		return nil, fmt.Errorf("store: open PostgreSQL: %w", err)
	}
	var version int
	if err := s.write.QueryRowContext(ctx, `SELECT CAST(current_setting('server_version_num') AS integer)`).Scan(&version); err != nil {
		s.write.Close()
		return nil, fmt.Errorf("store: PostgreSQL version: %w", err)
	}
	s.write.d.inputIsValid = version >= 160000
	if err := s.migratePostgres(ctx, opts.PgBackupConfirmed); err != nil {
		s.write.Close()
		return nil, err
	}
	if err := s.tidyLibrary(ctx); err != nil {
		s.write.Close()
		return nil, err
	}
	// The guard (SQLite's authorizer) is not installed: PostgreSQL has no
	// per-statement authorizer. Its counterpart is a role without DDL
	// rights for the server, the operator's to grant.
	if s.read, err = open(pgReadConns, false); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open readers: %w", err)
	}
	s.read.d.inputIsValid = s.write.d.inputIsValid
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("store: listener pool: %w", err)
	}
	cfg.MinConns, cfg.MaxConns = 0, pgListenerConns
	if s.pgx, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: listener pool: %w", err)
	}
	if err := s.ready(ctx, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// migratePostgres applies the PostgreSQL migrations, after a backup when
// the database already has a schema (pgBackupBeforeMigrating), and
// River's. goose holds a session advisory lock while it migrates, so
// replicas starting together migrate one after another (each may take its
// own backup first); River's migrator reads and applies as on SQLite
// (settle).
func (s *Store) migratePostgres(ctx context.Context, confirmed int64) error {
	fsys, err := migrations.Postgres()
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, s.write.DB, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	err = s.gooseUp(ctx, p, func(current int64) (Backup, error) {
		return s.pgBackupBeforeMigrating(ctx, current, confirmed)
	}, func() error { _, err := p.Up(ctx); return err })
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(riverdatabasesql.New(s.write.DB), nil)
	if err != nil {
		return fmt.Errorf("store: river migrations: %w", err)
	}
	return migrateRiver(ctx, m)
}

// riverDriver is the River driver on the store's queue pool. On
// PostgreSQL it is database/sql's (so jobs insert inside the store's
// *sql.Tx) with pgx's listener for LISTEN/NOTIFY.
func (s *Store) riverDriver() riverdriver.Driver[*sql.Tx] {
	if s.postgres() {
		return riverdatabasesql.NewWithPgxListener(s.queue, s.pgx)
	}
	return localDriver{riversqlite.New(s.queue)}
}
