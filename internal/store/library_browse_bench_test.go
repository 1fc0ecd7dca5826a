package store_test

import (
	"context"
	"os"
	"testing"

	"quarry/internal/store"
)

// BenchmarkBrowseLibrary measures the library page's query on a real
// library: QUARRY_BENCH_LIBRARY names its database (e.g. 75,000 papers
// imported with quarry import from shared/data/corpus); without it the
// benchmark skips. Sub-benchmarks: the first page, the last page (the
// deepest offset), and searches for a rare and a very common word.
func BenchmarkBrowseLibrary(b *testing.B) {
	path := os.Getenv("QUARRY_BENCH_LIBRARY")
	if path == "" {
		b.Skip("set QUARRY_BENCH_LIBRARY to a library database")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n, err := st.LibraryCount(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		q    store.LibraryQuery
	}{
		{"FirstPage", store.LibraryQuery{Limit: 50}},
		{"LastPage", store.LibraryQuery{Limit: 50, Offset: n - 50}},
		{"SearchRare", store.LibraryQuery{Text: "sleep deprivation", Limit: 50}},
		{"SearchCommon", store.LibraryQuery{Text: "learning", Limit: 50}},
		{"SearchCommonPage20", store.LibraryQuery{Text: "learning", Limit: 50, Offset: 950}},
		{"SearchTwoCommon", store.LibraryQuery{Text: "language models", Limit: 50}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var res store.LibraryResults
			for b.Loop() {
				if res, err = st.BrowseLibrary(ctx, bc.q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Total), "total")
		})
	}
}
