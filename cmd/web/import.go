package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"quarry/internal/app"
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

// importCmd implements `quarry import FILE…`: it streams JSON Lines corpora
// (gzip or plain) into the local library of the configured database,
// reporting progress on stdout and finishing with one count line. Bad lines
// are reported by number and skipped; the rest imports.
func importCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	cfg := app.ConfigFromEnv(getenv)
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.StringVar(&cfg.DB, "db", cfg.DB, "path of the SQLite database (env QUARRY_DB)")
	format := fs.String("format", "", `input format: "jsonl" (default: detect from the content)`)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: quarry import [--db PATH] [--format jsonl] FILE...\n\nImports JSON Lines paper corpora (.jsonl or .jsonl.gz) into the local library.")
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
	if *format != "" && *format != library.FormatJSONL {
		return engine.Errorf(engine.EInvalid, "import: unknown format %q (supported: %s)", *format, library.FormatJSONL)
	}

	st, err := store.Open(ctx, cfg.DB, store.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	start := time.Now()
	p := newProgressPrinter(stdout, isTerminal(stdout), start)
	stats, err := library.ImportFiles(ctx, st, fs.Args(), *format, library.ImportOptions{Progress: p.report})
	p.finish()
	for i, e := range stats.Errors {
		if i == maxListedErrors {
			fmt.Fprintf(stdout, "  … and %d more bad lines\n", len(stats.Errors)-maxListedErrors)
			break
		}
		fmt.Fprintf(stdout, "  %s:%d: %s\n", e.Origin, e.Line, e.Reason)
	}
	skipped := fmt.Sprintf("%d skipped", stats.Skipped)
	if stats.Skipped > 0 {
		skipped += " (" + stats.ReasonSummary() + ")"
	}
	fmt.Fprintf(stdout, "imported %d new, %d updated, %s in %.1f s\n", stats.Inserted, stats.Updated, skipped, time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("import stopped after %d records (committed batches are kept; run the import again to finish and re-index): %w", stats.Read, err)
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
		p.line(fmt.Sprintf("%d records stored; building the full-text index…", pr.Read))
		return
	}
	if !p.tty && pr.Read-p.lastRead < importProgressEvery {
		return
	}
	p.lastRead = pr.Read
	rate := float64(pr.Read) / max(time.Since(p.start).Seconds(), 1e-3)
	p.line(fmt.Sprintf("%d records read (%d new, %d updated, %d skipped), %.0f/s", pr.Read, pr.Inserted, pr.Updated, pr.Skipped, rate))
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
