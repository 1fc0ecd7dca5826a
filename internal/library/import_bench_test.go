package library_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
	"quarry/internal/shareddata"
	"quarry/internal/store"
)

// benchImportRecords is the size of the file each format is measured on.
const benchImportRecords = 100_000

// BenchmarkImportFormats measures importing a 100k-record RIS file and a
// 100k-record BibTeX file (written by Quarry's own writers from real arXiv
// listings of the shared corpus): parse-only throughput, whole-import
// throughput into a fresh library (store writes and the FTS rebuild
// included), and the peak live heap during the import next to the file's
// size, which shows the import streams instead of loading the file.
func BenchmarkImportFormats(b *testing.B) {
	srcs := shareddata.CorpusFiles()
	for _, src := range srcs {
		if _, err := os.Stat(src); err != nil {
			b.Skipf("corpus not present (%v); BenchmarkImportFormats needs %s", err, benchCorpusDir)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		// Write both files first and let the source records go, so the
		// heap measured during each import is the import's own.
		dir := b.TempDir()
		formats := []string{biblio.RIS, biblio.BibTeX}
		recs := corpusRecords(b, srcs, benchImportRecords)
		for _, format := range formats {
			writeFile(b, filepath.Join(dir, "export"+codecs.Extension(format)), format, recs)
		}
		n := len(recs)
		recs = nil
		for _, format := range formats {
			path := filepath.Join(dir, "export"+codecs.Extension(format))
			fi, err := os.Stat(path)
			require.NoError(b, err)

			runtime.GC()
			stop := samplePeakHeap()
			parseStart := time.Now()
			parsed := parseOnly(b, path)
			parseS := time.Since(parseStart).Seconds()
			parsePeak := stop()
			require.Equal(b, n, parsed)

			st, err := store.Open(ctx, filepath.Join(b.TempDir(), "lib.db"), store.Options{})
			require.NoError(b, err)
			runtime.GC()
			stop = samplePeakHeap()
			start := time.Now()
			stats, err := library.ImportFiles(ctx, st, []string{path}, codecs.Options{}, library.ImportOptions{})
			importS := time.Since(start).Seconds()
			importPeak := stop()
			require.NoError(b, err)
			require.Equal(b, n, stats.Inserted+stats.Updated, "every record imports (%s)", stats.ReasonSummary())
			require.NoError(b, st.Close())
			// Peak live heap (as measured after each GC cycle): what the
			// parse and the whole import keep in memory, against the file.
			fmt.Printf("import: format=%s records=%d file_mb=%.0f parse_records_per_s=%.0f import_records_per_s=%.0f parse_peak_live_heap_mb=%.1f import_peak_live_heap_mb=%.1f\n",
				format, n, float64(fi.Size())/(1<<20), float64(parsed)/parseS, float64(stats.Read)/importS, float64(parsePeak)/(1<<20), float64(importPeak)/(1<<20))
		}
	}
}

// corpusRecords reads the first n readable records of the corpus files,
// in order, with distinct stable IDs (a paper listed in both corpora would
// otherwise import as an update and blur the count).
func corpusRecords(b *testing.B, paths []string, n int) []biblio.Record {
	b.Helper()
	out := make([]biblio.Record, 0, n)
	seen := make(map[string]bool, n)
	for _, path := range paths {
		f, err := os.Open(path)
		require.NoError(b, err)
		in, err := codecs.NewReader(f, filepath.Base(path), codecs.Options{})
		require.NoError(b, err)
		for len(out) < n {
			r, err := in.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(b, err)
			if r.Problem == "" && r.Skip == "" && !seen[r.Paper.ID] {
				seen[r.Paper.ID] = true
				r.Extra = nil
				out = append(out, r)
			}
		}
		in.Close()
		f.Close()
	}
	require.Len(b, out, n, "the corpora have fewer readable records than the benchmark needs")
	return out
}

func writeFile(b *testing.B, path, format string, recs []biblio.Record) {
	b.Helper()
	f, err := os.Create(path)
	require.NoError(b, err)
	bw := bufio.NewWriterSize(f, 1<<20)
	require.NoError(b, codecs.WriteAll(bw, format, recs))
	require.NoError(b, bw.Flush())
	require.NoError(b, f.Close())
}

func parseOnly(b *testing.B, path string) int {
	b.Helper()
	f, err := os.Open(path)
	require.NoError(b, err)
	defer f.Close()
	in, err := codecs.NewReader(f, filepath.Base(path), codecs.Options{})
	require.NoError(b, err)
	n := 0
	for {
		r, err := in.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		require.NoError(b, err)
		require.Empty(b, r.Problem, "line %d", r.Line)
		n++
	}
}

// liveHeap is the heap the last GC cycle found live (garbage awaiting
// collection is not counted, so the figure does not depend on GOGC).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// samplePeakHeap samples the live heap every 5 ms until the returned
// function is called, which returns the maximum seen.
func samplePeakHeap() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v := liveHeap(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}
