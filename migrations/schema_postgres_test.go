package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"quarry/internal/pgtest"
	"quarry/migrations"
)

// postgresOnly are the columns the PostgreSQL schema has beyond SQLite's,
// each on purpose (see postgres/00025_baseline.sql).
var postgresOnly = map[string][]string{
	"checkpoints": {"rowid"},       // SQLite's implicit rowid, which the store reads
	"papers":      {"text_search"}, // the tsvector that replaces FTS5
}

// column is what the parity test compares of a column: its type class
// (integer, text, float, bytes; a PostgreSQL text column not COLLATE "C"
// is a class of its own) and whether it is NOT NULL.
type column struct {
	class   string
	notNull bool
}

// index is what the parity test compares of an index.
type index struct {
	table   string
	unique  bool
	partial bool
	// columns is the key, comma-separated; an expression as PostgreSQL
	// prints it (lower(name)).
	columns string
}

// schema is one database's tables (name → column → column), indexes
// created by CREATE INDEX (name → index), the unique keys behind PRIMARY
// KEY and UNIQUE constraints (table → column lists), and triggers
// ("table.name").
type schema struct {
	tables   map[string]map[string]column
	indexes  map[string]index
	keys     map[string][]string
	triggers []string
}

// TestPostgresSchemaParity checks that the PostgreSQL migrations build the
// schema the SQLite ones do: the same tables and columns with matching
// types and nullability, every SQLite index under the same name (and
// every primary key and unique constraint as a unique index on the same
// columns), and every trigger.
func TestPostgresSchemaParity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := postgresSchemaDB(t)
	lite := sqliteSchema(t)
	p, err := goose.NewProvider(goose.DialectPostgres, db, postgresMigrations(t))
	require.NoError(t, err)
	_, err = p.Up(ctx)
	require.NoError(t, err)
	pg := postgresSchema(t, db)

	require.ElementsMatch(t, mapKeys(lite.tables), mapKeys(pg.tables), "tables")
	for table, cols := range lite.tables {
		pgCols := pg.tables[table]
		for name, c := range cols {
			require.Contains(t, pgCols, name, "column %s.%s", table, name)
			require.Equal(t, c.class, pgCols[name].class, "type class of %s.%s", table, name)
			require.Equal(t, c.notNull, pgCols[name].notNull, "NOT NULL of %s.%s", table, name)
		}
		for name := range pgCols {
			if _, ok := cols[name]; !ok {
				require.Contains(t, postgresOnly[table], name, "column %s.%s is only in PostgreSQL", table, name)
			}
		}
	}
	// A read that found nothing would pass the comparisons below.
	require.Contains(t, lite.tables, "papers")
	require.Contains(t, lite.indexes, "accounts_name")
	require.Contains(t, lite.triggers, "papers.papers_logged_insert")
	for name, ix := range lite.indexes {
		got, ok := pg.indexes[name]
		require.True(t, ok, "index %s on %s is missing in PostgreSQL", name, ix.table)
		require.Equal(t, ix, got, "index %s", name)
	}
	for table, keys := range lite.keys {
		for _, key := range keys {
			require.Contains(t, pg.keys[table], key, "unique key (%s) of %s", key, table)
		}
	}
	require.ElementsMatch(t, lite.triggers, pg.triggers, "triggers")
}

// TestPostgresMigrationsDown checks that migrating down to version 0 leaves
// nothing but goose's own table, and that the schema builds again after.
func TestPostgresMigrationsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := postgresSchemaDB(t)
	p, err := goose.NewProvider(goose.DialectPostgres, db, postgresMigrations(t))
	require.NoError(t, err)
	_, err = p.Up(ctx)
	require.NoError(t, err)
	up := postgresSchema(t, db)
	require.NotEmpty(t, up.tables)

	_, err = p.DownTo(ctx, 0)
	require.NoError(t, err)
	var left []string
	rows, err := db.QueryContext(ctx, `
		SELECT c.relkind::text || ' ' || c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relname NOT LIKE 'goose_db_version%'
		UNION ALL
		SELECT 'function ' || p.proname FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()
		UNION ALL
		SELECT 'type ' || t.typname FROM pg_type t
		JOIN pg_namespace n ON n.oid = t.typnamespace
		WHERE n.nspname = current_schema() AND t.typname NOT LIKE '%goose_db_version%'`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		left = append(left, s)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, left, "left after migrating down")

	_, err = p.Up(ctx)
	require.NoError(t, err)
	again := postgresSchema(t, db)
	require.Equal(t, up, again)
}

// TestPostgresMigrationsPaired checks the rule that keeps the two
// dialects at one version: after the baseline, every migration exists
// in both directories under the same name.
func TestPostgresMigrationsPaired(t *testing.T) {
	t.Parallel()
	const baseline = 25
	lite, err := fs.Glob(migrations.FS, "*.sql")
	require.NoError(t, err)
	pg, err := fs.Glob(postgresMigrations(t), "*.sql")
	require.NoError(t, err)
	require.Contains(t, pg, "00025_baseline.sql")
	var liteAfter, pgAfter []string
	for _, name := range lite {
		if v, err := goose.NumericComponent(name); err == nil && v > baseline {
			liteAfter = append(liteAfter, name)
		}
	}
	for _, name := range pg {
		v, err := goose.NumericComponent(name)
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, v, int64(baseline), "PostgreSQL migration %s predates the baseline", name)
		if v > baseline {
			pgAfter = append(pgAfter, name)
		}
	}
	require.Equal(t, liteAfter, pgAfter, "migrations after %05d come in pairs", baseline)
	entries, err := fs.ReadDir(migrations.FS, ".")
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, e.IsDir(), "SQLite's migrations FS holds only its files, not %s/", e.Name())
	}
}

func postgresMigrations(t *testing.T) fs.FS {
	t.Helper()
	fsys, err := migrations.Postgres()
	require.NoError(t, err)
	return fsys
}

// pg is the throwaway PostgreSQL server of this test binary
// (internal/pgtest), started by the first test that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// postgresSchemaDB returns a connection pool to a new, empty database on
// the test binary's throwaway PostgreSQL server (the test is skipped where
// PostgreSQL is not installed, and fails under CI).
func postgresSchemaDB(t *testing.T) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(pg.NewDatabase(t))
	require.NoError(t, err)
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	return db
}

// sqliteSchema migrates a new SQLite database with every SQLite migration
// and reads its schema, leaving out SQLite's own tables, goose's version
// table, River's tables and full-text (FTS5) tables with their shadows.
func sqliteSchema(t *testing.T) schema {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "parity.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS)
	require.NoError(t, err)
	_, err = p.Up(ctx)
	require.NoError(t, err)

	var virtual []string
	for _, row := range queryRows(t, db, `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'`) {
		virtual = append(virtual, row[0])
	}
	skip := func(table string) bool {
		if strings.HasPrefix(table, "sqlite_") || strings.HasPrefix(table, "river_") || table == goose.DefaultTablename {
			return true
		}
		for _, v := range virtual {
			if table == v || strings.HasPrefix(table, v+"_") {
				return true
			}
		}
		return false
	}

	s := schema{tables: map[string]map[string]column{}, indexes: map[string]index{}, keys: map[string][]string{}}
	for _, row := range queryRows(t, db, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`) {
		table := row[0]
		if skip(table) {
			continue
		}
		cols := map[string]column{}
		var rowidAlias string
		for _, c := range queryRows(t, db, `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, table) {
			cols[c[0]] = column{class: sqliteClass(t, table, c[1]), notNull: c[2] == "1" || c[3] != "0"}
			if strings.EqualFold(c[1], "INTEGER") && c[3] == "1" {
				rowidAlias = c[0]
			}
		}
		s.tables[table] = cols
		if pks := queryRows(t, db, `SELECT count(*) FROM pragma_table_info(?) WHERE pk > 0`, table); pks[0][0] == "1" && rowidAlias != "" {
			// An INTEGER PRIMARY KEY is the rowid: a key with no index.
			s.keys[table] = append(s.keys[table], rowidAlias)
		}
		for _, ix := range queryRows(t, db, `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, table) {
			var key []string
			for _, k := range queryRows(t, db, `SELECT coalesce(name, ''), coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`, ix[0]) {
				require.NotEmpty(t, k[0], "index %s: expression indexes are not compared yet", ix[0])
				if strings.EqualFold(k[1], "NOCASE") {
					k[0] = "lower(" + k[0] + ")" // the PostgreSQL form of COLLATE NOCASE
				}
				key = append(key, k[0])
			}
			if ix[2] != "c" { // a PRIMARY KEY or UNIQUE constraint's index
				s.keys[table] = append(s.keys[table], strings.Join(key, ","))
				continue
			}
			s.indexes[ix[0]] = index{table: table, unique: ix[1] == "1", partial: ix[3] == "1", columns: strings.Join(key, ",")}
		}
	}
	for _, row := range queryRows(t, db, `SELECT tbl_name || '.' || name FROM sqlite_schema WHERE type = 'trigger'`) {
		s.triggers = append(s.triggers, row[0])
	}
	return s
}

// postgresSchema reads the schema in db's current schema, leaving out
// goose's version table.
func postgresSchema(t *testing.T, db *sql.DB) schema {
	t.Helper()
	s := schema{tables: map[string]map[string]column{}, indexes: map[string]index{}, keys: map[string][]string{}}
	for _, c := range queryRows(t, db, `
		SELECT table_name, column_name, data_type, is_nullable, coalesce(collation_name, '')
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name <> $1`, goose.DefaultTablename) {
		if s.tables[c[0]] == nil {
			s.tables[c[0]] = map[string]column{}
		}
		class := postgresClass(c[2])
		if class == "text" && c[4] != "C" {
			// SQLite's BINARY collation is "C"; any other orders differently.
			class = fmt.Sprintf("text collated %q", c[4])
		}
		s.tables[c[0]][c[1]] = column{class: class, notNull: c[3] == "NO"}
	}
	for _, ix := range queryRows(t, db, `
		SELECT t.relname, i.relname, x.indisunique::text, (x.indpred IS NOT NULL)::text,
		       (x.indisprimary OR con.oid IS NOT NULL)::text,
		       (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ',' ORDER BY k)
		        FROM generate_series(1, x.indnkeyatts) k)
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.contype = 'u'
		WHERE n.nspname = current_schema() AND t.relname <> $1`, goose.DefaultTablename) {
		key := strings.ReplaceAll(ix[5], `"`, "")
		if ix[4] == "true" {
			s.keys[ix[0]] = append(s.keys[ix[0]], key)
			continue
		}
		s.indexes[ix[1]] = index{table: ix[0], unique: ix[2] == "true", partial: ix[3] == "true", columns: key}
	}
	for _, row := range queryRows(t, db, `
		SELECT c.relname || '.' || g.tgname FROM pg_trigger g
		JOIN pg_class c ON c.oid = g.tgrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND NOT g.tgisinternal`) {
		s.triggers = append(s.triggers, row[0])
	}
	slices.Sort(s.triggers)
	for _, keys := range s.keys {
		slices.Sort(keys)
	}
	return s
}

// sqliteClass maps a SQLite declared type to its class by the rules of
// docs/postgres-schema.md; the schema uses only these four.
func sqliteClass(t *testing.T, table, declared string) string {
	switch strings.ToUpper(declared) {
	case "INTEGER":
		return "integer"
	case "TEXT":
		return "text"
	case "REAL":
		return "float"
	case "BLOB":
		return "bytes"
	}
	t.Fatalf("%s: declared type %q has no PostgreSQL mapping", table, declared)
	return ""
}

// postgresClass maps a PostgreSQL data type to sqliteClass's classes;
// any other type is its own class, so it matches none.
func postgresClass(dataType string) string {
	switch dataType {
	case "bigint", "integer", "smallint":
		return "integer"
	case "text":
		return "text"
	case "double precision", "real":
		return "float"
	case "bytea":
		return "bytes"
	}
	return dataType
}

// queryRows runs q and returns its rows as strings.
func queryRows(t *testing.T, db *sql.DB, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
