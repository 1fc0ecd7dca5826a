package library_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/library"
)

// peakRSS resets the process's peak resident size (writing 5 to
// /proc/self/clear_refs, Linux) and returns a function reading it back
// in MiB from VmHWM; where /proc is missing it falls back to the Go
// runtime's MemStats.Sys, and says which it measured.
func peakRSS() (read func() (mb float64, source string)) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err == nil {
		return func() (float64, string) {
			status, err := os.ReadFile("/proc/self/status")
			if err == nil {
				for line := range strings.SplitSeq(string(status), "\n") {
					if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
						kb, _ := strconv.ParseFloat(f[1], 64)
						return kb / 1024, "VmHWM"
					}
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return float64(ms.Sys) / (1 << 20), "MemStats.Sys"
		}
	}
	return func() (float64, string) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.Sys) / (1 << 20), "MemStats.Sys"
	}
}

// BenchmarkBombUpload feeds the bomb (a RIS record whose abstract
// is one line of 1 GiB of 'a', gzipped to about 1 MB) through both import
// paths: the web upload's (library.Jobs.Start, which refuses it before a
// job starts) and `quarry import`'s (library.ImportFiles, which stops at
// the decompression limit). It prints the process's peak RSS over both,
// measured from a reset (target ≤ 256 MiB; b42018a went past 5 GB), and
// the time to read 2 GiB of blank lines, which took 57 s in b42018a.
func BenchmarkBombUpload(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "bomb.ris.gz")
	f, err := os.Create(path)
	require.NoError(b, err)
	biblitest.GzipBomb(b, f, 1<<30, gzip.BestCompression)
	require.NoError(b, f.Close())
	fi, err := os.Stat(path)
	require.NoError(b, err)
	st := openStore(b)
	ctx := context.Background()
	runtime.GC()

	b.ResetTimer()
	for range b.N {
		peak := peakRSS()
		start := time.Now()
		jobs := library.NewJobs(ctx, st)
		_, uploadErr := jobs.Start(path, "bomb.ris.gz", library.Importer{By: "Ada"}, codecs.Options{Format: biblio.RIS}, false)
		uploadTook := time.Since(start)
		start = time.Now()
		_, cliErr := library.ImportFiles(ctx, st, []string{path}, codecs.Options{}, library.ImportOptions{})
		cliTook := time.Since(start)
		mb, source := peak()
		require.Equal(b, fault.EInvalid, fault.ErrorCode(uploadErr), "the upload is refused: %v", uploadErr)
		require.Equal(b, fault.EInvalid, fault.ErrorCode(cliErr), "the import stops: %v", cliErr)

		start = time.Now()
		rd := bufio.NewReaderSize(biblitest.Repeat('\n', 2<<30), 64<<10)
		o, err := codecs.NewReader(io.MultiReader(strings.NewReader("TY  - JOUR\nTI  - x\nER  - \n"), rd), "blank.ris", codecs.Options{Format: biblio.RIS})
		require.NoError(b, err)
		n := 0
		for {
			if _, err := o.Next(); err != nil {
				require.ErrorIs(b, err, io.EOF)
				break
			}
			n++
		}
		require.Equal(b, 1, n)
		blank := time.Since(start)
		fmt.Printf("import: bomb_peak_rss_mb=%.0f bomb_compressed_mb=%.2f bomb_upload_refused_ms=%d bomb_cli_stopped_ms=%d blank_lines_2gib_s=%.1f (peak from %s)\n",
			mb, float64(fi.Size())/(1<<20), uploadTook.Milliseconds(), cliTook.Milliseconds(), blank.Seconds(), source)
	}
}
