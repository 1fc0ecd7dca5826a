package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// progressEvery is how many rows pass between two progress calls.
const progressEvery = 10000

// copyTables writes every table in one target transaction, so a failure
// leaves the schema without rows. User triggers are off meanwhile: the
// papers triggers would log every copied paper into library_log, which is
// itself copied. Rows a migration inserted (vector_generation's single
// row) are replaced by the source's.
func copyTables(ctx context.Context, src *sql.Tx, pool *pgxpool.Pool, tables []table, progress func(string, int64, int64)) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("dbcopy: %w", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("dbcopy: %w", err)
	}
	defer tx.Rollback(ctx)
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+quotePG(t.name)+` DISABLE TRIGGER USER`); err != nil {
			return fmt.Errorf("dbcopy: %s: %w", t.name, err)
		}
	}
	// Secondary indexes are built once after the rows are in, not row by
	// row: papers' GIN index over text_search made the copy of 170,000
	// papers several times slower. Those backing a key or unique
	// constraint stay, since they check the rows.
	indexes, err := dropIndexes(ctx, tx)
	if err != nil {
		return err
	}
	for i := len(tables) - 1; i >= 0; i-- {
		if _, err := tx.Exec(ctx, `DELETE FROM `+quotePG(tables[i].name)); err != nil {
			return fmt.Errorf("dbcopy: %s: %w", tables[i].name, err)
		}
	}
	for _, t := range tables {
		if err := copyTable(ctx, src, tx, t, progress); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return fmt.Errorf("dbcopy: %w", err)
	}
	for _, def := range indexes {
		if _, err := tx.Exec(ctx, def); err != nil {
			return fmt.Errorf("dbcopy: rebuild index: %w", err)
		}
	}
	for _, t := range tables {
		for _, col := range t.identity {
			// The next key is max+1, as SQLite's rowid would give; a
			// sequence never hands out a copied key again.
			q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(%s), 0) + 1, false) FROM %s`, quotePG(col), quotePG(t.name))
			if _, err := tx.Exec(ctx, q, quotePG(t.name), col); err != nil {
				return fmt.Errorf("dbcopy: sequence of %s.%s: %w", t.name, col, err)
			}
		}
		if _, err := tx.Exec(ctx, `ALTER TABLE `+quotePG(t.name)+` ENABLE TRIGGER USER`); err != nil {
			return fmt.Errorf("dbcopy: %s: %w", t.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("dbcopy: commit: %w", err)
	}
	return nil
}

// dropIndexes drops the public schema's indexes that back no constraint
// and returns the statements that create them again, exactly as they were.
func dropIndexes(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT quote_ident(ci.relname), pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		JOIN pg_class ci ON ci.oid = i.indexrelid
		JOIN pg_class ct ON ct.oid = i.indrelid
		WHERE ct.relnamespace = 'public'::regnamespace AND ct.relname NOT LIKE 'river\_%' AND ct.relname <> 'goose_db_version'
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = i.indexrelid)
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: list indexes: %w", err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, fmt.Errorf("dbcopy: list indexes: %w", err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dbcopy: list indexes: %w", err)
	}
	for _, n := range names {
		if _, err := tx.Exec(ctx, `DROP INDEX `+n); err != nil {
			return nil, fmt.Errorf("dbcopy: drop index %s: %w", n, err)
		}
	}
	return defs, nil
}

// copyTable streams one table from SQLite into COPY: pgx sends the rows
// in chunks as the source yields them, so memory stays flat however big
// the table.
func copyTable(ctx context.Context, src *sql.Tx, tx pgx.Tx, t table, progress func(string, int64, int64)) error {
	var total int64
	if err := src.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteSQLite(t.name)).Scan(&total); err != nil {
		return fmt.Errorf("dbcopy: count %s: %w", t.name, err)
	}
	rows, err := src.QueryContext(ctx, sqliteSelect(t, false))
	if err != nil {
		return fmt.Errorf("dbcopy: read %s: %w", t.name, err)
	}
	defer rows.Close()
	s := newRowSource(t, rows)
	s.progress = func(done int64) {
		if progress != nil {
			progress(t.name, done, total)
		}
	}
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, names, s)
	if err != nil {
		return fmt.Errorf("dbcopy: copy %s (after %d rows): %w", t.name, s.done, err)
	}
	s.progress(n)
	return nil
}

// sqliteSelect reads t's columns from SQLite, ordered by its key when
// ordered (COLLATE BINARY: byte order, as the target's "C" collation).
func sqliteSelect(t table, ordered bool) string {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = c.src
	}
	q := `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + quoteSQLite(t.name)
	if ordered {
		keys := make([]string, len(t.order))
		for i, k := range t.order {
			keys[i] = quoteSQLite(k) + ` COLLATE BINARY`
		}
		q += ` ORDER BY ` + strings.Join(keys, ", ")
	}
	return q
}

// rowSource is a pgx.CopyFromSource over SQLite rows, converting each
// value to its target column's type.
type rowSource struct {
	t        table
	rows     *sql.Rows
	vals     []any
	ptrs     []any
	done     int64
	err      error
	progress func(done int64)
}

func newRowSource(t table, rows *sql.Rows) *rowSource {
	s := &rowSource{t: t, rows: rows, vals: make([]any, len(t.cols)), ptrs: make([]any, len(t.cols))}
	for i := range s.vals {
		s.ptrs[i] = &s.vals[i]
	}
	return s
}

func (s *rowSource) Next() bool {
	if s.err != nil || !s.rows.Next() {
		return false
	}
	if s.err = s.rows.Scan(s.ptrs...); s.err != nil {
		return false
	}
	for i, c := range s.t.cols {
		if s.vals[i], s.err = convert(s.vals[i], c.pgType); s.err != nil {
			s.err = fmt.Errorf("dbcopy: %s.%s, row %d: %w", s.t.name, c.name, s.done+1, s.err)
			return false
		}
	}
	s.done++
	if s.done%progressEvery == 0 {
		s.progress(s.done)
	}
	return true
}

func (s *rowSource) Values() ([]any, error) { return s.vals, nil }

func (s *rowSource) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.rows.Err()
}

// convert turns a SQLite value (int64, float64, string, []byte or nil) into
// the Go value of its target column's type. Only lossless conversions are
// made (an integral REAL into BIGINT, TEXT into BYTEA, ...); anything else
// is an error naming the value's type, since SQLite's type affinity lets a
// column hold what PostgreSQL's would refuse.
func convert(v any, pgType string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch pgType {
	case "bigint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		}
	case "double precision":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			if f := float64(x); int64(f) == x {
				return f, nil
			}
		}
	case "text":
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		default:
			return nil, fmt.Errorf("a %T where text belongs", v)
		}
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("text that is not valid UTF-8 or holds a NUL byte, which PostgreSQL's text cannot store")
		}
		return s, nil
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	}
	return nil, fmt.Errorf("a %T (%v) cannot become %s without loss", v, v, pgType)
}
