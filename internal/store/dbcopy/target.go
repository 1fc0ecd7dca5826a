package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"quarry/internal/fault"
	"quarry/migrations"
)

// checkEmpty refuses a target holding any table, view or sequence outside
// PostgreSQL's own schemas (goose's and River's tables included): Copy
// writes a whole installation and must not merge into, or overwrite,
// another one. A database without tables holds no rows.
func checkEmpty(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, `SELECT n.nspname || '.' || c.relname
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
		ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("dbcopy: inspect target: %w", err)
	}
	var found []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("dbcopy: inspect target: %w", err)
		}
		found = append(found, name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dbcopy: inspect target: %w", err)
	}
	if len(found) == 0 {
		return nil
	}
	shown := found
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("and %d more", len(found)-8))
	}
	return fault.Errorf(fault.EConflict, "the target database is not empty: it has %d table(s), view(s) or sequence(s) (%s); nothing was written. Copy into a new, empty database (CREATE DATABASE ...)", len(found), strings.Join(shown, ", "))
}

// newestMigration is the highest version among the SQLite migrations
// this binary carries, which the PostgreSQL ones must reach as well.
func newestMigration() (int64, error) {
	sqlite, err := maxVersion(migrations.FS)
	if err != nil {
		return 0, err
	}
	pgFS, err := migrations.Postgres()
	if err != nil {
		return 0, err
	}
	pg, err := maxVersion(pgFS)
	if err != nil {
		return 0, err
	}
	if pg != sqlite {
		return 0, fmt.Errorf("dbcopy: this build's newest SQLite migration is %d but its newest PostgreSQL one is %d", sqlite, pg)
	}
	return sqlite, nil
}

// maxVersion reads the numeric prefixes of fsys's NNNNN_x.sql files.
func maxVersion(fsys fs.FS) (int64, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return 0, err
	}
	var top int64
	for _, n := range names {
		digits, _, _ := strings.Cut(n, "_")
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("dbcopy: migration %s: %w", n, err)
		}
		top = max(top, v)
	}
	return top, nil
}

// sourceVersion is the source's goose version: the highest applied one.
func sourceVersion(ctx context.Context, tx *sql.Tx) (int64, error) {
	var v sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v)
	if err != nil {
		return 0, fault.Errorf(fault.EInvalid, "the source is not a Quarry database (no goose_db_version table: %v)", err)
	}
	return v.Int64, nil
}

// checkSourceVersion refuses a source at another version than this
// binary's newest migration: the PostgreSQL schema is built at that
// version, and the tables must be alike column for column.
func checkSourceVersion(ctx context.Context, tx *sql.Tx) (int64, error) {
	have, err := sourceVersion(ctx, tx)
	if err != nil {
		return 0, err
	}
	want, err := newestMigration()
	if err != nil {
		return 0, err
	}
	switch {
	case have < want:
		return 0, fault.Errorf(fault.EInvalid, "the source database is at schema version %d, this quarry's is %d: start this quarry once on it (quarry serve, or quarry backup) so it migrates, then copy it", have, want)
	case have > want:
		return 0, fault.Errorf(fault.EInvalid, "the source database is at schema version %d, newer than this quarry's %d: use the quarry that last opened it", have, want)
	}
	return have, nil
}

// migrateTarget builds the PostgreSQL schema at version with goose (the
// pgx database/sql driver) and River's tables with River's own migrator.
func migrateTarget(ctx context.Context, pool *pgxpool.Pool, version int64) error {
	fsys, err := migrations.Postgres()
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return fmt.Errorf("dbcopy: migrations: %w", err)
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fmt.Errorf("dbcopy: apply PostgreSQL migrations: %w", err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("dbcopy: river migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("dbcopy: apply river migrations: %w", err)
	}
	return nil
}
