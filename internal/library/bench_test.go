package library_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/shareddata"
	"quarry/internal/skills/query"
	"quarry/internal/store"
)

var benchCorpusDir = shareddata.Dir("corpus")

func benchQueries() []struct {
	text  string
	years research.YearRange
} {
	var out []struct {
		text  string
		years research.YearRange
	}
	add := func(text string, years research.YearRange) {
		out = append(out, struct {
			text  string
			years research.YearRange
		}{text, years})
	}
	for _, t := range shareddata.CorpusTopics() {
		add(t, research.YearRange{})
		add(t+` (survey OR benchmark)`, research.YearRange{})
		add(t+` -medical`, research.YearRange{})
		add(t, research.YearRange{From: 2018})
		add(t+` (efficient OR scalable OR fast)`, research.YearRange{To: 2019})
	}
	return out
}

// BenchmarkLibrary imports both shared corpora (~170k records) into a fresh
// database and times ~200 local-source queries, printing one figure line.
func BenchmarkLibrary(b *testing.B) {
	files := shareddata.CorpusFiles()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			b.Skipf("corpus not present (%v); BenchmarkLibrary needs %s", err, benchCorpusDir)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "lib.db")
		st, err := store.Open(ctx, path, store.Options{})
		require.NoError(b, err)
		// As in a server: the (empty) library's index is built at start
		// and follows the import's batches, so the import is done when
		// its papers are searchable.
		require.NoError(b, st.WarmLibraryIndex(ctx))
		start := time.Now()
		stats, err := library.ImportFiles(ctx, st, files, codecs.Options{}, library.ImportOptions{})
		require.NoError(b, err)
		importS := time.Since(start).Seconds()
		// What a server starting on this library spends building its
		// index (in the background).
		fresh, err := store.Open(ctx, path, store.Options{})
		require.NoError(b, err)
		indexStart := time.Now()
		require.NoError(b, fresh.WarmLibraryIndex(ctx))
		indexS := time.Since(indexStart).Seconds()
		require.NoError(b, fresh.Close())
		n, err := st.LibraryCount(ctx)
		require.NoError(b, err)

		var lat []float64
		hits := 0
		for _, q := range benchQueries() {
			ast, err := query.Parse(q.text)
			require.NoError(b, err, q.text)
			match := query.RenderAll(ast, []string{query.Local})[query.Local]
			t0 := time.Now()
			got, err := st.SearchLibrary(ctx, match, q.years, 100)
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			require.NoError(b, err, match)
			if len(got) > 0 {
				hits++
			}
		}
		require.Greater(b, hits, len(lat)/2, "most realistic queries must find something")
		sort.Float64s(lat)
		pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
		fmt.Printf("library: import_s=%.1f records=%d records_per_s=%.0f query_p50_ms=%.1f query_p95_ms=%.1f (read=%d stored=%d skipped=%d queries=%d with_hits=%d index_build_s=%.1f)\n",
			importS, stats.Read, float64(stats.Read)/importS, pct(0.5), pct(0.95), stats.Read, n, stats.Skipped, len(lat), hits, indexS)
		require.NoError(b, st.Close())
	}
}
