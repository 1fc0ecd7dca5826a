package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// TestLibraryRankingPostgres: with Options.LibraryRanking "postgres" the
// library's searches run on text_search and find and order the obvious
// cases as the in-memory bm25 does: a title match above an abstract
// match, NOT, phrases, NEAR, the year range, a project's selection,
// pages and counts.
func TestLibraryRankingPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, url, err := store.OpenPostgresForTest(t, ctx, store.Options{LibraryRanking: store.RankPostgres})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	withProjects(t, st, "pa")

	inTitle := paper("Transformers for protein folding", "We study structure.", 2021, "10.3/t")
	inAbstract := paper("A study of structure prediction", "We use transformers for proteins.", 2021, "10.3/a")
	old := paper("Transformers in 1999", "Early transformers.", 1999, "10.3/o")
	noYear := paper("Transformers without a year", "Undated.", 0, "10.3/n")
	apart := paper("Folding and then the protein", "Protein chains fold slowly in water; deep models help.", 2020, "10.3/p")
	near := paper("Deep learning of proteins", "Deep protein models.", 2020, "10.3/d")
	_, err = library.Import(ctx, st, stream(inAbstract, inTitle, old, noYear, apart, near), library.ImportOptions{})
	require.NoError(t, err)

	ids := func(ps []research.RawPaper) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	tests := []struct {
		name  string
		match string
		years research.YearRange
		want  []string
		set   bool // order not asserted
	}{
		{"TitleBeatsAbstract", `"protein" AND "transformers"`, research.YearRange{}, []string{inTitle.Paper.ID, inAbstract.Paper.ID}, false},
		{"Stemming", `"folded"`, research.YearRange{}, []string{inTitle.Paper.ID, apart.Paper.ID}, true},
		{"Phrase", `"protein folding"`, research.YearRange{}, []string{inTitle.Paper.ID}, false},
		{"Not", `"transformers" NOT "protein"`, research.YearRange{}, []string{old.Paper.ID, noYear.Paper.ID}, true},
		{"Or", `"undated" OR "early"`, research.YearRange{}, []string{old.Paper.ID, noYear.Paper.ID}, true},
		{"Near", `NEAR("deep" "protein", 2)`, research.YearRange{}, []string{near.Paper.ID}, false},
		{"NearFar", `NEAR("deep" "protein", 5)`, research.YearRange{}, []string{near.Paper.ID, apart.Paper.ID}, true},
		{"YearRangeKeepsUnknownYear", `"transformers"`, research.YearRange{From: 2020, To: 2022}, []string{inTitle.Paper.ID, inAbstract.Paper.ID, noYear.Paper.ID}, true},
		{"YearTo", `"transformers"`, research.YearRange{To: 2000}, []string{old.Paper.ID, noYear.Paper.ID}, true},
		// Stop words and punctuation as FTS5 has them (migrations/postgres/00027):
		// "the" is indexed, and a hyphen or a slash separates words, in the
		// query too.
		{"StopWord", `"the protein"`, research.YearRange{}, []string{apart.Paper.ID}, false},
		{"Hyphen", `"deep-protein"`, research.YearRange{}, []string{near.Paper.ID}, false},
		{"Punctuation", `"protein/folding"`, research.YearRange{}, []string{inTitle.Paper.ID}, false},
		{"Quotes", `"it's a ""quoted""'); DROP TABLE papers; --"`, research.YearRange{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.SearchLibrary(ctx, tt.match, tt.years, 10)
			require.NoError(t, err)
			if tt.set {
				require.ElementsMatch(t, tt.want, ids(got))
			} else {
				require.Equal(t, tt.want, ids(got))
			}
			n, err := st.CountLibrary(ctx, tt.match, tt.years)
			require.NoError(t, err)
			require.Equal(t, len(tt.want), n)
		})
	}

	// Pages: the second page continues the first; past the end, none.
	all, err := st.SearchLibrary(ctx, `"transformers"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, all, 4)
	page, err := st.SearchLibraryPage(ctx, `"transformers"`, research.YearRange{}, 2, 2)
	require.NoError(t, err)
	require.Equal(t, ids(all[2:]), ids(page))
	page, err = st.SearchLibraryPage(ctx, `"transformers"`, research.YearRange{}, 10, 2)
	require.NoError(t, err)
	require.Empty(t, page)

	// Ranked hits score higher-is-better, best first.
	hits, err := st.LibraryHits(ctx, `"protein" OR "proteins"`, research.YearRange{}, 20, 10)
	require.NoError(t, err)
	require.Len(t, hits, 4)
	for i := 1; i < len(hits); i++ {
		require.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score)
	}
	require.Positive(t, hits[len(hits)-1].Score)

	// A project's selection: only its papers, in every read.
	_, err = st.SelectPapers(ctx, "pa", "Ann", []string{inAbstract.Paper.ID, old.Paper.ID})
	require.NoError(t, err)
	sel := research.WithLibrarySelection(ctx, "pa")
	got, err := st.SearchLibrary(sel, `"transformers"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{inAbstract.Paper.ID, old.Paper.ID}, ids(got))
	n, err := st.CountLibrary(sel, `"transformers"`, research.YearRange{From: 2000})
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// Document frequencies come from text_search too.
	total, df, err := st.LibraryDocFreqs(ctx, []string{"transformers", "protein folding", "absent"})
	require.NoError(t, err)
	require.Equal(t, 6, total)
	require.Equal(t, []int{4, 1, 0}, df)

	// What the MATCH parser refuses (a prefix query among them) is the
	// researcher's mistake, as on the in-memory index.
	for _, bad := range []string{`"transfor`, `transform*`, `title:protein`} {
		_, err := st.SearchLibrary(ctx, bad, research.YearRange{}, 10)
		var fe *fault.Error
		require.True(t, errors.As(err, &fe) && fe.Code == fault.EInvalid, "%s: %v", bad, err)
	}

	// The same database ranked in memory finds the same papers.
	mem, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	defer mem.Close()
	for _, tt := range tests {
		want, err := mem.CountLibrary(ctx, tt.match, tt.years)
		require.NoError(t, err)
		require.Equal(t, want, len(tt.want), fmt.Sprintf("%s: the in-memory index finds as many", tt.name))
	}
}

// TestLibraryRankingPostgresNeedsPostgres: SQLite has no text_search, so
// asking for its ranking there is a mistake, said at Open.
func TestLibraryRankingPostgresNeedsPostgres(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "lib.db"), store.Options{LibraryRanking: store.RankPostgres})
	require.ErrorContains(t, err, "needs a PostgreSQL database")
	_, err = store.Open(context.Background(), filepath.Join(t.TempDir(), "lib.db"), store.Options{LibraryRanking: "bm25"})
	require.ErrorContains(t, err, "neither")
}

// TestLibraryRankingPostgresIsBM25: on a library whose words PostgreSQL's
// 'quarry' configuration and FTS5 tokenize alike, the postgres ranking's
// scores are the in-memory index's bm25, paper for paper, under every
// operator whose phrases FTS5 counts in its own way (OR's matching side,
// NOT's left side, NEAR's instances) and with LibraryHits' weights and
// the store's.
func TestLibraryRankingPostgresIsBM25(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, url, err := store.OpenPostgresForTest(t, ctx, store.Options{LibraryRanking: store.RankPostgres})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	_, err = library.Import(ctx, st, stream(
		paper("Protein folding with deep models", "Deep models predict how a protein folds; folding is slow.", 2021, "10.4/a"),
		paper("Deep learning for images", "Convolutional models classify images of proteins and cells.", 2020, "10.4/b"),
		paper("Folding proteins in water", "Water slows the folding of a protein chain, which models the protein.", 2019, "10.4/c"),
		paper("A survey of models", "We survey deep models, shallow models and protein models at length in this long abstract about models.", 2018, "10.4/d"),
		paper("Cells and water", "Cells hold water.", 2017, "10.4/e"),
		paper("Protein protein interaction", "Interaction of one protein with another protein in cells.", 2022, "10.4/f"),
	), library.ImportOptions{})
	require.NoError(t, err)
	mem, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close() })

	for _, match := range []string{
		`"protein"`,
		`"protein" AND "models"`,
		`"protein folding"`,
		`"protein" OR "water"`,
		`("deep" AND "images") OR "cells"`,
		`"models" NOT "deep"`,
		`NEAR("deep" "protein", 3)`,
		`NEAR("protein" "folding" "models", 10) OR "survey"`,
	} {
		for _, tw := range []float64{1, 10} {
			want, err := mem.LibraryHits(ctx, match, research.YearRange{}, tw, 20)
			require.NoError(t, err)
			got, err := st.LibraryHits(ctx, match, research.YearRange{}, tw, 20)
			require.NoError(t, err)
			require.Len(t, got, len(want), match)
			for i := range want {
				require.Equal(t, want[i].Doc, got[i].Doc, "%s (title weight %g): rank %d", match, tw, i)
				require.InDelta(t, want[i].Score, got[i].Score, 1e-9, "%s: rank %d", match, i)
			}
		}
		want, err := mem.SearchLibrary(ctx, match, research.YearRange{}, 20)
		require.NoError(t, err)
		got, err := st.SearchLibrary(ctx, match, research.YearRange{}, 20)
		require.NoError(t, err)
		require.Equal(t, rawIDs(want), rawIDs(got), match)
	}
}

func rawIDs(ps []research.RawPaper) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}
