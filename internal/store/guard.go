package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"modernc.org/sqlite"

	"quarry/internal/fault"
)

// guard refuses destructive statements on the application's connections
// once the store is open (migrations ran before it was armed), through
// SQLite's authorizer, which sees every statement as it is compiled:
//
//   - DROP (table, index, view, trigger, virtual table) and ALTER TABLE
//     are refused outright; temporary objects are not guarded.
//   - DELETE must be bounded: the statement must read a column of the
//     table it deletes from (in practice in its WHERE; a RETURNING list
//     reads columns too, so it counts). The authorizer cannot see a
//     WHERE clause, only the columns a statement reads, and it is asked
//     about the DELETE before them; so a statement whose text contains
//     "delete" is compiled apart first (guardedConn.vet), and run only if
//     every table it deletes from had a column read. Nothing else
//     compiled may delete, save the vetted statement compiled again as it
//     runs (SQLite recompiles when a bound value may change the plan, or
//     the schema changed). The rule stops the slip of a missing or
//     constant WHERE (DELETE FROM runs, … WHERE 1); it cannot judge what
//     a WHERE means (WHERE id > 0 passes), and in a script of several
//     statements only the first is vetted: a later one may delete from
//     the tables the first deletes from, no other.
//   - Deletes by the schema's own triggers and foreign-key actions, and
//     by FTS5 inside its shadow tables (a derived index it rebuilds by
//     emptying them), are allowed.
//
// The readers are query_only; the guard also keeps that pragma from being
// turned off.
type guard struct {
	armed atomic.Bool
	// shadow are the FTS5 shadow tables, set before armed.
	shadow map[string]bool
}

// errRefused is what a guarded connection answers for a refused statement.
func errRefused(what string) error {
	return fault.Errorf(fault.EUnauthorized, "store: refused outside migrations: %s", what)
}

// arm turns the guard on for db's schema.
func (g *guard) arm(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'`)
	if err != nil {
		return fmt.Errorf("store: guard: %w", err)
	}
	defer rows.Close()
	g.shadow = map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("store: guard: %w", err)
		}
		for _, s := range []string{"_data", "_idx", "_content", "_docsize", "_config"} {
			g.shadow[name+s] = true
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: guard: %w", err)
	}
	g.armed.Store(true)
	return nil
}

// guardedConnector opens connections with the guard's authorizer.
type guardedConnector struct {
	driver.Connector
	g *guard
}

func (c guardedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	gc := &guardedConn{Conn: conn, g: c.g}
	reg, ok := conn.(sqlite.AuthorizerRegisterer)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: the SQLite driver has no authorizer")
	}
	if err := reg.RegisterAuthorizer(gc.authorize); err != nil {
		conn.Close()
		return nil, fmt.Errorf("store: install the authorizer: %w", err)
	}
	return gc, nil
}

// guardedConn is one connection under the guard. database/sql uses a
// connection from one goroutine at a time, so its fields need no lock.
type guardedConn struct {
	driver.Conn
	g *guard
	// vetting is set while vet compiles a statement; deleted and read
	// are the tables it deletes from and reads columns of.
	vetting       bool
	deleted, read []string
	// allow are the tables the vetted statement running now deletes from:
	// SQLite may compile it again as it runs (when a bound value could
	// change its plan, or the schema changed), and that compile is the
	// same statement.
	allow []string
	// refused says why the authorizer last refused, for the error.
	refused string
}

// The interfaces database/sql looks for, which the wrapped connection has.
var (
	_ driver.ConnPrepareContext = (*guardedConn)(nil)
	_ driver.ExecerContext      = (*guardedConn)(nil)
	_ driver.QueryerContext     = (*guardedConn)(nil)
	_ driver.ConnBeginTx        = (*guardedConn)(nil)
	_ driver.Pinger             = (*guardedConn)(nil)
	_ driver.SessionResetter    = (*guardedConn)(nil)
	_ driver.Validator          = (*guardedConn)(nil)
)

func (c *guardedConn) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, db, trigger string) sqlite.AuthorizerReturnCode {
	if !c.g.armed.Load() {
		return sqlite.AuthorizerOK
	}
	switch action {
	case sqlite.AuthDropTable, sqlite.AuthDropIndex, sqlite.AuthDropView, sqlite.AuthDropTrigger, sqlite.AuthDropVTable:
		c.refused = "DROP " + arg1
		return sqlite.AuthorizerDeny
	case sqlite.AuthAlterTable:
		c.refused = "ALTER TABLE " + arg2
		return sqlite.AuthorizerDeny
	case sqlite.AuthPragma:
		if strings.EqualFold(arg1, "query_only") && arg2 != "" {
			c.refused = "PRAGMA query_only"
			return sqlite.AuthorizerDeny
		}
	case sqlite.AuthDelete:
		if trigger != "" || db == "temp" || c.g.shadow[arg1] || strings.HasPrefix(arg1, "sqlite_") {
			return sqlite.AuthorizerOK
		}
		if c.vetting {
			c.deleted = append(c.deleted, arg1)
		} else if !slices.Contains(c.allow, arg1) {
			c.refused = "DELETE FROM " + arg1 + " outside a single vetted statement"
			return sqlite.AuthorizerDeny
		}
	case sqlite.AuthRead:
		if c.vetting && len(c.deleted) > 0 {
			c.read = append(c.read, arg1)
		}
	}
	return sqlite.AuthorizerOK
}

// mayDelete reports whether query could be a DELETE statement: a keyword
// cannot be spelled any other way, so a text without it needs no vetting.
func mayDelete(query string) bool {
	for i := 0; i+6 <= len(query); i++ {
		if (query[i]|0x20) == 'd' && strings.EqualFold(query[i:i+6], "delete") {
			return true
		}
	}
	return false
}

// vet compiles query and keeps it only if every table it deletes from had
// a column read: a bounded DELETE.
func (c *guardedConn) vet(ctx context.Context, query string) (*vettedStmt, error) {
	c.vetting, c.deleted, c.read, c.refused = true, c.deleted[:0], c.read[:0], ""
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	c.vetting = false
	if err != nil {
		return nil, c.explain(err)
	}
	for _, t := range c.deleted {
		bounded := false
		for _, r := range c.read {
			bounded = bounded || r == t
		}
		if !bounded {
			st.Close()
			return nil, errRefused("DELETE FROM " + t + " without a WHERE on its columns (an unbounded delete)")
		}
	}
	return &vettedStmt{Stmt: st, c: c, tables: slices.Clone(c.deleted)}, nil
}

// running runs f, a step of a vetted statement that deletes from tables,
// letting SQLite compile it again meanwhile.
func (c *guardedConn) running(tables []string, f func() error) error {
	if len(tables) == 0 {
		return c.explain(f())
	}
	prev := c.allow
	c.allow = tables
	err := f()
	c.allow = prev
	return c.explain(err)
}

// vettedStmt is a statement vet let through; it runs with its tables
// allowed.
type vettedStmt struct {
	driver.Stmt
	c      *guardedConn
	tables []string
}

func (s *vettedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (r driver.Result, err error) {
	err = s.c.running(s.tables, func() error {
		r, err = s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
		return err
	})
	return r, err
}

func (s *vettedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (r driver.Rows, err error) {
	err = s.c.running(s.tables, func() error {
		r, err = s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
		return err
	})
	if err != nil || len(s.tables) == 0 {
		return r, err
	}
	return &vettedRows{Rows: r, s: s}, nil
}

// vettedRows steps a vetted statement that deletes with its tables
// allowed; closeStmt also closes the statement (one vet compiled for a
// single query).
type vettedRows struct {
	driver.Rows
	s         *vettedStmt
	closeStmt bool
}

func (r *vettedRows) Next(dest []driver.Value) error {
	return r.s.c.running(r.s.tables, func() error { return r.Rows.Next(dest) })
}

func (r *vettedRows) Close() error {
	err := r.Rows.Close()
	if r.closeStmt {
		if err2 := r.s.Close(); err == nil {
			err = err2
		}
	}
	return err
}

// explain turns the authorizer's refusal ("not authorized") into an error
// that says what was refused.
func (c *guardedConn) explain(err error) error {
	if err == nil {
		return nil
	}
	if c.refused != "" && strings.Contains(err.Error(), "not authorized") {
		what := c.refused
		c.refused = ""
		return fmt.Errorf("%w (%v)", errRefused(what), err)
	}
	return err
}

func (c *guardedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.vet(ctx, query)
}

func (c *guardedConn) Prepare(query string) (driver.Stmt, error) {
	return c.vet(context.Background(), query)
}

func (c *guardedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !c.g.armed.Load() || !mayDelete(query) {
		r, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
		return r, c.explain(err)
	}
	st, err := c.vet(ctx, query)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.ExecContext(ctx, args)
}

func (c *guardedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if !c.g.armed.Load() || !mayDelete(query) {
		r, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
		return r, c.explain(err)
	}
	st, err := c.vet(ctx, query)
	if err != nil {
		return nil, err
	}
	r, err := st.QueryContext(ctx, args)
	if err != nil {
		st.Close()
		return nil, err
	}
	vr, ok := r.(*vettedRows)
	if !ok {
		vr = &vettedRows{Rows: r, s: st}
	}
	vr.closeStmt = true
	return vr, nil
}

func (c *guardedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *guardedConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *guardedConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *guardedConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }
