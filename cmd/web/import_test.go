package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
)

func TestImportCommandEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "q.db")
	files := []string{"../../internal/library/testdata/arxiv_sample.jsonl", "../../internal/library/testdata/paperlists_sample.jsonl"}
	env := dbGetenv(t, db)

	var out bytes.Buffer
	require.NoError(t, run(ctx, append([]string{"import"}, files...), env, nil, &out, io.Discard))
	text := out.String()
	require.NotContains(t, text, "\r", "a non-terminal gets plain lines, not in-place updates")
	require.Contains(t, text, "arxiv_sample.jsonl:3: malformed JSON\n")
	require.Contains(t, text, "paperlists_sample.jsonl:6: missing title\n")
	require.Regexp(t, regexp.MustCompile(`(?m)^imported 5 new, 1 updated, 0 unchanged, 4 skipped \(1 malformed JSON, 1 missing title, 1 status Reject, 1 status Withdraw\) in [0-9.]+ s$`), text)

	// Again, with --db overriding the environment's database: two records
	// are as stored; the arXiv listing's venue replaces the ACL record's.
	out.Reset()
	require.NoError(t, run(ctx, []string{"import", "--db", db, "--format", "jsonl", files[0]}, dbGetenv(t, db), nil, &out, io.Discard))
	require.Regexp(t, `(?m)^imported 0 new, 1 updated, 2 unchanged, 1 skipped \(1 malformed JSON\) in [0-9.]+ s$`, out.String())

	st, err := openStore(t, ctx, db)
	require.NoError(t, err)
	defer st.Close()
	n, err := st.LibraryCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	got, err := st.SearchLibrary(ctx, `"retrieval-augmented generation"`, research.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "arxiv:2504.00112", got[0].ID)
}

// TestImportCommandReadsEveryFormat imports a BibTeX file (detected from
// content though named .txt), a Scopus-style CSV whose title column is
// mapped by hand, and a MEDLINE file, into one library.
func TestImportCommandReadsEveryFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	files := map[string]string{
		"refs.txt":    "% exported by JabRef\n@article{smith2019,\n  title = {Caf{\\'e} culture and {DNA} repair},\n  author = {Smith, John and M{\\\"u}ller, Ana},\n  year = 2019,\n  doi = {10.1000/cafe}\n}\n\n@article{broken,\n  author = {Nobody}\n}\n",
		"scopus.csv":  "Heading,Authors,Year,DOI\nSleep and memory,\"Lee C.; Kim D.\",2020,10.1000/sleep\n",
		"pubmed.nbib": "PMID- 31234567\nTI  - Exercise for depression in older adults.\nFAU - Okafor, Ngozi\nDP  - 2019 May\n\n",
	}
	var paths []string
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		paths = append(paths, p)
	}
	var out bytes.Buffer
	args := append([]string{"import", "--db", db, "--column", "title=Heading"}, paths...)
	require.NoError(t, run(ctx, args, dbGetenv(t, db), nil, &out, io.Discard))
	require.Contains(t, out.String(), "refs.txt:9: missing title")
	require.Regexp(t, `(?m)^imported 3 new, 0 updated, 0 unchanged, 1 skipped \(1 missing title\) in [0-9.]+ s$`, out.String())

	st, err := openStore(t, ctx, db)
	require.NoError(t, err)
	defer st.Close()
	got, err := st.SearchLibrary(ctx, `"culture"`, research.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "Café culture and DNA repair", got[0].Title, "LaTeX accents and protective braces decoded")
	require.Equal(t, []string{"John Smith", "Ana Müller"}, got[0].Authors)
	got, err = st.SearchLibrary(ctx, `"sleep"`, research.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "doi:10.1000/sleep", got[0].ID)
	got, err = st.SearchLibrary(ctx, `"depression"`, research.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "31234567", got[0].PMID)
}

// TestImportCommandUnclosedCSVQuote: a CSV cell whose opening quote is
// never closed is reported on its line and skipped; the rows after it
// import (they used to vanish into that one cell).
func TestImportCommandUnclosedCSVQuote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, path := filepath.Join(dir, "q.db"), filepath.Join(dir, "swallow.csv")
	require.NoError(t, os.WriteFile(path, []byte("Title,Year,Authors\nFirst good paper,2020,Smith\n\"Unclosed title,2021,Doe\nThird good paper,2022,Lee\nFourth good paper,2023,Kim\n"), 0o644))
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"import", "--db", db, path}, dbGetenv(t, db), nil, &out, io.Discard))
	require.Contains(t, out.String(), "  swallow.csv:3: malformed CSV row: a quote opens a cell and is never closed\n")
	require.Regexp(t, `(?m)^imported 3 new, 0 updated, 0 unchanged, 1 skipped \(1 malformed CSV row: a quote opens a cell and is never closed\) in [0-9.]+ s$`, out.String())

	st, err := openStore(t, ctx, db)
	require.NoError(t, err)
	defer st.Close()
	var titles []string
	for _, q := range []string{`"first"`, `"third"`, `"fourth"`, `"unclosed"`} {
		got, err := st.SearchLibrary(ctx, q, research.YearRange{}, 5)
		require.NoError(t, err)
		for _, p := range got {
			titles = append(titles, p.Title)
		}
	}
	require.Equal(t, []string{"First good paper", "Third good paper", "Fourth good paper"}, titles)
}

// TestImportCommandRefusesFilesWithoutRecords: an empty file, or one read
// in the wrong format, is an EInvalid error naming the file, with no count
// line of zeros that would read as a success, and nothing is imported.
func TestImportCommandRefusesFilesWithoutRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, ris := filepath.Join(dir, "empty.ris"), filepath.Join(dir, "refs.ris")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	require.NoError(t, os.WriteFile(ris, []byte("TY  - JOUR\nTI  - A RIS paper\nER  - \n"), 0o644))
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"Empty":          {[]string{empty}, "empty.ris is empty: there are no records to import"},
		"WrongFormat":    {[]string{"--format", "bibtex", ris}, "refs.ris: no records found reading it as bibtex (the format chosen); check that the file is in that format"},
		"EmptyAfterGood": {[]string{ris, empty}, "empty.ris is empty: there are no records to import"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "q.db")
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"import", "--db", db}, tc.args...), dbGetenv(t, db), nil, &out, io.Discard)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
			require.ErrorContains(t, err, tc.want)
			if name == "EmptyAfterGood" {
				require.ErrorContains(t, err, "import stopped after reading 1 records (0 skipped); nothing was imported")
			}
			require.NotContains(t, out.String(), "imported 0 new", "no count line when nothing was imported")
			st, err := openStore(t, context.Background(), db)
			require.NoError(t, err)
			defer st.Close()
			n, err := st.LibraryCount(context.Background())
			require.NoError(t, err)
			require.Zero(t, n)
		})
	}
}

func TestImportCommandRejectsBadInvocations(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "q.db")
	for name, args := range map[string][]string{
		"NoFiles":       {"import", "--db", db},
		"UnknownFormat": {"import", "--db", db, "--format", "docx", "x.docx"},
		"MissingFile":   {"import", "--db", db, filepath.Join(t.TempDir(), "nope.jsonl")},
		"Unrecognised":  {"import", "--db", db, "import.go"},
		"UnknownFlag":   {"import", "--nope"},
		"BadColumn":     {"import", "--db", db, "--column", "title", "x.csv"},
		"UnknownField":  {"import", "--db", db, "--column", "colour=Colour", "x.csv"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, nil, &out, io.Discard)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
		})
	}
}

func TestRenderProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		state   importState
		bar     int
		want    string
		wantBar int
	}{
		{"KnownSizeOnATerminal",
			importState{Read: 35120, Skipped: 2, Done: 50, Size: 100, Elapsed: 7 * time.Second}, progressBarMax,
			"[############............]  50%  35,120 records (2 skipped)  5.0k rec/s  ETA 7s", progressBarMax},
		{"KnownSizeInALog",
			importState{Read: 35120, Skipped: 2, Done: 50, Size: 100, Elapsed: 7 * time.Second}, 0,
			"50%  35,120 records (2 skipped)  5.0k rec/s  ETA 7s", 0},
		{"UnknownSizeIsACounter",
			importState{Read: 1234567, Skipped: 12345, Elapsed: 100 * time.Second}, progressBarMax,
			"1,234,567 records (12,345 skipped)  12.3k rec/s", progressBarMax},
		{"LongEstimate",
			importState{Read: 900, Done: 1, Size: 1000, Elapsed: 10 * time.Second}, 0,
			"0%  900 records (0 skipped)  90 rec/s  ETA 2h46m", 0},
		{"MillionsPerSecond",
			importState{Read: 2_000_000, Done: 2, Size: 3, Elapsed: 250 * time.Millisecond}, 0,
			"66%  2,000,000 records (0 skipped)  8.0M rec/s  ETA 0s", 0},
		{"NothingReadYet",
			importState{Size: 100}, 0,
			"0%  0 records (0 skipped)", 0},
		{"OverrunIsClamped",
			importState{Read: 10, Done: 150, Size: 100, Elapsed: time.Second}, progressBarMax,
			"[########################] 100%  10 records (0 skipped)  10 rec/s", progressBarMax},
		{"LongCountsNarrowTheBar",
			importState{Read: 1234567, Skipped: 123456, Done: 47, Size: 100, Elapsed: 65 * time.Second}, progressBarMax,
			"[#####......]  47%  1,234,567 records (123,456 skipped)  19.0k rec/s  ETA 1m13s", 11},
		{"TheBarNeverWidens",
			importState{Read: 10, Done: 50, Size: 100, Elapsed: time.Second}, 12,
			"[######......]  50%  10 records (0 skipped)  10 rec/s  ETA 1s", 12},
		{"IndexingKeepsTheBarWidth",
			importState{Read: 512345, Skipped: 123456, Done: 100, Size: 100, Elapsed: time.Minute, Indexing: true}, 18,
			"[##################] 100%  512,345 records (123,456 skipped); building the library's full-text index…", 18},
		{"IndexingShowsItsRunningTime",
			importState{Read: 170290, Done: 100, Size: 100, Elapsed: time.Minute, Indexing: true, IndexFor: 12 * time.Second}, 10,
			"[##########] 100%  170,290 records (0 skipped); building the library's full-text index… 12s", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, bar := renderProgress(tt.state, tt.bar)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantBar, bar)
			if !tt.state.Indexing {
				require.LessOrEqual(t, utf8.RuneCountInString(got), progressLineWidth, "a wrapped line cannot be rewritten with \\r")
			}
		})
	}
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                       "0s",
		1499 * time.Millisecond: "1s",
		59 * time.Second:        "59s",
		125 * time.Second:       "2m05s",
		3720 * time.Second:      "1h02m",
	} {
		require.Equal(t, want, shortDuration(d), "%v", d)
	}
}

// fakeClock advances by step each time it is read, so the printer's
// throttling runs the same on every machine.
func fakeClock(step time.Duration) func() time.Time {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

// simulateImport feeds a printer what an import of n records in batches of
// batch reports: a tick per record, a report per batch, then the index build.
func simulateImport(p *progressPrinter, in *importInput, n, batch int) {
	for i := 1; i <= n; i++ {
		in.done = int64(i)
		p.tick()
		if i%batch == 0 || i == n {
			p.report(library.Progress{ImportStats: library.ImportStats{Read: i, Skipped: i / 100}})
		}
	}
	p.report(library.Progress{ImportStats: library.ImportStats{Read: n, Skipped: n / 100}, Indexing: true})
	p.finish()
}

func TestProgressPrinterWritesPlainLinesWhenNotATerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	in := &importInput{size: 60000}
	simulateImport(newProgressPrinter(&out, false, in, fakeClock(time.Millisecond)), in, 60000, 5000)
	require.NotContains(t, out.String(), "\r")
	require.NotContains(t, out.String(), "\033")
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3, "one line per %d records, then the index build:\n%s", importProgressEvery, out.String())
	require.True(t, strings.HasPrefix(lines[0], "41%  25,000 records (250 skipped)  "), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "83%  50,000 records (500 skipped)  "), lines[1])
	require.Equal(t, "100%  60,000 records (600 skipped); building the library's full-text index…", lines[2])
}

func TestProgressPrinterRedrawsInPlaceOnATerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	in := &importInput{size: 3000}
	// 1 ms per clock reading and one or two readings per record: a redraw
	// every progressRedraw is a few dozen redraws, not thousands.
	simulateImport(newProgressPrinter(&out, true, in, fakeClock(time.Millisecond)), in, 3000, 500)
	text := out.String()
	draws := strings.Count(text, "\r\033[K")
	require.Greater(t, draws, 10)
	require.Less(t, draws, 60)
	require.Equal(t, 1, strings.Count(text, "\n"), "only finish ends the line")
	require.True(t, strings.HasSuffix(text, "\r\033[K[########################] 100%  3,000 records (30 skipped); building the library's full-text index…\n"), text[max(0, len(text)-200):])
	require.Contains(t, text, "ETA ")
}

// syncBuffer is a bytes.Buffer the ticker goroutine and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestProgressPrinterTicksDuringTheIndexBuild: the store reports nothing
// while the index is built, so on a terminal the line is redrawn with the
// build's running time until finish, and nothing is drawn after it.
func TestProgressPrinterTicksDuringTheIndexBuild(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	in := &importInput{size: 100, done: 100}
	p := newProgressPrinter(&out, true, in, fakeClock(time.Second))
	p.indexRedraw = time.Millisecond
	p.report(library.Progress{ImportStats: library.ImportStats{Read: 100}, Indexing: true})
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "index… 5s") },
		10*time.Second, time.Millisecond, "the running time climbs: %q", out.String())
	p.finish()
	text := out.String()
	require.True(t, strings.HasSuffix(text, "\n"), "finish ends the line")
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, text, out.String(), "nothing is drawn after finish")
}

// TestProgressPrinterDoesNotTickOffATerminal: a log gets the indexing line
// once, not a line a second.
func TestProgressPrinterDoesNotTickOffATerminal(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	in := &importInput{size: 100, done: 100}
	p := newProgressPrinter(&out, false, in, fakeClock(time.Millisecond))
	p.indexRedraw = time.Millisecond
	p.report(library.Progress{ImportStats: library.ImportStats{Read: 100}, Indexing: true})
	time.Sleep(20 * time.Millisecond)
	p.finish()
	require.Equal(t, "100%  100 records (0 skipped); building the library's full-text index…\n", out.String())
}

// TestOpenImportCountsCompressedBytes reads a gzipped file to the end and
// checks that the bytes counted reach the size on disk, so the bar ends at
// 100% for .gz input.
func TestOpenImportCountsCompressedBytes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "papers.jsonl.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	rnd := rand.New(rand.NewPCG(1, 2)) // abstracts gzip cannot shrink much, so the file outgrows the readers' buffers
	for i := range 5000 {
		fmt.Fprintf(zw, `{"id":"arxiv:%d","title":"Paper number %d about retrieval","abstract":"%x %x %x"}`+"\n", i, i, rnd.Uint64(), rnd.Uint64(), rnd.Uint64())
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

	in, err := openImport([]string{path}, codecs.Options{}, nil)
	require.NoError(t, err)
	defer in.close()
	require.EqualValues(t, buf.Len(), in.size)
	require.Less(t, in.done, in.size, "the file is not read whole when opened")
	ticks := 0
	next := in.next(context.Background(), func() { ticks++ })
	for {
		_, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	require.Equal(t, 5000, ticks)
	require.Equal(t, in.size, in.done)
}

// TestImportCommandMissingFile: a file that cannot be opened is named once,
// with the system's reason, before any database is created.
func TestImportCommandMissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing, db := filepath.Join(dir, "nope.jsonl"), filepath.Join(dir, "q.db")
	var out bytes.Buffer
	err := run(context.Background(), []string{"import", "--db", db, missing}, func(string) string { return "" }, nil, &out, io.Discard)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
	require.Equal(t, "open "+missing+": no such file or directory", fault.ErrorMessage(err))
	require.NoFileExists(t, db)
}
