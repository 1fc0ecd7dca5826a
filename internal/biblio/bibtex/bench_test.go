package bibtex

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/skills"
)

// BenchmarkRead100k measures import throughput and shows that reading
// streams: the peak heap stays far below the size of the file.
func BenchmarkRead100k(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "big.bib")
	f, err := os.Create(path)
	require.NoError(b, err)
	w := NewWriter(f)
	types := []string{biblio.Article, biblio.Conference, biblio.Preprint, biblio.Book, biblio.Chapter, biblio.Thesis, biblio.Report, biblio.Misc}
	for i := range n {
		rec := biblio.Record{
			Type: types[i%len(types)],
			Paper: skills.RawPaper{
				Title:    fmt.Sprintf("Study %d of naïve & robust methods for {DNA} analysis — part %d", i, i%7),
				Authors:  []string{fmt.Sprintf("Jürgen Müller%d", i%100), "Ludwig van Beethoven", fmt.Sprintf("Ann O'Neil %d", i%13)},
				Year:     1990 + i%35,
				Venue:    fmt.Sprintf("Journal of Things %d", i%50),
				Volume:   fmt.Sprint(i % 40),
				Issue:    fmt.Sprint(i % 12),
				Pages:    fmt.Sprintf("%d-%d", i%500, i%500+12),
				Abstract: fmt.Sprintf("We study 50%% of cases_%d.\n\nSecond paragraph with $x^2$ and more words to make an abstract of realistic length, roughly a few hundred bytes long, as exports usually carry.", i),
				DOI:      fmt.Sprintf("10.1000/x.%d", i),
			},
			Keywords: []string{"alpha", "beta; gamma"},
		}
		if i%3 == 0 {
			rec.Mark, rec.Note = biblio.Relevant, "see table 2; compare"
		}
		require.NoError(b, w.Write(rec))
	}
	require.NoError(b, w.Close())
	require.NoError(b, f.Close())
	b.ResetTimer()
	var peak uint64
	var elapsed time.Duration
	var ms runtime.MemStats
	for range b.N {
		runtime.GC()
		start := time.Now()
		f, err := os.Open(path)
		require.NoError(b, err)
		r := NewReader(f)
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
		require.NoError(b, f.Close())
		require.Equal(b, n, count)
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
}
