package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// dialectKind names the SQL a database speaks. The store's queries are
// written in SQLite's; a dialect turns them into another database's where
// the two differ (docs/postgres-schema.md lists where).
type dialectKind int

const (
	dialectSQLite dialectKind = iota
	dialectPostgres
)

// dialect is how a store's handles (db, tx) adapt SQLite-written queries.
// The zero value is SQLite's, which needs no adapting.
type dialect struct {
	kind dialectKind
	// rebound caches rebind's output by query text: the store runs a few
	// hundred distinct queries, each many times, so scanning each once is
	// enough. nil for SQLite.
	rebound *sync.Map
	// inputIsValid is PostgreSQL 16's pg_input_is_valid, which jsonValid
	// uses where the server has it.
	inputIsValid bool
}

func sqliteDialect() dialect { return dialect{kind: dialectSQLite} }

func postgresDialect() dialect { return dialect{kind: dialectPostgres, rebound: new(sync.Map)} }

// riverTime is t as a parameter compared with or stored in River's job
// table: River's SQLite driver keeps times as UTC text in exactly
// datetime('now', 'subsec')'s format (other formats compare wrongly), its
// PostgreSQL driver as timestamptz.
func (d dialect) riverTime(t time.Time) any {
	if d.kind == dialectPostgres {
		return t
	}
	return t.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
}

// rebind turns query's SQLite placeholders into the dialect's. For
// PostgreSQL, ?NNN becomes $NNN and a bare ? becomes $N numbered as SQLite
// numbers it (one more than the largest number so far, so a query of bare
// ?s counts $1, $2, ...). It leaves ? alone inside string literals, quoted
// identifiers and comments. For SQLite it returns query itself.
func (d dialect) rebind(query string) string {
	if d.kind == dialectSQLite || !strings.Contains(query, "?") {
		return query
	}
	if q, ok := d.rebound.Load(query); ok {
		return q.(string)
	}
	q := rebindDollar(query)
	d.rebound.Store(query, q)
	return q
}

// rebindDollar is rebind for PostgreSQL, uncached. It reads the lexical
// forms SQLite's queries use: '...' literals (a doubled quote escapes one), "..."
// identifiers, -- line and /* */ block comments. Backquoted and [bracketed]
// identifiers, which PostgreSQL would reject anyway, are not recognised.
func rebindDollar(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	largest := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				end = len(query)
			} else {
				end += i + 2
			}
			b.WriteString(query[i:end])
			i = end
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query)
			} else {
				end += i + 1
			}
			b.WriteString(query[i:end])
			i = end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query)
			} else {
				end += i + 4
			}
			b.WriteString(query[i:end])
			i = end
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := largest + 1
			if j > i+1 {
				// SQLite reads ?NNN in decimal; leading zeros name the
				// same parameter.
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			largest = max(largest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j
		default:
			// Copy up to the next byte that may start something above.
			j := i + 1
			for j < len(query) && !strings.ContainsRune(`'"-/?`, rune(query[j])) {
				j++
			}
			b.WriteString(query[i:j])
			i = j
		}
	}
	return b.String()
}

// db is a pool that speaks its dialect: every query the store runs goes
// through ExecContext, QueryContext, QueryRowContext or PrepareContext, so
// rebinding them here ports every call site at once. The embedded *sql.DB
// is what River's driver and SQLite-only maintenance take.
type db struct {
	*sql.DB
	d dialect
	// writer marks the write pool: on PostgreSQL its transactions take
	// writeLockKey first (BeginTx), waiting at most busy (SQLite's busy
	// timeout: past it the write fails as Busy); 0 means
	// DefaultBusyTimeout.
	writer bool
	busy   time.Duration
}

func (h *db) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return h.DB.ExecContext(ctx, h.d.rebind(query), h.d.args(args)...)
}

func (h *db) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return h.DB.QueryContext(ctx, h.d.rebind(query), h.d.args(args)...)
}

func (h *db) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return h.DB.QueryRowContext(ctx, h.d.rebind(query), h.d.args(args)...)
}

func (h *db) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return h.DB.PrepareContext(ctx, h.d.rebind(query))
}

// BeginTx starts a transaction that speaks the pool's dialect. On
// PostgreSQL a write transaction first takes writeLockKey (SQLite's one
// writer, see there), and a read transaction is REPEATABLE READ, so that
// its statements see one snapshot as a SQLite read transaction does.
func (h *db) BeginTx(ctx context.Context, opts *sql.TxOptions) (*tx, error) {
	if h.d.kind == dialectPostgres && !h.writer && (opts == nil || opts.Isolation == sql.LevelDefault) {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	t, err := h.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if h.d.kind == dialectPostgres && h.writer {
		busy := h.busy
		if busy <= 0 {
			busy = DefaultBusyTimeout
		}
		// lock_timeout (for this transaction) is set in the FROM
		// subquery, so before the lock is asked for.
		if _, err := t.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1) FROM (SELECT set_config('lock_timeout', $2, true)) AS busy`,
			writeLockKey, strconv.FormatInt(busy.Milliseconds(), 10)); err != nil {
			_ = t.Rollback()
			return nil, err
		}
	}
	return &tx{Tx: t, d: h.d}, nil
}

// args adapts query arguments to the dialect: the schema keeps 0/1 flags
// as integers (BIGINT on PostgreSQL), which SQLite's driver binds a Go
// bool into and pgx refuses to, so on PostgreSQL a bool becomes 0 or 1.
// A prepared *sql.Stmt binds its arguments as given: none of the store's
// binds a bool.
func (d dialect) args(args []any) []any {
	if d.kind != dialectPostgres {
		return args
	}
	var out []any
	for i, a := range args {
		b, ok := a.(bool)
		if !ok {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i] = int64(0)
		if b {
			out[i] = int64(1)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// tx is a transaction that speaks its pool's dialect (see db). The
// embedded *sql.Tx is what River's InsertTx takes, so a job commits with
// the store's writes.
type tx struct {
	*sql.Tx
	d dialect
}

func (t *tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.d.rebind(query), t.d.args(args)...)
}

func (t *tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, t.d.rebind(query), t.d.args(args)...)
}

func (t *tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, t.d.rebind(query), t.d.args(args)...)
}

func (t *tx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.Tx.PrepareContext(ctx, t.d.rebind(query))
}

// jsonTexts is a subquery of the strings in the JSON array bound at param
// (a placeholder such as "?" or "?4"): the store passes a list as one JSON
// parameter, since neither database binds a Go slice to IN (...). A query
// that also tests the parameter for NULL says CAST(param AS text) IS NULL:
// PostgreSQL cannot type a bare parameter from IS NULL.
func (d dialect) jsonTexts(param string) string {
	if d.kind == dialectPostgres {
		return "(SELECT jsonb_array_elements_text(CAST(CAST(" + param + " AS text) AS jsonb)))"
	}
	return "(SELECT value FROM json_each(" + param + "))"
}

// jsonInts is jsonTexts for a JSON array of integers (docids).
func (d dialect) jsonInts(param string) string {
	if d.kind == dialectPostgres {
		return "(SELECT CAST(jsonb_array_elements_text(CAST(CAST(" + param + " AS text) AS jsonb)) AS bigint))"
	}
	return "(SELECT value FROM json_each(" + param + "))"
}

// indexedBy is SQLite's hint naming the index a table is read through,
// where its planner would pick a worse one; PostgreSQL's planner takes no
// hints (and reads the statistics SQLite lacks).
func (d dialect) indexedBy(index string) string {
	if d.kind == dialectPostgres {
		return ""
	}
	return "INDEXED BY " + index
}

// zeroBlob is an expression for a blob of n zero bytes, n bound at param.
func (d dialect) zeroBlob(param string) string {
	if d.kind == dialectPostgres {
		return "decode(repeat('00', " + param + "), 'hex')"
	}
	return "zeroblob(" + param + ")"
}

// secondsSince is an expression for the seconds from the time expr (a
// column of River's job table) to now. River's SQLite driver stores times
// as UTC text that julianday reads; its PostgreSQL tables hold timestamptz.
func (d dialect) secondsSince(expr string) string {
	if d.kind == dialectPostgres {
		return "CAST(extract(epoch FROM now() - " + expr + ") AS double precision)"
	}
	return "(julianday('now') - julianday(" + expr + ")) * 86400.0"
}

// jsonIntsTable is a table of the integers in the JSON array bound at
// param, with columns value and key (the position, from 0), so a query
// can keep the list's order.
func (d dialect) jsonIntsTable(param string) string {
	if d.kind == dialectPostgres {
		return "(SELECT CAST(e.value AS bigint) AS value, e.ord - 1 AS key FROM jsonb_array_elements_text(CAST(CAST(" +
			param + " AS text) AS jsonb)) WITH ORDINALITY AS e(value, ord))"
	}
	return "json_each(" + param + ")"
}

// hasTable reports whether the schema has table name: the store opens
// databases migrated only part way (tests of upgrades) and skips what
// their schema lacks.
func (h *db) hasTable(ctx context.Context, name string) (bool, error) {
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if h.d.kind == dialectPostgres {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	var n int
	err := h.QueryRowContext(ctx, q, name).Scan(&n)
	return n > 0, err
}

// hasColumn reports whether table has column (see hasTable).
func (h *db) hasColumn(ctx context.Context, table, column string) (bool, error) {
	q := `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`
	if h.d.kind == dialectPostgres {
		q = `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?`
	}
	var n int
	err := h.QueryRowContext(ctx, q, table, column).Scan(&n)
	return n > 0, err
}

// jsonValid is an expression true when the text expr is valid JSON.
// PostgreSQL before 16 has no test that cannot fail (pg_input_is_valid):
// there it checks that expr starts as an object or array does, and a
// malformed one fails the statement that casts it. The store's JSON
// columns are written from Go's encoding/json, so that stays theoretical.
func (d dialect) jsonValid(expr string) string {
	if d.kind == dialectPostgres {
		if d.inputIsValid {
			return "pg_input_is_valid(" + expr + ", 'jsonb')"
		}
		return "(left(ltrim(" + expr + "), 1) IN ('{', '['))"
	}
	return "json_valid(" + expr + ")"
}

// jsonKey is what jsonField's key parameter binds for the top-level key
// name: a JSON path for SQLite's json_extract, the name itself for
// PostgreSQL's ->>.
func (d dialect) jsonKey(name string) string {
	if d.kind == dialectPostgres {
		return name
	}
	return `$."` + name + `"`
}

// jsonField is the value of the top-level key bound at param (jsonKey) in
// the JSON text expr, NULL when absent. SQLite's json_extract gives a
// number for a number (1 for true); PostgreSQL's ->> gives text.
func (d dialect) jsonField(expr, param string) string {
	if d.kind == dialectPostgres {
		return "(CAST(" + expr + " AS jsonb) ->> CAST(" + param + " AS text))"
	}
	return "json_extract(" + expr + ", " + param + ")"
}

// jsonFieldJSON is jsonField as JSON text (SQLite's ->), so a string
// keeps its quotes.
func (d dialect) jsonFieldJSON(expr, param string) string {
	if d.kind == dialectPostgres {
		return "CAST(CAST(" + expr + " AS jsonb) -> CAST(" + param + " AS text) AS text)"
	}
	return "(" + expr + " -> " + param + ")"
}

// jsonPatch is the JSON text of the object target merged with the object
// patch (both expressions valid JSON text), as RFC 7396 does: a key of
// patch replaces target's, and a null removes it. SQLite's json_patch
// merges nested objects too; PostgreSQL's form merges the top level only,
// which is as deep as papers.extra goes (a flat object of a corpus's own
// fields). A patch that is not an object replaces target, as in RFC 7396.
func (d dialect) jsonPatch(target, patch string) string {
	if d.kind == dialectPostgres {
		return "CAST(" + d.jsonPatchJSONB(target, patch) + " AS text)"
	}
	return "json_patch(" + target + ", " + patch + ")"
}

// jsonPatchJSONB is PostgreSQL's jsonPatch as jsonb.
func (d dialect) jsonPatchJSONB(target, patch string) string {
	t, p := "CAST("+target+" AS jsonb)", "CAST("+patch+" AS jsonb)"
	return "(CASE WHEN jsonb_typeof(" + p + ") <> 'object' THEN " + p +
		" WHEN jsonb_typeof(" + t + ") <> 'object' THEN jsonb_strip_nulls(" + p + ")" +
		" ELSE (" + t + " || " + p + ") - COALESCE((SELECT array_agg(k.key) FROM jsonb_each(" + p + ") k WHERE jsonb_typeof(k.value) = 'null'), '{}') END)"
}

// jsonChanged is true when patching the JSON text target with patch
// changes it (both valid JSON), compared as JSON values.
func (d dialect) jsonChanged(target, patch string) string {
	if d.kind == dialectPostgres {
		return d.jsonPatchJSONB(target, patch) + " IS DISTINCT FROM CAST(" + target + " AS jsonb)"
	}
	return "json_patch(" + target + ", " + patch + ") IS DISTINCT FROM json(" + target + ")"
}

// like is the operator that matches a LIKE pattern folding ASCII case, as
// SQLite's LIKE does (PostgreSQL's LIKE does not fold).
func (d dialect) like() string {
	if d.kind == dialectPostgres {
		return "ILIKE"
	}
	return "LIKE"
}

// byteLength is the length in bytes of the text expr (SQLite's length()
// counts characters of text).
func (d dialect) byteLength(expr string) string {
	if d.kind == dialectPostgres {
		return "octet_length(" + expr + ")"
	}
	return "length(CAST(" + expr + " AS BLOB))"
}

// textParam is the parameter param as text of the schema's collation,
// where it stands as a column would (a recursive CTE's anchor row, whose
// column must have one collation on PostgreSQL).
func (d dialect) textParam(param string) string {
	if d.kind == dialectPostgres {
		return `CAST(` + param + ` AS text) COLLATE "C"`
	}
	return param
}
