package biblitest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchRecords is how many records BenchRead100k writes and reads.
const BenchRecords = 100_000

// BenchRead100k is the body of every format's BenchmarkRead100k: it writes
// BenchRecords Synthetic records in the format to b.TempDir(), then reads
// them back per iteration, reporting records/s, the largest HeapInuse seen
// (sampled every 10,000 records and at the end) as peak_heap_MB, and the
// file's size as file_MB. A streaming reader keeps peak_heap_MB far below
// file_MB. All formats read the same records, so the figures compare.
func (f Format) BenchRead100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "100k")
	out, err := os.Create(path)
	require.NoError(b, err)
	w := f.NewWriter(out)
	for i := range BenchRecords {
		require.NoError(b, w.Write(Synthetic(i)))
	}
	require.NoError(b, w.Close())
	require.NoError(b, out.Close())
	st, err := os.Stat(path)
	require.NoError(b, err)

	var elapsed time.Duration
	var peak uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	for b.Loop() {
		runtime.GC()
		file, err := os.Open(path)
		require.NoError(b, err)
		start := time.Now()
		r := f.NewReader(file)
		count := 0
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(b, err)
			require.Empty(b, rec.Problem, "record %d", count)
			count++
			if count%10_000 == 0 {
				sample()
			}
		}
		sample()
		elapsed = time.Since(start)
		require.NoError(b, file.Close())
		require.Equal(b, BenchRecords, count)
	}
	b.ReportMetric(float64(BenchRecords)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(peak)/1e6, "peak_heap_MB")
	b.ReportMetric(float64(st.Size())/1e6, "file_MB")
}
