package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// TestIndexFollowsWritesProperty: whatever sequence of small imports,
// bulk imports (several merge batches), deletes by another connection and
// searches in between a library goes through, the index a process
// followed it with answers every query as an index built afresh from the
// table: the same papers, ranks and scores, with and without a year range.
// (The queries leave out one shape: an AND below the root over a phrase of
// several words, which FTS5 scores by the order its iterators visit rows;
// the index replays that order only while its rows are in docid order,
// which replacing a row breaks until the process builds it again. See
// internal/textindex's package doc.)
func TestIndexFollowsWritesProperty(t *testing.T) {
	t.Parallel()
	vocab := []string{"quokka", "wombat", "echidna", "dingo", "numbat", "bilby", "pre-training", "pretraining"}
	queries := []string{`"quokka"`, `"wombat" OR "dingo"`, `"echidna" NOT "bilby"`, `NEAR("quokka" "wombat", 2)`,
		`"numbat bilby"`, `"pretraining"`, `("quokka" OR "echidna") AND "dingo"`}
	for seed := range uint64(25) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "lib.db")
			st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", MergeRows: 2})
			require.NoError(t, err)
			defer st.Close()
			if rng.IntN(2) == 0 { // built before the writes, or at the first search
				require.NoError(t, st.WarmLibraryIndex(ctx))
			}
			raw, err := store.RawForTest(t, path, "OFF")
			require.NoError(t, err)
			defer raw.Close()
			text := func(n int) string {
				w := make([]string, 1+rng.IntN(n))
				for i := range w {
					w[i] = vocab[rng.IntN(len(vocab))]
				}
				return strings.Join(w, " ")
			}
			papers := func() []library.Record {
				recs := make([]library.Record, 1+rng.IntN(6))
				for i := range recs {
					// A small pool of DOIs, so papers are updated too.
					recs[i] = paper(text(4), text(8), 2000+rng.IntN(25), fmt.Sprintf("10.9/p%d", rng.IntN(12)))
				}
				return recs
			}
			for range 1 + rng.IntN(10) {
				switch rng.IntN(4) {
				case 0:
					_, err = library.Import(ctx, st, stream(papers()...), library.ImportOptions{})
				case 1:
					_, err = library.Import(ctx, st, stream(papers()...), library.ImportOptions{BatchSize: 1})
				case 2:
					_, err = raw.Exec(`DELETE FROM papers WHERE doi = ?`, fmt.Sprintf("10.9/p%d", rng.IntN(12)))
				case 3:
					_, err = st.SearchLibrary(ctx, queries[rng.IntN(len(queries))], research.YearRange{}, 10)
				}
				require.NoError(t, err)
			}
			fresh, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
			require.NoError(t, err)
			defer fresh.Close()
			for _, q := range queries {
				for _, years := range []research.YearRange{{}, {From: 2010, To: 2018}} {
					want, err := fresh.LibraryHits(ctx, q, years, 10, 1000)
					require.NoError(t, err, q)
					got, err := st.LibraryHits(ctx, q, years, 10, 1000)
					require.NoError(t, err, q)
					require.Equal(t, want, got, "query %s, years %v", q, years)
					n, err := st.CountLibrary(ctx, q, years)
					require.NoError(t, err)
					require.Len(t, want, n)
				}
			}
		})
	}
}
