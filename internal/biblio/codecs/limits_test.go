package codecs_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
)

// huge is the over-long line every format gets: far above the default
// limits (1 MiB a line, 4 MiB a record).
const huge = 64 << 20

// bibtexMacroBomb defines @string macros that double at each step, 1 KiB
// to 64 MiB, as a BibTeX "billion laughs" would.
func bibtexMacroBomb() string {
	var b strings.Builder
	fmt.Fprintf(&b, "@string{s0 = \"%s\"}\n", strings.Repeat("a", 1<<10))
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&b, "@string{s%d = s%d # s%d}\n", i, i-1, i-1)
	}
	b.WriteString("@article{bomb, title = s16, year = 2000}\n")
	return b.String()
}

// TestReadersBoundLongLines feeds every reader, with its default limits,
// a record holding a 64 MiB line between two good records: the long one
// comes back as a Problem, the good ones still read, and the reader
// allocates a small fraction of the line. Before the limits, RIS, MEDLINE,
// JSON Lines and CSV buffered the whole line, and BibTeX expanded macros
// without bound; CSL-JSON ended the file at the long item until it skipped
// it by scanning. Not parallel: it measures the process's allocations.
func TestReadersBoundLongLines(t *testing.T) {
	tests := []struct {
		format      string
		head, tail  string
		wantTitles  []string
		bibtexBombs bool
	}{
		{biblio.RIS, "TY  - JOUR\nTI  - ok one\nPY  - 2020\nER  - \nTY  - JOUR\nTI  - long\nAB  - ", "\nER  - \nTY  - JOUR\nTI  - ok two\nPY  - 2021\nER  - \n", []string{"ok one", "ok two"}, false},
		{biblio.MEDLINE, "PMID- 1\nTI  - ok one\nDP  - 2020\n\nPMID- 2\nAB  - ", "\n\nPMID- 3\nTI  - ok two\nDP  - 2021\n", []string{"ok one", "ok two"}, false},
		{biblio.JSONL, "{\"title\":\"ok one\",\"year\":2020}\n{\"title\":\"", "\"}\n{\"title\":\"ok two\",\"year\":2021}\n", []string{"ok one", "ok two"}, false},
		{biblio.CSV, "title,year\nok one,2020\n", ",2000\nok two,2021\n", []string{"ok one", "ok two"}, false},
		{biblio.CSLJSON, "[{\"title\":\"ok one\",\"issued\":{\"date-parts\":[[2020]]}},\n{\"title\":\"", "\"},\n{\"title\":\"ok two\",\"issued\":{\"date-parts\":[[2021]]}}]\n", []string{"ok one", "ok two"}, false},
		{biblio.BibTeX, "@article{one, title = {ok one}, year = 2020}\n@article{long, abstract = {", "}}\n@article{two, title = {ok two}, year = 2021}\n", []string{"ok one", "ok two"}, false},
		{biblio.BibTeX, "@article{one, title = {ok one}, year = 2020}\n" + bibtexMacroBomb(), "@article{two, title = {ok two}, year = 2021}\n", []string{"ok one", "ok two"}, true},
	}
	for _, tt := range tests {
		name := tt.format
		if tt.bibtexBombs {
			name += "_macros"
		}
		t.Run(name, func(t *testing.T) {
			var in io.Reader = io.MultiReader(strings.NewReader(tt.head), biblitest.Repeat('a', huge), strings.NewReader(tt.tail))
			if tt.bibtexBombs {
				in = strings.NewReader(tt.head + tt.tail)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			o, err := codecs.NewReader(in, "bomb", codecs.Options{Format: tt.format})
			require.NoError(t, err)
			var titles, problems []string
			for {
				rec, err := o.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				switch {
				case rec.Problem != "":
					problems = append(problems, rec.Problem)
				case rec.Skip == "":
					titles = append(titles, rec.Paper.Title)
				}
			}
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: allocated %d MiB reading a %d MiB line; problems %q", name, alloc>>20, huge>>20, problems)
			require.Equal(t, tt.wantTitles, titles)
			require.NotEmpty(t, problems, "the long record is reported")
			require.Less(t, alloc, uint64(huge/2), "allocations stay far below the line's size")
		})
	}
}

// gzipped compresses what r yields.
func gzipped(t testing.TB, r io.Reader) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := io.Copy(zw, r)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestGzipBombRefused reads a RIS file of one 80 MiB line of "a", gzipped
// to ~80 KiB: past the 64 MiB floor, at ~1000 times its compressed size,
// reading stops with an EInvalid error naming the limit. On b42018a it was
// decompressed in full (and held, by the line reader).
func TestGzipBombRefused(t *testing.T) {
	t.Parallel()
	bomb := gzipped(t, io.MultiReader(strings.NewReader("TY  - JOUR\nAB  - "), biblitest.Repeat('a', 80<<20), strings.NewReader("\nER  - \n")))
	o, err := codecs.NewReader(bytes.NewReader(bomb), "bomb.ris.gz", codecs.Options{})
	require.NoError(t, err)
	defer o.Close()
	for {
		_, err = o.Next()
		if err != nil {
			break
		}
	}
	require.NotErrorIs(t, err, io.EOF, "the bomb is refused, not read to its end")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorMessage(err), "more than 100 times its compressed size")
	require.Contains(t, fault.ErrorMessage(err), "64 MiB")
}

// TestGzipLimitKeepsRealFiles: a file compressing far better than real
// exports still reads while under the floor, and the limits can be set.
func TestGzipLimitKeepsRealFiles(t *testing.T) {
	t.Parallel()
	rec := "TY  - JOUR\nTI  - Same title\nPY  - 2020\nER  - \n"
	gz := gzipped(t, strings.NewReader(strings.Repeat(rec, 20000))) // ~900 KiB, ratio ~200
	o, err := codecs.NewReader(bytes.NewReader(gz), "same.ris.gz", codecs.Options{})
	require.NoError(t, err)
	n := 0
	for {
		_, err := o.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 20000, n)

	o, err = codecs.NewReader(bytes.NewReader(gz), "same.ris.gz", codecs.Options{Gzip: codecs.GzipLimit{Ratio: 10, Floor: 64 << 10}})
	require.NoError(t, err)
	for err == nil {
		_, err = o.Next()
	}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "a lower limit refuses it: %v", err)
}

// TestBlankLinesSkippedInBulk: blank and white-space-only lines between
// records are skipped in bulk and still counted, so the next record's
// line is right, and a line with content after blanks is read whole.
func TestBlankLinesSkippedInBulk(t *testing.T) {
	t.Parallel()
	blanks := strings.Repeat("\n", 100000) + " \t\r\n" + strings.Repeat("\r\n", 1000) // 101,001 lines
	const second = 4 + 101001 + 1                                                     // after a 4-line first record
	tests := []struct {
		format, first, next string
	}{
		{biblio.RIS, "TY  - JOUR\nTI  - one\nPY  - 2020\nER  - \n", "TY  - JOUR\nTI  - two\nPY  - 2021\nER  - \n"},
		{biblio.MEDLINE, "PMID- 1\nTI  - one\nDP  - 2020\n\n", "PMID- 2\nTI  - two\nDP  - 2021\n"},
		{biblio.JSONL, "{\"title\":\"x\",\"year\":2019}\n{\"title\":\"x\",\"year\":2019}\n{\"title\":\"x\",\"year\":2019}\n{\"title\":\"one\",\"year\":2020}\n", "{\"title\":\"two\",\"year\":2021}\n"},
		{biblio.CSV, "title,year\nx,2019\nx,2019\none,2020\n", "two,2021\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			o, err := codecs.NewReader(strings.NewReader(tt.first+blanks+tt.next), "", codecs.Options{Format: tt.format})
			require.NoError(t, err)
			var last biblio.Record
			for {
				rec, err := o.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				require.Empty(t, rec.Problem)
				last = rec
			}
			require.Equal(t, "two", last.Paper.Title)
			require.Equal(t, second, last.Line)
		})
	}
}
