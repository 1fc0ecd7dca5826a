package bibtex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

// FuzzReader checks that any input is read without panic or endless loop,
// that every record is either a Problem or a valid paper, that lines never
// go backwards, and that writing what was read and reading it again gives
// the same records (see the package doc for why that holds: the writer
// escapes exactly what the reader interprets).
func FuzzReader(f *testing.F) {
	files, err := filepath.Glob("testdata/*.bib")
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan []biblio.Record, 1)
		go func() { done <- readAll(t, bytes.NewReader(data)) }()
		var recs []biblio.Record
		select {
		case recs = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("reader did not finish")
		}
		line := 1
		var good []biblio.Record
		for _, r := range recs {
			require.GreaterOrEqual(t, r.Line, line)
			line = r.Line
			if r.Problem == "" {
				require.NoError(t, r.Paper.Validate())
				good = append(good, r)
			}
		}
		back, text := roundTrip(t, good)
		require.Len(t, back, len(good), text)
		for i := range good {
			require.Empty(t, back[i].Problem, text)
			require.Equal(t, biblio.Comparable(good[i]), biblio.Comparable(back[i]), text)
		}
	})
}
