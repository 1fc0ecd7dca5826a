package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"quarry/internal/app"
	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/biblio/csvfile"
	"quarry/internal/engine"
	"quarry/internal/library"
	"quarry/internal/store"
)

// importProgressEvery is how many records pass between progress lines when
// stdout is not a terminal (a log file should not get one line per batch).
const importProgressEvery = 25000

// maxListedErrors bounds the bad lines printed individually; the final
// count line still counts all of them.
const maxListedErrors = 20

// importCmd implements `quarry import FILE…`: it streams bibliographic
// files in any format Quarry reads (detected from content, or --format)
// into the local library of the configured database, reporting progress on
// stdout and finishing with one count line. Bad records are reported by line
// number and skipped; the rest imports.
func importCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	cfg := app.ConfigFromEnv(getenv)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.StringVar(&cfg.DB, "db", cfg.DB, "path of the SQLite database (env QUARRY_DB)")
	format := fs.String("format", "", "input format: "+strings.Join(biblio.Formats, ", ")+" (default: detect from the content)")
	columns := columnFlag{}
	fs.Var(columns, "column", "CSV only: FIELD=HEADER maps a column to a field, overriding the guess (repeatable; fields: "+strings.Join(csvfile.Fields, ", ")+")")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: quarry import [--db PATH] [--format FORMAT] [--column FIELD=HEADER]... FILE...\n\nImports bibliographic files (BibTeX/BibLaTeX, RIS, CSL-JSON, PubMed MEDLINE/.nbib,\nCSV, JSON Lines; plain or .gz) into the local library. Importing a file again\nupdates its records instead of duplicating them.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return engine.Errorf(engine.EInvalid, "import: %v", err)
	}
	if fs.NArg() == 0 {
		return engine.Errorf(engine.EInvalid, "import: no input files (usage: quarry import [--db PATH] FILE...)")
	}
	if *format != "" && !slices.Contains(biblio.Formats, *format) {
		return codecs.UnknownFormat(*format)
	}
	read := codecs.Options{Format: *format, CSVColumns: columns}

	st, err := store.Open(ctx, cfg.DB, store.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	start := time.Now()
	p := newProgressPrinter(stdout, isTerminal(stdout), start)
	stats, err := library.ImportFiles(ctx, st, fs.Args(), read, library.ImportOptions{Progress: p.report})
	p.finish()
	for i, e := range stats.Errors {
		if i == maxListedErrors {
			fmt.Fprintf(stdout, "  … and %d more bad records\n", len(stats.Errors)-maxListedErrors)
			break
		}
		fmt.Fprintf(stdout, "  %s:%d: %s\n", e.Origin, e.Line, e.Reason)
	}
	skipped := fmt.Sprintf("%d skipped", stats.Skipped)
	if stats.Skipped > 0 {
		skipped += " (" + stats.ReasonSummary() + ")"
	}
	fmt.Fprintf(stdout, "imported %d new, %d updated, %s in %.1f s\n", stats.Inserted, stats.Updated, skipped, time.Since(start).Seconds())
	if err != nil && stats.Read == 0 {
		return err
	}
	if err != nil {
		return fmt.Errorf("import stopped after reading %d records; nothing was imported, the library is as it was: %w", stats.Read, err)
	}
	return nil
}

// progressPrinter shows import progress: one line rewritten in place with
// \r on a terminal, periodic plain lines elsewhere (logs, CI).
type progressPrinter struct {
	w        io.Writer
	tty      bool
	start    time.Time
	lastRead int
	dirty    bool
}

func newProgressPrinter(w io.Writer, tty bool, start time.Time) *progressPrinter {
	return &progressPrinter{w: w, tty: tty, start: start}
}

func (p *progressPrinter) report(pr library.Progress) {
	if pr.Indexing {
		p.line(fmt.Sprintf("%d records read (%d skipped); adding them to the library and building the full-text index…", pr.Read, pr.Skipped))
		return
	}
	if !p.tty && pr.Read-p.lastRead < importProgressEvery {
		return
	}
	p.lastRead = pr.Read
	rate := float64(pr.Read) / max(time.Since(p.start).Seconds(), 1e-3)
	p.line(fmt.Sprintf("%d records read (%d skipped), %.0f/s", pr.Read, pr.Skipped, rate))
}

func (p *progressPrinter) line(s string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", s)
		p.dirty = true
		return
	}
	fmt.Fprintln(p.w, s)
}

// finish ends the in-place line so the report starts on its own line.
func (p *progressPrinter) finish() {
	if p.tty && p.dirty {
		fmt.Fprintln(p.w)
	}
}

// isTerminal reports whether w is a character device (an interactive
// terminal), where rewriting one line with \r reads well.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// columnFlag collects --column FIELD=HEADER pairs.
type columnFlag map[string]string

func (c columnFlag) String() string { return "" }

func (c columnFlag) Set(v string) error {
	field, header, ok := strings.Cut(v, "=")
	field, header = strings.TrimSpace(field), strings.TrimSpace(header)
	if !ok || field == "" || header == "" {
		return fmt.Errorf("want FIELD=HEADER, got %q", v)
	}
	if !slices.Contains(csvfile.Fields, field) {
		return fmt.Errorf("unknown field %q (fields: %s)", field, strings.Join(csvfile.Fields, ", "))
	}
	c[field] = header
	return nil
}
