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
	src := filepath.Join(benchCorpusDir, "arxiv_cs_listings_2025_2026.jsonl.gz")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("corpus not present (%v); BenchmarkImportFormats needs /work/shared/data/corpus", err)
	}
	ctx := context.Background()
	recs := corpusRecords(b, src, benchImportRecords)
	for b.Loop() {
		for _, format := range []string{biblio.RIS, biblio.BibTeX} {
			path := filepath.Join(b.TempDir(), "export"+codecs.Extension(format))
			writeFile(b, path, format, recs)
			fi, err := os.Stat(path)
			require.NoError(b, err)

			parseStart := time.Now()
			n := parseOnly(b, path)
			parseS := time.Since(parseStart).Seconds()
			require.Equal(b, len(recs), n)

			st, err := store.Open(ctx, filepath.Join(b.TempDir(), "lib.db"), store.Options{})
			require.NoError(b, err)
			runtime.GC()
			base := liveHeap()
			stop := samplePeakHeap()
			start := time.Now()
			stats, err := library.ImportFiles(ctx, st, []string{path}, codecs.Options{}, library.ImportOptions{})
			importS := time.Since(start).Seconds()
			peak := stop()
			require.NoError(b, err)
			require.Equal(b, len(recs), stats.Inserted+stats.Updated, "every record imports (%s)", stats.ReasonSummary())
			require.NoError(b, st.Close())
			// The import's own memory is the peak above the heap before it
			// started (which holds the benchmark's source records).
			fmt.Printf("import: format=%s records=%d file_mb=%.0f parse_records_per_s=%.0f import_records_per_s=%.0f import_peak_heap_mb=%.0f\n",
				format, len(recs), float64(fi.Size())/(1<<20), float64(n)/parseS, float64(stats.Read)/importS, float64(peak-min(peak, base))/(1<<20))
		}
	}
}

// corpusRecords reads the first n readable records of a corpus file.
func corpusRecords(b *testing.B, path string, n int) []biblio.Record {
	b.Helper()
	f, err := os.Open(path)
	require.NoError(b, err)
	defer f.Close()
	in, err := codecs.NewReader(f, filepath.Base(path), codecs.Options{})
	require.NoError(b, err)
	defer in.Close()
	out := make([]biblio.Record, 0, n)
	for len(out) < n {
		r, err := in.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(b, err)
		if r.Problem == "" && r.Skip == "" {
			r.Extra = nil
			out = append(out, r)
		}
	}
	require.Len(b, out, n, "the corpus has fewer readable records than the benchmark needs")
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

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
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
