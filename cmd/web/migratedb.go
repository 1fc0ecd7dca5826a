package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"quarry/internal/app"
	"quarry/internal/store/dbcopy"
)

// progressLine is how many rows of a table pass between two progress
// lines; a table also gets one when it is done.
const progressLine = 50000

// migrateDBCmd implements `quarry migrate-db --to URL`: the SQLite database
// is opened read-only and copied into an empty PostgreSQL database, then
// both are compared table by table.
func (c *cli) migrateDBCmd(ctx context.Context, args []string) (err error) {
	fs := newFlagSet("migrate-db", "quarry migrate-db --to postgres://USER@HOST/DB [--db PATH]",
		"Copies the SQLite database (opened read-only; stop the server first, later\n"+
			"writes are not copied) into an empty PostgreSQL database: creates the schema\n"+
			"(Quarry's migrations and River's), copies every table, then compares each\n"+
			"table's row count and checksum on both sides and prints them. Refused, with\n"+
			"nothing written: a target holding any table, and a database that the current\n"+
			"quarry has not migrated yet (start it once on the database first). River's\n"+
			"job table is not copied; its unfinished jobs (gate timers, delayed advances,\n"+
			"queued runs) are queued again in PostgreSQL at their times (a note counts\n"+
			"them).\n"+
			"Exit status 1 on a refusal or a table that differs.")
	flags := app.Flags{}
	flags.Bind(fs.FlagSet, "QUARRY_DB")
	to := fs.String("to", "", "the target PostgreSQL database's URL (postgres://… or postgresql://…); required")
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fs.misuse("unexpected arguments %q", rest)
	}
	if *to == "" {
		return fs.misuse("--to is required")
	}
	if !strings.HasPrefix(*to, "postgres://") && !strings.HasPrefix(*to, "postgresql://") {
		return fs.misuse("--to must be a postgres:// or postgresql:// URL")
	}
	cfg, err := app.Load(flags, c.getenv, "QUARRY_DB")
	if err != nil {
		return err
	}
	src, err := dbcopy.OpenSQLite(cfg.DB)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	fmt.Fprintf(c.stdout, "copying %s into PostgreSQL\n", cfg.DB)
	rep, err := dbcopy.Copy(ctx, src, *to, dbcopy.Options{Progress: func(table string, done, total int64) {
		if total > 0 && (done == total || done%progressLine == 0) {
			fmt.Fprintf(c.stdout, "  %s: %d/%d rows\n", table, done, total)
		}
	}})
	if len(rep.Tables) > 0 {
		if werr := c.printReport(rep); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// printReport writes the per-table comparison and the notes.
func (c *cli) printReport(rep dbcopy.Report) error {
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "table\trows\tchecksum\tok\t")
	var rows int64
	for _, t := range rep.Tables {
		ok := "ok"
		if !t.Match {
			ok = fmt.Sprintf("DIFFERS (target: %d rows, %.12s)", t.TargetRows, t.TargetChecksum)
		}
		fmt.Fprintf(w, "%s\t%d\t%.12s\t%s\t\n", t.Name, t.Rows, t.Checksum, ok)
		rows += t.Rows
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%d tables, %d rows, schema version %d, in %s\n", len(rep.Tables), rows, rep.Version, rep.Duration.Round(1e6))
	for _, n := range rep.Notes {
		fmt.Fprintln(c.stdout, "note:", n)
	}
	return nil
}
