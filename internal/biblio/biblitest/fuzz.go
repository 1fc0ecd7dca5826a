package biblitest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/fault"
)

// readTimeout bounds one fuzz input's read: inputs are small, so a reader
// still busy after this long is stuck inside Next, which the record-count
// bound alone cannot see.
const readTimeout = 10 * time.Second

// AddSeeds adds every file matching pattern (e.g. "testdata/*.ris") to the
// fuzz corpus, so the fuzzer starts from the realistic samples.
func (f Format) AddSeeds(fz *testing.F, pattern string) {
	fz.Helper()
	files, err := filepath.Glob(pattern)
	require.NoError(fz, err)
	require.NotEmpty(fz, files, "no seed files match %s", pattern)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(fz, err)
		fz.Add(data)
	}
}

// readResult is what a bounded read found: the records, and the error that
// ended it (nil at io.EOF) or a loop the bound caught.
type readResult struct {
	recs  []biblio.Record
	err   error
	loops bool
}

// readBounded reads data with at most limit records; it touches no
// testing.T, because it runs on its own goroutine.
func (f Format) readBounded(data []byte, limit int) readResult {
	r := f.NewReader(bytes.NewReader(data))
	var res readResult
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return res
		}
		if err != nil {
			res.err = err
			return res
		}
		if len(res.recs) == limit {
			res.loops = true
			return res
		}
		res.recs = append(res.recs, rec)
	}
}

// FuzzRoundTrip is the body of every format's FuzzReader
// (fz.Fuzz(format.FuzzRoundTrip)). On any input it requires: the reader
// ends (no panic, no endless loop, no more records than the input could
// hold), only I/O-free errors the format declares (FileErrors), line numbers
// of at least 1 that never go back, Skip only where the format skips, every
// record either a Problem or a valid paper; and that writing the valid
// records and reading them back gives the same records.
func (f Format) FuzzRoundTrip(t *testing.T, data []byte) {
	limit := len(data) + 1
	if f.LinePerRecord {
		limit = bytes.Count(data, []byte("\n")) + 1
	}
	done := make(chan readResult, 1)
	go func() { done <- f.readBounded(data, limit) }()
	var res readResult
	select {
	case res = <-done:
	case <-time.After(readTimeout):
		t.Fatalf("reader still busy after %s", readTimeout)
	}
	require.False(t, res.loops, "more than %d records: the reader loops", limit)
	if res.err != nil {
		require.True(t, f.FileErrors, "unexpected error: %v", res.err)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(res.err), "only a file-level mapping error: %v", res.err)
		require.Empty(t, res.recs, "a file-level error comes before any record")
		return
	}
	var good []biblio.Record
	prev := 1
	for _, rec := range res.recs {
		require.GreaterOrEqual(t, rec.Line, prev, "line numbers go back")
		prev = rec.Line
		if !f.Skips {
			require.Empty(t, rec.Skip, "this format never skips a record")
		}
		if rec.Problem != "" || rec.Skip != "" {
			continue
		}
		require.NoError(t, rec.Paper.Validate())
		if f.InvertsNames && !namesInvertible(rec) {
			continue // see Format.InvertsNames
		}
		good = append(good, rec)
	}
	f.RoundTrip(t, good)
}

// namesInvertible reports whether every author reads back as itself from
// the inverted form the writer stores.
func namesInvertible(rec biblio.Record) bool {
	for _, a := range rec.Paper.Authors {
		if biblio.DisplayName(biblio.ParseName(a).Inverted()) != a {
			return false
		}
	}
	return true
}
