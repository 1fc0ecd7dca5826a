// Package biblitest is TEST SUPPORT for the bibliographic format packages
// (biblio/bibtex, ris, csljson, medline, csvfile, jsonl). Import it only
// from _test.go files: it calls testing and testify, and fails the test on
// any error.
//
// Every format promises the same things (a streaming reader that never
// stops for a bad record, a writer whose output reads back as the same
// records), so every format is tested the same way: a round trip over one
// shared varied corpus (Corpus), a fuzz target that checks the reader's
// promises on any input and round-trips what it read (Format.FuzzRoundTrip),
// and a 100k-record read benchmark on one shared synthetic generator
// (Format.BenchRead100k), so figures compare across formats. What a format
// cannot carry is said once, in its Format value, where a reader of its
// tests sees it.
package biblitest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

// Format is one format's reader and writer plus its known limits. The zero
// values of the limit fields mean "carries everything, reports nothing
// unusual", so each exception a format needs is a visible line in its test.
type Format struct {
	NewReader func(io.Reader) biblio.Reader
	NewWriter func(io.Writer) biblio.Writer

	// Carried maps a record to the part of it the format keeps; round
	// trips compare Carried(written) with Carried(read). Nil means
	// biblio.Comparable, i.e. everything every format must keep.
	Carried func(biblio.Record) biblio.Record

	// LinePerRecord says a record needs at least one line of its own, so
	// a fuzz input with n newlines yields at most n+1 records; otherwise
	// the bound is one record per byte (CSL-JSON and BibTeX can put
	// several on one line).
	LinePerRecord bool

	// Skips says the reader may leave a record out on purpose (Record.Skip,
	// JSON Lines' rejected submissions); other readers must never set it.
	Skips bool

	// FileErrors says Next may return an fault.EInvalid error before the
	// first record when the file as a whole cannot be mapped (CSV without
	// a title column); the fuzz target then expects no records at all.
	FileErrors bool

	// InvertsNames says the writer stores authors as "Last, First,
	// Suffix". biblio.ParseName reads a three-part name as "Last, Suffix,
	// First" when the middle part is a suffix word (BibTeX's order), so a
	// display name whose first name is itself a suffix word and which has
	// a suffix ("Jr Smith III") cannot come back the same; the fuzz round
	// trip leaves such records out. No real name looks like that.
	InvertsNames bool
}

// New builds a Format from a package's constructors, which return concrete
// types (*ris.Reader), so tests need no wrapper closures.
func New[R biblio.Reader, W biblio.Writer](newReader func(io.Reader) R, newWriter func(io.Writer) W) Format {
	return Format{
		NewReader: func(r io.Reader) biblio.Reader { return newReader(r) },
		NewWriter: func(w io.Writer) biblio.Writer { return newWriter(w) },
	}
}

// ReadAll reads every record of r, failing the test on an I/O error.
func ReadAll(t testing.TB, r biblio.Reader) []biblio.Record {
	t.Helper()
	var out []biblio.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, rec)
	}
}

// WriteAll writes recs to w and closes it, failing the test on any error.
func WriteAll(t testing.TB, w biblio.Writer, recs []biblio.Record) {
	t.Helper()
	for _, rec := range recs {
		require.NoError(t, w.Write(rec))
	}
	require.NoError(t, w.Close())
}

// Write returns recs written in the format.
func (f Format) Write(t testing.TB, recs []biblio.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	WriteAll(t, f.NewWriter(&buf), recs)
	return buf.Bytes()
}

// Read returns every record of data.
func (f Format) Read(t testing.TB, data []byte) []biblio.Record {
	t.Helper()
	return ReadAll(t, f.NewReader(bytes.NewReader(data)))
}

// ReadFile streams every record of testdata/name, the sample files each
// package keeps as real tools export them.
func (f Format) ReadFile(t testing.TB, name string) []biblio.Record {
	t.Helper()
	file, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer file.Close()
	return ReadAll(t, f.NewReader(file))
}

// Carry applies Carried (or biblio.Comparable) to each record, so a whole
// slice can be compared in one assertion.
func (f Format) Carry(recs []biblio.Record) []biblio.Record {
	carried := f.Carried
	if carried == nil {
		carried = biblio.Comparable
	}
	out := make([]biblio.Record, len(recs))
	for i, r := range recs {
		out[i] = carried(r)
	}
	return out
}

// UntypedAsMisc is the Carried of a format with no type for "unknown"
// (RIS writes GEN, BibTeX @misc): an untyped record comes back as Misc.
func UntypedAsMisc(r biblio.Record) biblio.Record {
	c := biblio.Comparable(r)
	if c.Type == "" {
		c.Type = biblio.Misc
	}
	return c
}

// KeywordsSplitOn is the Carried of a format that keeps keywords as one
// string joined by sep without any escape (CSL-JSON's keyword variable,
// a CSV cell): a keyword containing sep comes back as several, so both
// sides are compared split.
func KeywordsSplitOn(sep string) func(biblio.Record) biblio.Record {
	return func(r biblio.Record) biblio.Record {
		c := biblio.Comparable(r)
		var kws []string
		for _, k := range c.Keywords {
			for _, part := range strings.Split(k, sep) {
				if part = strings.TrimSpace(part); part != "" {
					kws = append(kws, part)
				}
			}
		}
		c.Keywords = kws
		return c
	}
}

// RoundTrip writes recs (finished records), reads them back and requires
// the same records, none with a Problem. It returns what was read and the
// written bytes, for the format's own assertions on its output.
func (f Format) RoundTrip(t testing.TB, recs []biblio.Record) ([]biblio.Record, []byte) {
	t.Helper()
	out := f.Write(t, recs)
	back := f.Read(t, out)
	require.Len(t, back, len(recs), "%s", out)
	want, got := f.Carry(recs), f.Carry(back)
	for i := range recs {
		require.Empty(t, back[i].Problem, "record %d in\n%s", i, out)
		require.Equal(t, want[i], got[i], "record %d in\n%s", i, out)
	}
	return back, out
}
