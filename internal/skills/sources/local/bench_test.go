package local_test

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
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

// BenchmarkRankedLibrary imports both shared corpora (~170k records) and
// times the local source's ranked search (what a run's first search does
// in the library) for each topic, with and without a year range, 25
// results (the default per source), printing one figure line.
// QUARRY_BENCH_LIBRARY names a database to reuse (imported on first use).
func BenchmarkRankedLibrary(b *testing.B) {
	files := shareddata.CorpusFiles()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			b.Skipf("corpus not present (%v); BenchmarkRankedLibrary needs %s", err, shareddata.Dir("corpus"))
		}
	}
	ctx := context.Background()
	path := os.Getenv("QUARRY_BENCH_LIBRARY")
	if path == "" {
		path = filepath.Join(b.TempDir(), "lib.db")
	}
	st, err := store.Open(ctx, path, store.Options{})
	require.NoError(b, err)
	defer st.Close()
	if n, err := st.LibraryCount(ctx); err != nil || n == 0 {
		_, err := library.ImportFiles(ctx, st, files, codecs.Options{}, library.ImportOptions{})
		require.NoError(b, err)
	}
	n, err := st.LibraryCount(ctx)
	require.NoError(b, err)
	src, err := local.New(st)
	require.NoError(b, err)
	for b.Loop() {
		var lat []float64
		hits := 0
		for _, topic := range shareddata.CorpusTopics() {
			ast, err := query.Parse(topic)
			require.NoError(b, err, topic)
			match := query.RenderAll(ast, []string{query.Local})[query.Local]
			for _, years := range []research.YearRange{{}, {From: 2018}} {
				req := sources.SourceRequest{Query: match, YearRange: years, MaxResults: research.DefaultMaxResultsPerSource}
				for _, t := range ast.Terms() {
					req.QuestionWords = append(req.QuestionWords, t.Text)
				}
				t0 := time.Now()
				page, err := src.SearchCounted(ctx, req)
				lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
				require.NoError(b, err, match)
				if len(page.Papers) > 0 {
					hits++
				}
			}
		}
		require.Greater(b, hits, len(lat)*9/10, "ranked search finds something for nearly every topic")
		sort.Float64s(lat)
		pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
		fmt.Printf("library_ranked: records=%d query_p50_ms=%.1f query_p95_ms=%.1f (queries=%d with_hits=%d)\n", n, pct(0.5), pct(0.95), len(lat), hits)
	}
}
