// Package store is Quarry's one database package: the schema and its
// migrations, the engine's durable state, the River job queue that
// advances runs, and the local paper library with its full-text index, all
// in one database: a SQLite file, or PostgreSQL (postgres.go). It imports only the domain centre (research,
// fault) and the engine it persists; callers above it (library, handlers)
// decide what to store.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"modernc.org/sqlite" // the pure-Go SQLite driver, also registered as "sqlite"

	"quarry/internal/engine"
	"quarry/migrations"
)

// Store owns the database: one writer connection, which River's job queue
// shares (SQLite allows one writer; a single pooled connection turns lock
// contention into an in-process queue), and a pool of readers.
type Store struct {
	path string
	// write and read rebind queries for their dialect (dialect.go).
	write *db
	read  *db
	// queue is River's pool: write's, shared.
	queue *sql.DB
	// pgx is River's listener pool on PostgreSQL (nil on SQLite).
	pgx *pgxpool.Pool
	// dsn is the PostgreSQL URL (pg_dump's), pgDump the program; both
	// empty on SQLite.
	dsn, pgDump string
	// jobs inserts River jobs, inside our transactions when atomicity matters.
	jobs   *river.Client[*sql.Tx]
	worker *river.Client[*sql.Tx]
	// guard refuses destructive statements once migrations are done.
	guard guard
	// timers start this process's jobs due later on time (timers.go).
	timers timers
	slots  slots
	log    *slog.Logger
	// stmts are the hot path's statements, prepared once on the writer
	// connection: parsing SQL was a sixth of a step commit's CPU.
	stmts struct {
		updateRun, updateRunSameStatus, insertStepRun *sql.Stmt
		// runStamp is on the readers: every run page and GET
		// /api/runs/:id asks it, and parsing was half its cost.
		runStamp *sql.Stmt
	}
	// backupDir and backupKeep are Options.BackupDir and BackupKeep with
	// their defaults applied.
	backupDir  string
	backupKeep int
	// importReserve is Options.ImportReserve with its default applied.
	importReserve int64
	// mergeRows is the first merge transaction's size, mergeRowsMax its
	// cap (see MergeStaged).
	mergeRows, mergeRowsMax int
	// fulltext is the library's in-memory full-text index
	// (library_fulltext.go).
	fulltext fulltext
	// tsRanking is Options.LibraryRanking == RankPostgres: the library's
	// searches run on text_search, and fulltext stays empty.
	tsRanking bool
	// tsStats is bm25's N and row lengths' sum for that ranking, as of a
	// library_log head (library_tsbm25.go).
	tsStats tsStats
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// Options tune Open.
type Options struct {
	Logger *slog.Logger
	// Synchronous is SQLite's synchronous pragma; FULL (the default) makes
	// every committed step survive a power cut, not just a crash.
	Synchronous string
	// Migrations replaces the embedded migrations (tests of the upgrade path).
	Migrations fs.FS
	// BusyTimeout is how long a write waits for another process's write
	// lock before it fails as busy (fault.EUnavailable); default 10s.
	BusyTimeout time.Duration
	// MaxBytes caps the database file (SQLite's max_page_count); at the
	// cap writes fail as on a full disk. 0 means no cap. It is a quota for
	// operators, and how tests fill the "disk" without filling one.
	MaxBytes int64
	// ImportReserve is the free space a bulk import leaves on the disk
	// holding the database (default DefaultImportReserve; negative turns
	// the check off): it stops, naming the full disk, before it takes the
	// room the server's runs and its own clean-up need. A disk filled to
	// the last byte cannot even delete what an import staged, since the
	// delete must be logged first.
	ImportReserve int64
	// BackupDir is where backups are written; empty means a directory
	// "backups" beside the database (DefaultBackupDir), or in the working
	// directory on PostgreSQL.
	BackupDir string
	// BackupKeep is how many backups retention keeps (the newest); older
	// ones are deleted with their files. 0 means DefaultBackupKeep.
	BackupKeep int
	// PgDump is the pg_dump program backups on PostgreSQL run; empty
	// looks for pg_dump on PATH, then in Debian's /usr/lib/postgresql.
	PgDump string
	// PgBackupConfirmed is the schema version of a PostgreSQL database the
	// operator says is backed up: migrating from that version goes ahead
	// without pg_dump (pgBackupBeforeMigrating). 0: none.
	PgBackupConfirmed int64
	// MergeRows caps the rows one merge transaction of a bulk import moves
	// (default 10000; below it the size adapts to keep each transaction
	// short). Tests lower it to see merges interleave with other writers.
	MergeRows int
	// LibraryRanking is how the library's full-text search ranks: RankMemory
	// (the default, "") with the in-memory bm25 index on either database,
	// or RankPostgres with PostgreSQL's text_search (GIN) and the same bm25
	// computed from its positions, which keeps no index in memory
	// (library_tsvector.go, library_tsbm25.go). RankPostgres on
	// SQLite is an error.
	LibraryRanking string
}

// writerCacheKiB is the write connection's page cache, in KiB.
const writerCacheKiB = 64 << 10

// DefaultImportReserve is Options.ImportReserve's default: room for many
// runs and for deleting a failed import's stage.
const DefaultImportReserve = 64 << 20

// DefaultBusyTimeout is Options.BusyTimeout's default: long enough to wait
// out a bulk import's merge transaction (about a second at most) many times
// over, short enough that a request still answers.
const DefaultBusyTimeout = 10 * time.Second

func dsn(path string, readOnly bool, sync string, busy time.Duration) string {
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		// Readers rank over the full-text index, whose bm25 looks up
		// each match's column sizes: with SQLite's 2 MB default page
		// cache those lookups were mostly reads from the file (a
		// profile of the ranked library benchmark: 25% of its time in
		// read syscalls). A 64 MB cache per reader and reads through a
		// memory map (up to 1 GiB, address space only; the OS page cache
		// holds the pages) cut its CPU time by 60%.
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", "mmap_size(1073741824)")
	} else {
		// BEGIN IMMEDIATE takes the write lock up front, so two writers
		// never deadlock upgrading a read lock.
		q.Set("_txlock", "immediate")
		// A bulk import's full-text merges read back the segments they
		// write: with SQLite's default 2 MiB page cache they came from the
		// OS again and again (a third of an import's time). The cache
		// grows only as pages are used.
		q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -writerCacheKiB))
	}
	return "file:" + uriPath(path) + "?" + q.Encode()
}

// uriPath escapes what a SQLite URI filename reads as syntax: "?" starts
// the query and "#" a fragment, so a database in a directory named
// "runs#2" would otherwise open the file "runs" (SQLite decodes %HH).
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// OpenRaw opens a single connection to path with the store's connection
// settings, for tools and benchmarks that must compare like with like.
func OpenRaw(path, synchronous string) (*sql.DB, error) {
	if synchronous == "" {
		synchronous = "FULL"
	}
	db, err := sql.Open("sqlite", dsn(path, false, synchronous, 0))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Open opens (creating if needed) the database at path, backs it up if it
// has pending migrations, and applies them. A path starting postgres:// or
// postgresql:// is a PostgreSQL URL instead (openPostgres): one API over
// both databases.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	switch opts.LibraryRanking {
	case "", RankMemory, RankPostgres:
	default:
		return nil, fmt.Errorf("store: Options.LibraryRanking %q is neither %q nor %q", opts.LibraryRanking, RankMemory, RankPostgres)
	}
	if IsPostgresDSN(path) {
		s := &Store{log: opts.Logger, Now: time.Now, mergeRows: firstMergeRows, mergeRowsMax: maxMergeRows, importReserve: -1,
			dsn: path, pgDump: opts.PgDump, backupDir: opts.BackupDir, backupKeep: opts.BackupKeep,
			tsRanking: opts.LibraryRanking == RankPostgres}
		if s.backupDir == "" {
			s.backupDir = "backups"
		}
		if s.backupKeep <= 0 {
			s.backupKeep = DefaultBackupKeep
		}
		if opts.MergeRows > 0 {
			s.mergeRowsMax = opts.MergeRows
			s.mergeRows = min(s.mergeRows, opts.MergeRows)
		}
		return s.openPostgres(ctx, path, opts)
	}
	if opts.LibraryRanking == RankPostgres {
		return nil, fmt.Errorf("store: Options.LibraryRanking %q needs a PostgreSQL database", RankPostgres)
	}
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	if opts.Migrations == nil {
		opts.Migrations = migrations.FS
	}
	s := &Store{path: path, log: opts.Logger, Now: time.Now, mergeRows: firstMergeRows, mergeRowsMax: maxMergeRows}
	s.backupDir, s.backupKeep = opts.BackupDir, opts.BackupKeep
	if s.backupDir == "" {
		s.backupDir = DefaultBackupDir(path)
	}
	if s.backupKeep <= 0 {
		s.backupKeep = DefaultBackupKeep
	}
	s.importReserve = opts.ImportReserve
	if s.importReserve == 0 {
		s.importReserve = DefaultImportReserve
	}
	if opts.MergeRows > 0 {
		s.mergeRowsMax = opts.MergeRows
		s.mergeRows = min(s.mergeRows, opts.MergeRows)
	}
	var err error
	open := func(readOnly bool, conns int) (*db, error) {
		base, err := sqlite.NewConnector(dsn(path, readOnly, opts.Synchronous, opts.BusyTimeout))
		if err != nil {
			return nil, err
		}
		pool := sql.OpenDB(guardedConnector{base, &s.guard})
		pool.SetMaxOpenConns(conns)
		pool.SetMaxIdleConns(conns)
		pool.SetConnMaxLifetime(0)
		pool.SetConnMaxIdleTime(0)
		return &db{DB: pool, d: sqliteDialect()}, nil
	}
	if s.write, err = open(false, 1); err != nil {
		return nil, fmt.Errorf("store: open writer: %w", err)
	}
	// The first connection switches a new database to WAL, which two
	// processes opening it at once can find busy without SQLite waiting.
	if err := settle(ctx, func() error { return s.write.PingContext(ctx) }); err != nil {
		s.write.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Two processes opening a new database at once race to migrate it; the
	// loser's migration fails (table exists, version row taken). Trying
	// again finds the schema current, so a few attempts settle it.
	for attempt := 1; ; attempt++ {
		err = s.migrate(ctx, opts.Migrations)
		if err == nil || attempt == 3 || ctx.Err() != nil {
			break
		}
		s.log.Warn("store: migration failed, retrying (another process may be migrating)", "err", err)
	}
	if err != nil {
		s.write.Close()
		return nil, err
	}
	if err := s.tidyLibrary(ctx); err != nil {
		s.write.Close()
		return nil, err
	}
	if err := capSize(ctx, s.write.DB, opts.MaxBytes); err != nil {
		s.write.Close()
		return nil, err
	}
	// From here on no DROP, ALTER or unbounded DELETE runs (guard.go).
	if err := s.guard.arm(ctx, s.write.DB); err != nil {
		s.write.Close()
		return nil, err
	}
	if s.read, err = open(true, 4); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open readers: %w", err)
	}
	if err := s.ready(ctx, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// ready ends Open on either database: the hot path's statements prepared
// and River's inserting client made. River writes through the store's
// writer: on SQLite its single connection, as two writer connections in
// one process contend inside SQLite, whose busy handler sleeps 1, 2, 5,
// 10 … ms between tries, so a job fetch that met a step's commit waited
// for it; one connection queues them in database/sql, handed over at
// once. So nothing may wait on River (a non-Tx insert, Wake) while it
// holds a write transaction. On failure the store is closed.
func (s *Store) ready(ctx context.Context, opts Options) error {
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return err
	}
	s.queue = s.write.DB
	var err error
	if s.jobs, err = river.NewClient(s.riverDriver(), &river.Config{Logger: quietLogger(opts.Logger)}); err != nil {
		s.Close()
		return fmt.Errorf("store: river client: %w", err)
	}
	return nil
}

// prepare prepares the hot path's statements (Store.stmts).
func (s *Store) prepare(ctx context.Context) error {
	var err error
	if s.stmts.updateRun, err = s.write.PrepareContext(ctx, updateRunSQL); err != nil {
		return fmt.Errorf("store: prepare: %w", err)
	}
	if s.stmts.updateRunSameStatus, err = s.write.PrepareContext(ctx, updateRunSameStatusSQL); err != nil {
		return fmt.Errorf("store: prepare: %w", err)
	}
	// A database opened with only older migrations (tests of upgrades)
	// has no step_runs.status: insertStepRun then writes unprepared, and
	// fails there.
	s.stmts.insertStepRun, _ = s.write.PrepareContext(ctx, insertStepRunSQL)
	// A database opened with only older migrations (tests of upgrades)
	// has no paper_marks: RunStamp then asks unprepared, and fails there.
	s.stmts.runStamp, _ = s.read.PrepareContext(ctx, runStampSQL(s.read.d))
	return nil
}

// capSize applies Options.MaxBytes to a single-connection writer pool
// (max_page_count is a connection's setting; the pools keep their one
// connection for their lifetime). SQLite never sets it below the file's
// current size, so a cap under it means "full now".
func capSize(ctx context.Context, db *sql.DB, maxBytes int64) error {
	if maxBytes <= 0 {
		return nil
	}
	var pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return fmt.Errorf("store: page size: %w", err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, max(1, maxBytes/pageSize))); err != nil {
		return fmt.Errorf("store: cap the database size: %w", err)
	}
	return nil
}

// quietLogger keeps River's chatter at warnings and above, and says a
// repeated message once per repeatEvery: while the disk is full every
// fetch of the queue fails the same way, and one line with a count says it
// as well as thousands.
func quietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(&repeatFilter{Handler: levelFilter{l.Handler(), slog.LevelWarn}, seen: &repeats{last: map[string]repeat{}}})
}

const repeatEvery = 30 * time.Second

type repeat struct {
	at         time.Time
	suppressed int
}

type repeats struct {
	mu   sync.Mutex
	last map[string]repeat
}

// repeatFilter drops a record whose message was logged less than
// repeatEvery ago, and adds to the next one logged how many it dropped.
type repeatFilter struct {
	slog.Handler
	seen *repeats
}

func (f *repeatFilter) Handle(ctx context.Context, r slog.Record) error {
	f.seen.mu.Lock()
	prev, ok := f.seen.last[r.Message]
	if ok && r.Time.Sub(prev.at) < repeatEvery {
		prev.suppressed++
		f.seen.last[r.Message] = prev
		f.seen.mu.Unlock()
		return nil
	}
	f.seen.last[r.Message] = repeat{at: r.Time}
	f.seen.mu.Unlock()
	if prev.suppressed > 0 {
		r.AddAttrs(slog.Int("repeated", prev.suppressed))
	}
	return f.Handler.Handle(ctx, r)
}

func (f *repeatFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return &repeatFilter{Handler: f.Handler.WithAttrs(as), seen: f.seen}
}

func (f *repeatFilter) WithGroup(name string) slog.Handler {
	return &repeatFilter{Handler: f.Handler.WithGroup(name), seen: f.seen}
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// migrate applies pending goose migrations (after an online backup when the
// database already has a schema) and River's own migrations.
func (s *Store) migrate(ctx context.Context, fsys fs.FS) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, s.write.DB, fsys)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	// Several processes may open a new database at once (quarry import
	// beside a starting server): goose reads the applied versions, then
	// applies each missing one in its own transaction, so an opener can
	// lose the race ("index … already exists") with its transaction
	// rolled back; reading again finds the winner's versions (settle).
	err = s.gooseUp(ctx, p, func(current int64) (Backup, error) {
		return s.snapshot(ctx, s.write.DB, BackupMigration, "", current)
	}, func() error { return settle(ctx, func() error { _, err := p.Up(ctx); return err }) })
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(riversqlite.New(s.write.DB), nil)
	if err != nil {
		return fmt.Errorf("store: river migrations: %w", err)
	}
	return migrateRiver(ctx, m)
}

// gooseUp applies p's pending migrations with up, first taking a backup
// with take when the database already has a schema, then recording it:
// the rule both databases follow.
func (s *Store) gooseUp(ctx context.Context, p *goose.Provider, take func(version int64) (Backup, error), up func() error) error {
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("store: migration version: %w", err)
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("store: migration status: %w", err)
	}
	var backup Backup
	if pending && current > 0 {
		if backup, err = take(current); err != nil {
			return err
		}
	}
	if err := up(); err != nil {
		return fmt.Errorf("store: apply migrations (backup: %q): %w", backup.Path, err)
	}
	if backup.Path != "" {
		if err := s.record(ctx, backup); err != nil {
			return err
		}
		s.log.Info("store: backed up database before migrating", "backup", backup.Path, "from_version", current)
	}
	return nil
}

// migrateRiver applies River's migrations. River, like goose, reads which
// versions are applied before applying each missing one in its own
// transaction, so a concurrent opener of a new database can lose the race
// the same way (settle).
func migrateRiver(ctx context.Context, m *rivermigrate.Migrator[*sql.Tx]) error {
	if err := settle(ctx, func() error { _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); return err }); err != nil {
		return fmt.Errorf("store: apply river migrations: %w", err)
	}
	return nil
}

// settle runs apply, a migration run that may lose a race with another
// process, up to five times with a growing pause: the loser's transaction
// was rolled back with nothing half-done, and the winner's versions are
// committed by the time it reads them again.
func settle(ctx context.Context, apply func() error) error {
	const attempts = 5
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		if err = apply(); err == nil {
			return nil
		}
		if attempt < attempts {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
			}
		}
	}
	return err
}

// Close stops the workers (if started) and closes every pool.
func (s *Store) Close() error {
	var errs []error
	s.stopTimers()
	if s.worker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.worker.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
		cancel()
		s.worker = nil
	}
	for _, st := range []*sql.Stmt{s.stmts.updateRun, s.stmts.updateRunSameStatus, s.stmts.insertStepRun, s.stmts.runStamp} {
		if st != nil {
			st.Close()
		}
	}
	for _, h := range []*db{s.read, s.write} {
		if h != nil {
			errs = append(errs, h.Close())
		}
	}
	if s.pgx != nil {
		s.pgx.Close()
	}
	return errors.Join(errs...)
}

// Path is the database file; "" on PostgreSQL (whose URL may hold a
// password).
func (s *Store) Path() string { return s.path }

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

var _ engine.Store = (*Store)(nil)

// tidyLibrary is what Open does to the library on either database once
// migrated: it drops what an interrupted import staged and indexes the
// compounds an older library lacks.
func (s *Store) tidyLibrary(ctx context.Context) error {
	if err := s.dropAbandonedStaging(ctx); err != nil {
		return err
	}
	return s.fillPendingCompounds(ctx)
}
