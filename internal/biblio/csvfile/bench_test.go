package csvfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/csvfile"
)

// BenchmarkRead100k writes 100,000 varied rows and reads them back,
// reporting throughput and the peak heap, which must stay far below the
// file size because the reader streams.
func BenchmarkRead100k(b *testing.B) {
	const n = 100_000
	base := corpus(b)
	path := filepath.Join(b.TempDir(), "big.csv")
	f, err := os.Create(path)
	require.NoError(b, err)
	w := csvfile.NewWriter(f)
	for i := range n {
		rec := base[i%len(base)]
		rec.Paper.Title = fmt.Sprintf("%s (%d)", rec.Paper.Title, i)
		rec.Paper.Year = 1950 + i%75
		require.NoError(b, w.Write(rec))
	}
	require.NoError(b, w.Close())
	require.NoError(b, f.Close())
	info, err := os.Stat(path)
	require.NoError(b, err)

	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		require.NoError(b, err)
		runtime.GC()
		var ms runtime.MemStats
		peak := uint64(0)
		start := time.Now()
		r := csvfile.NewReader(f)
		count := 0
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(b, err)
			require.Empty(b, rec.Problem)
			count++
			if count%10_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		elapsed := time.Since(start)
		require.NoError(b, f.Close())
		require.Equal(b, n, count)
		b.ReportMetric(float64(count)/elapsed.Seconds(), "records/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
		b.ReportMetric(float64(info.Size())/(1<<20), "file_MB")
	}
}
