package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// table is one application table as both databases have it.
type table struct {
	name string
	// cols are the columns written and compared, in SQLite's order; a
	// PostgreSQL-only rowid column (checkpoints) comes last, filled from
	// SQLite's implicit rowid.
	cols []column
	// order is the key the checksum reads rows in: the primary key,
	// else every column.
	order []string
	// identity are the target's identity columns, whose sequences are
	// moved past the copied keys.
	identity []string
	parents  []string // tables its foreign keys reference
}

type column struct {
	name   string
	src    string // the SQLite expression: the quoted name, or rowid
	pgType string // information_schema data_type: bigint, double precision, text, bytea
}

// skipped reports whether a SQLite table is no application table:
// SQLite's own, goose's version table and River's queue (River migrates
// its PostgreSQL tables itself; its jobs are not copied, see notes).
func skipped(name string) bool {
	return strings.HasPrefix(name, "sqlite_") || name == "goose_db_version" || strings.HasPrefix(name, "river_")
}

// pgColumn is a target column as information_schema describes it.
type pgColumn struct {
	name, dataType      string
	generated, identity bool
}

// plan lists the application tables, parents before children, with the
// columns both sides share; a table or column only one side has is an
// error, since copying would lose it or leave it unfilled.
func plan(ctx context.Context, src *sql.Tx, pool *pgxpool.Pool) ([]table, error) {
	names, err := sqliteTables(ctx, src)
	if err != nil {
		return nil, err
	}
	pgCols, err := targetColumns(ctx, pool)
	if err != nil {
		return nil, err
	}
	var tables []table
	for _, name := range names {
		pc, ok := pgCols[name]
		if !ok {
			return nil, fmt.Errorf("dbcopy: table %s is in SQLite but not in the PostgreSQL schema", name)
		}
		delete(pgCols, name)
		t, err := describe(ctx, src, name, pc)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	for name := range pgCols {
		return nil, fmt.Errorf("dbcopy: table %s is in the PostgreSQL schema but not in SQLite", name)
	}
	return fkOrder(tables)
}

// sqliteTables lists the source's ordinary tables; pragma_table_list
// types FTS5 tables "virtual" and their storage "shadow", so both drop
// out (the in-memory index and papers.text_search replace them).
func sqliteTables(ctx context.Context, src *sql.Tx) ([]string, error) {
	rows, err := src.QueryContext(ctx, `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: list source tables: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("dbcopy: list source tables: %w", err)
		}
		if !skipped(n) {
			names = append(names, n)
		}
	}
	return names, rows.Err()
}

// targetColumns reads the target's public tables (goose's and River's
// left out) and their columns in order.
func targetColumns(ctx context.Context, pool *pgxpool.Pool) (map[string][]pgColumn, error) {
	rows, err := pool.Query(ctx, `SELECT table_name, column_name, data_type, is_generated = 'ALWAYS', is_identity = 'YES'
		FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: list target tables: %w", err)
	}
	defer rows.Close()
	out := map[string][]pgColumn{}
	for rows.Next() {
		var t string
		var c pgColumn
		if err := rows.Scan(&t, &c.name, &c.dataType, &c.generated, &c.identity); err != nil {
			return nil, fmt.Errorf("dbcopy: list target tables: %w", err)
		}
		if !skipped(t) {
			out[t] = append(out[t], c)
		}
	}
	return out, rows.Err()
}

// describe matches a SQLite table's columns with the target's: generated
// target columns (papers.text_search) are computed there, and a target
// rowid column takes SQLite's implicit rowid (checkpoints: the store
// orders a run's checkpoints by it).
func describe(ctx context.Context, src *sql.Tx, name string, pc []pgColumn) (table, error) {
	t := table{name: name}
	rows, err := src.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return t, fmt.Errorf("dbcopy: columns of %s: %w", name, err)
	}
	type pkCol struct {
		name string
		pos  int
	}
	var pks []pkCol
	var srcCols []string
	for rows.Next() {
		var c string
		var pk int
		if err := rows.Scan(&c, &pk); err != nil {
			rows.Close()
			return t, fmt.Errorf("dbcopy: columns of %s: %w", name, err)
		}
		srcCols = append(srcCols, c)
		if pk > 0 {
			pks = append(pks, pkCol{c, pk})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("dbcopy: columns of %s: %w", name, err)
	}
	byName := map[string]pgColumn{}
	for _, c := range pc {
		byName[c.name] = c
		if c.identity {
			t.identity = append(t.identity, c.name)
		}
	}
	for _, c := range srcCols {
		p, ok := byName[c]
		if !ok {
			return t, fmt.Errorf("dbcopy: column %s.%s is in SQLite but not in the PostgreSQL schema", name, c)
		}
		if p.generated {
			return t, fmt.Errorf("dbcopy: column %s.%s is generated in PostgreSQL but holds data in SQLite", name, c)
		}
		delete(byName, c)
		t.cols = append(t.cols, column{name: c, src: quoteSQLite(c), pgType: p.dataType})
	}
	for _, p := range pc {
		if _, left := byName[p.name]; !left || p.generated {
			continue
		}
		if p.name != "rowid" {
			return t, fmt.Errorf("dbcopy: column %s.%s is in the PostgreSQL schema but not in SQLite", name, p.name)
		}
		t.cols = append(t.cols, column{name: "rowid", src: "rowid", pgType: p.dataType})
	}
	for _, c := range t.cols {
		switch c.pgType {
		case "bigint", "double precision", "text", "bytea":
		default:
			return t, fmt.Errorf("dbcopy: column %s.%s has type %s, which the copy does not convert", name, c.name, c.pgType)
		}
	}
	slices.SortFunc(pks, func(a, b pkCol) int { return a.pos - b.pos })
	for _, p := range pks {
		t.order = append(t.order, p.name)
	}
	if len(t.order) == 0 {
		for _, c := range t.cols {
			t.order = append(t.order, c.name)
		}
	}
	fks, err := src.QueryContext(ctx, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, name)
	if err != nil {
		return t, fmt.Errorf("dbcopy: foreign keys of %s: %w", name, err)
	}
	defer fks.Close()
	for fks.Next() {
		var parent string
		if err := fks.Scan(&parent); err != nil {
			return t, fmt.Errorf("dbcopy: foreign keys of %s: %w", name, err)
		}
		if parent != name {
			t.parents = append(t.parents, parent)
		}
	}
	return t, fks.Err()
}

// fkOrder sorts tables so every table comes after those its foreign keys
// reference (by name among equals, so runs repeat), the order the
// target's foreign-key checks accept rows in.
func fkOrder(tables []table) ([]table, error) {
	byName := map[string]table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	done := map[string]bool{}
	var out []table
	for len(out) < len(tables) {
		progressed := false
		for _, t := range tables {
			if done[t.name] {
				continue
			}
			ready := true
			for _, p := range t.parents {
				if _, known := byName[p]; known && !done[p] {
					ready = false
				}
			}
			if ready {
				done[t.name], progressed = true, true
				out = append(out, t)
			}
		}
		if !progressed {
			var left []string
			for _, t := range tables {
				if !done[t.name] {
					left = append(left, t.name)
				}
			}
			return nil, fmt.Errorf("dbcopy: foreign keys form a cycle among %v", left)
		}
	}
	return out, nil
}

func quoteSQLite(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func quotePG(name string) string { return pgx.Identifier{name}.Sanitize() }
