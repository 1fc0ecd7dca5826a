package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"quarry/internal/app"
	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/biblio/csvfile"
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
// number and skipped; the rest imports. The file "-" is standard input.
func (c *cli) importCmd(ctx context.Context, args []string) (err error) {
	fs := newFlagSet("import", "quarry import [--db PATH] [--format FORMAT] [--encoding ENC] [--column FIELD=HEADER]... FILE...",
		"Imports bibliographic files (BibTeX/BibLaTeX, RIS, CSL-JSON, PubMed MEDLINE/.nbib,\n"+
			"Web of Science plain text, CSV, JSON Lines; plain or .gz) into the local library. Importing a file again\n"+
			"updates its records instead of duplicating them. The file - is standard input.")
	flags := app.Flags{}
	flags.Bind(fs.FlagSet, "QUARRY_DB")
	format := fs.String("format", "", "input format: "+strings.Join(biblio.Formats, ", ")+" (default: detect from the content)")
	encoding := fs.String("encoding", "auto", "the files' text encoding: auto (detect: UTF-8, UTF-16, GBK, Big5, Shift_JIS, EUC-JP/KR, windows-1252), or a name such as gbk, shift_jis, utf-16le, latin1")
	columns := columnFlag{}
	fs.Var(columns, "column", "CSV only: FIELD=HEADER maps a column to a field, overriding the guess (repeatable; fields: "+strings.Join(csvfile.Fields, ", ")+")")
	files, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fs.misuse("no input files")
	}
	if *format != "" && !slices.Contains(biblio.Formats, *format) {
		return fs.misused(codecs.UnknownFormat(*format))
	}
	if err := stdinOnce(fs, files); err != nil {
		return err
	}
	cfg, err := app.Load(flags, c.getenv, "QUARRY_DB", "QUARRY_DATABASE_URL", "QUARRY_DB_BUSY_TIMEOUT", "QUARRY_DB_MAX_MB", "QUARRY_IMPORT_RESERVE_MB", "QUARRY_BACKUP_DIR", "QUARRY_BACKUP_KEEP", "QUARRY_LOG_FORMAT", "QUARRY_LOG_LEVEL", "QUARRY_IMPORT_MAX_LINE_MB", "QUARRY_IMPORT_MAX_RECORD_MB", "QUARRY_IMPORT_GZIP_RATIO", "QUARRY_IMPORT_GZIP_FLOOR_MB")
	if err != nil {
		return err
	}
	read := codecs.Options{Format: *format, Encoding: *encoding, CSVColumns: columns, Limits: cfg.Import.Limits, Gzip: cfg.Import.Gzip}

	// The inputs are opened before the database, so a typo in a file name
	// fails before anything is created or written.
	in, err := openImport(files, read, c.stdin)
	if err != nil {
		return err
	}
	defer in.close()
	logger := app.NewLogger(cfg, c.stderr)
	st, err := store.Open(ctx, cfg.DSN(), cfg.StoreOptions(logger))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	start := time.Now()
	p := newProgressPrinter(c.stdout, isTerminal(c.stdout), in, time.Now)
	stats, err := library.Import(ctx, st, in.next(ctx, p.tick), library.ImportOptions{Progress: p.report})
	p.finish()
	if err != nil && stats.Read == 0 {
		// Nothing was read (an empty file, the wrong format, unmappable
		// CSV columns): a count line of zeros would read as a success.
		return err
	}
	for i, e := range stats.Errors {
		if i == maxListedErrors {
			fmt.Fprintf(c.stdout, "  … and %d more bad records\n", len(stats.Errors)-maxListedErrors)
			break
		}
		fmt.Fprintf(c.stdout, "  %s:%d: %s\n", e.Origin, e.Line, e.Reason)
	}
	for i, e := range stats.Warnings {
		if i == maxListedErrors {
			fmt.Fprintf(c.stdout, "  … and %d more warnings\n", stats.Warned-maxListedErrors)
			break
		}
		fmt.Fprintf(c.stdout, "  %s:%d: warning: %s\n", e.Origin, e.Line, e.Reason)
	}
	skipped := fmt.Sprintf("%d skipped", stats.Skipped)
	if stats.Skipped > 0 {
		skipped += " (" + stats.ReasonSummary() + ")"
	}
	if err != nil {
		// No count line: "imported 0 new" right above the error would
		// read as a partial success of an import that wrote nothing.
		return fmt.Errorf("import stopped after reading %d records (%s); %s: %w", stats.Read, skipped, stats.Outcome(), err)
	}
	warned := ""
	if stats.Warned > 0 {
		warned = fmt.Sprintf(" (%d with a warning)", stats.Warned)
	}
	fmt.Fprintf(c.stdout, "imported %d new, %d updated, %d unchanged%s, %s in %.1f s\n", stats.Inserted, stats.Updated, stats.Unchanged, warned, skipped, time.Since(start).Seconds())
	return nil
}

// importInput is the files of one import, all opened before anything is
// written (as library.ImportFiles does) and read as one stream
// (library.Chain), so a bulk load of several corpora builds the full-text
// index once. The bytes read are counted (library.OpenCounting), so
// progress can be measured against the files' sizes.
type importInput struct {
	readers []*library.Reader
	done    int64 // bytes taken from the files so far (atomic: the import reads in its own goroutine)
	size    int64 // their total size; 0 when unknown (a pipe, a device)
}

// openImport opens paths for import, "-" reading stdin; the size is known
// only when every input is a regular file.
func openImport(paths []string, read codecs.Options, stdin io.Reader) (*importInput, error) {
	in := &importInput{}
	known := true
	for _, path := range paths {
		if fi, err := os.Stat(path); path != "-" && err == nil && fi.Mode().IsRegular() {
			in.size += fi.Size()
		} else {
			known = false
		}
		r, err := openInput(path, read, stdin, &in.done)
		if err != nil {
			in.close()
			return nil, err
		}
		in.readers = append(in.readers, r)
	}
	if !known {
		in.size = 0
	}
	return in, nil
}

// openInput opens one input for import, counting the bytes read into
// *done: a file, or stdin for "-", named "stdin" as /dev/stdin would be.
func openInput(path string, read codecs.Options, stdin io.Reader, done *int64) (*library.Reader, error) {
	if path == "-" {
		return library.NewReader(stdin, "stdin", read)
	}
	return library.OpenCounting(path, read, done)
}

// next streams the records of every file in turn; tick is called once per
// record, so progress can move between the store's batch reports.
func (in *importInput) next(ctx context.Context, tick func()) library.Next {
	chain := library.Chain(ctx, in.readers)
	return func() (library.Record, error) {
		rec, err := chain()
		if err == nil {
			tick()
		}
		return rec, err
	}
}

// close releases the decompressors and the files. Their errors are not
// reported: the files were only read, and a damaged stream has already
// failed the import when it was read.
func (in *importInput) close() {
	for _, r := range in.readers {
		r.Close()
	}
}

// progressLineWidth keeps the in-place line within an 80-column terminal:
// a line that wraps cannot be rewritten with \r. The bar starts at
// progressBarMax cells and gives up room, down to progressBarMin, as the
// counts grow longer.
const (
	progressLineWidth = 79
	progressBarMin    = 10
	progressBarMax    = 24
)

// progressRedraw throttles the in-place line: often enough to look live,
// rarely enough that drawing costs nothing next to parsing.
const progressRedraw = 150 * time.Millisecond

// importState is what a progress line shows.
type importState struct {
	Read, Skipped int
	Done, Size    int64 // bytes read of the input's total size; Size 0 when unknown
	Elapsed       time.Duration
	Indexing      bool          // every record is read; the library and its index are being built
	IndexFor      time.Duration // how long the index build has run, shown from a second on
}

// renderProgress draws s as one line: with a bar, percentage and ETA when
// the size is known, a bare counter when it is not (stdin, a pipe). bar is
// the widest the bar may be, 0 for none (plain log lines, where a bar is
// noise); it returns the width used, which the caller passes back next
// time so the bar only ever narrows and does not jitter between redraws.
// The indexing line is the last one rewritten, so it keeps the bar's width
// even if it wraps.
func renderProgress(s importState, bar int) (string, int) {
	var text strings.Builder
	frac := 0.0
	if s.Size > 0 {
		frac = min(float64(s.Done)/float64(s.Size), 1)
		fmt.Fprintf(&text, "%3d%%  ", int(frac*100))
	}
	fmt.Fprintf(&text, "%s records (%s skipped)", thousands(s.Read), thousands(s.Skipped))
	switch {
	case s.Indexing:
		text.WriteString("; building the library's full-text index…")
		if s.IndexFor >= time.Second {
			text.WriteString(" " + shortDuration(s.IndexFor))
		}
	case s.Elapsed > 0:
		fmt.Fprintf(&text, "  %s", recordRate(float64(s.Read)/s.Elapsed.Seconds()))
		if s.Size > 0 && s.Done > 0 && s.Done < s.Size {
			eta := time.Duration(float64(s.Elapsed) * float64(s.Size-s.Done) / float64(s.Done))
			fmt.Fprintf(&text, "  ETA %s", shortDuration(eta))
		}
	}
	if bar <= 0 || s.Size == 0 {
		return strings.TrimLeft(text.String(), " "), bar
	}
	if !s.Indexing {
		bar = max(min(bar, progressLineWidth-utf8.RuneCountInString(text.String())-3), progressBarMin)
	}
	filled := int(frac * float64(bar))
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", bar-filled) + "] " + text.String(), bar
}

// thousands writes n with comma separators, so a count of a million reads
// at a glance.
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// recordRate writes a rate in records per second with a k or M suffix.
func recordRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1fM rec/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk rec/s", r/1e3)
	default:
		return fmt.Sprintf("%.0f rec/s", r)
	}
}

// shortDuration writes d to the second as 7s, 2m05s or 1h02m: an estimate
// needs no more precision than that.
func shortDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

// indexRedraw is how often the line is redrawn while the index is built.
// The build is one SQLite statement that reports nothing (FTS5's 'rebuild';
// inserting in chunks to count them takes twice as long), so the line shows
// how long it has run, to tell a working import from a hung one.
const indexRedraw = time.Second

// progressPrinter shows import progress: on a terminal, one line rewritten
// in place with \r, at most every progressRedraw, and every indexRedraw
// while the index is built; elsewhere (logs, CI) a plain line every
// importProgressEvery records, so a log is not flooded.
type progressPrinter struct {
	// mu serialises drawing: during the index build a ticker goroutine
	// draws while the import goroutine waits on the store.
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	in    *importInput
	now   func() time.Time
	start time.Time
	drawn time.Time // when the in-place line was last drawn
	read  int       // records read, counted as they are read
	skip  int       // records skipped, as of the store's last report
	lined int       // records read at the last plain line
	bar   int       // the bar's width; 0 for plain lines
	dirty bool      // an in-place line is showing and needs ending

	indexStart  time.Time     // when the index build began
	indexRedraw time.Duration // the ticker's period, indexRedraw but in tests
	stopTicker  chan struct{} // closed by finish to stop the ticker
	tickerDone  chan struct{} // closed by the ticker when it has stopped
}

func newProgressPrinter(w io.Writer, tty bool, in *importInput, now func() time.Time) *progressPrinter {
	start := now()
	p := &progressPrinter{w: w, tty: tty, in: in, now: now, start: start, drawn: start, indexRedraw: indexRedraw}
	if tty {
		p.bar = progressBarMax
	}
	return p
}

// tick counts one record read and, on a terminal, redraws when it is time.
// The store reports only once per batch; counting here keeps the line
// moving on slow inputs.
func (p *progressPrinter) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.read++
	if p.tty && p.now().Sub(p.drawn) >= progressRedraw {
		p.draw(false)
	}
}

// report takes the store's counts after each batch and before the index
// build, which is always shown since nothing is reported during it; on a
// terminal a ticker then redraws it with its running time until finish.
func (p *progressPrinter) report(pr library.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.read = max(p.read, pr.Read)
	p.skip = pr.Skipped
	switch {
	case pr.Indexing:
		if p.indexStart.IsZero() {
			p.indexStart = p.now()
		}
		p.draw(true)
		if p.tty && p.stopTicker == nil {
			p.stopTicker, p.tickerDone = make(chan struct{}), make(chan struct{})
			go p.tickIndexing()
		}
	case p.tty:
		if p.now().Sub(p.drawn) >= progressRedraw {
			p.draw(false)
		}
	case p.read-p.lined >= importProgressEvery:
		p.lined = p.read
		p.draw(false)
	}
}

// tickIndexing redraws the indexing line every indexRedraw until finish.
func (p *progressPrinter) tickIndexing() {
	defer close(p.tickerDone)
	t := time.NewTicker(p.indexRedraw)
	defer t.Stop()
	for {
		select {
		case <-p.stopTicker:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw(true)
			p.mu.Unlock()
		}
	}
}

// draw writes the line; the caller holds mu.
func (p *progressPrinter) draw(indexing bool) {
	now := p.now()
	p.drawn = now
	st := importState{
		Read: p.read, Skipped: p.skip,
		Done: atomic.LoadInt64(&p.in.done), Size: p.in.size,
		Elapsed: now.Sub(p.start), Indexing: indexing,
	}
	if indexing {
		st.IndexFor = now.Sub(p.indexStart)
	}
	var line string
	line, p.bar = renderProgress(st, p.bar)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.dirty = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// finish stops the indexing ticker and ends the in-place line, so the
// report starts on its own line.
func (p *progressPrinter) finish() {
	if p.stopTicker != nil {
		close(p.stopTicker)
		<-p.tickerDone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
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
