package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/store"
)

func paperIDs(r store.LibraryResults) []string {
	out := make([]string, len(r.Papers))
	for i, p := range r.Papers {
		out[i] = p.ID
	}
	return out
}

// TestBrowseLibrary: the library newest import first in pages that add up
// to its count; a search needs every word, ranks by bm25, and reads
// quotes, operators and FTS5 column filters as plain words, never as an
// error.
func TestBrowseLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	recs := []library.Record{
		paper("Sleep deprivation and working memory", "sleep loss impairs memory", 2003, "10.1/a"),
		paper("Raft: in search of an understandable consensus algorithm", "consensus", 2014, "10.1/b"),
		paper("Sleep spindles", "NOT a title about memory", 2010, "10.1/c"),
		paper(`Don't "quote" me: sleep AND dreams`, "", 2020, "10.1/d"),
		paper("Self-supervised pre-training for vision", "", 2021, "10.1/e"),
	}
	_, err := library.Import(ctx, st, stream(recs...), library.ImportOptions{})
	require.NoError(t, err)
	browse := func(q store.LibraryQuery) store.LibraryResults {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 25
		}
		got, err := st.BrowseLibrary(ctx, q)
		require.NoError(t, err)
		return got
	}
	id := func(i int) string { return recs[i].Paper.ID }

	all := browse(store.LibraryQuery{})
	require.Equal(t, 5, all.Total)
	require.True(t, all.Exact)
	require.Equal(t, []string{id(4), id(3), id(2), id(1), id(0)}, paperIDs(all), "newest import first")
	require.Equal(t, "test.jsonl", all.Papers[0].Source)
	require.Equal(t, []string{id(2), id(1)}, paperIDs(browse(store.LibraryQuery{Offset: 2, Limit: 2})))
	require.Equal(t, []string{id(0)}, paperIDs(browse(store.LibraryQuery{Offset: 4, Limit: 2})))
	require.Empty(t, browse(store.LibraryQuery{Offset: 6, Limit: 2}).Papers)

	got := browse(store.LibraryQuery{Text: "SLEEP memory"})
	require.Equal(t, 2, got.Total)
	require.Equal(t, id(0), got.Papers[0].ID, "memory in the title ranks first")
	require.ElementsMatch(t, []string{id(0), id(2)}, paperIDs(got))
	require.Equal(t, []string{id(4)}, paperIDs(browse(store.LibraryQuery{Text: "pretraining"})), "a joined compound")
	require.Equal(t, []string{id(4)}, paperIDs(browse(store.LibraryQuery{Text: "pre-training"})))
	for _, hostile := range []string{`don't "quote`, `sleep AND`, `NOT memory`, `title:raft`, `(((`, `"`, `*`, `NEAR(sleep`} {
		_, err := st.BrowseLibrary(ctx, store.LibraryQuery{Text: hostile, Limit: 10})
		require.NoError(t, err, hostile)
	}
	require.Equal(t, []string{id(3)}, paperIDs(browse(store.LibraryQuery{Text: `don't "quote`})))
	require.Equal(t, []string{id(1)}, paperIDs(browse(store.LibraryQuery{Text: `raft:`})), "a colon is no column filter")
	none := browse(store.LibraryQuery{Text: `"""`})
	require.Empty(t, none.Papers)
	require.Zero(t, none.Total)

	_, err = st.BrowseLibrary(ctx, store.LibraryQuery{Limit: store.MaxListLimit + 1})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

// TestLibraryPaperByID: a paper with its identifiers, where it came from
// and when; an unknown ID is ENotFound.
func TestLibraryPaperByID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	rec := paper("Sleep and cognition", "abstract text", 2003, "10.1093/sleep/26.2.117")
	rec.Paper.PMID, rec.Paper.Volume = "12683482", "26"
	_, err := library.Import(ctx, st, stream(rec), library.ImportOptions{})
	require.NoError(t, err)
	require.Equal(t, "doi:10.1093/sleep/26.2.117", rec.Paper.ID)

	got, err := st.LibraryPaperByID(ctx, rec.Paper.ID)
	require.NoError(t, err)
	require.Equal(t, "Sleep and cognition", got.Title)
	require.Equal(t, []string{"Ada Lovelace", "Alan Turing"}, got.Authors)
	require.Equal(t, "12683482", got.PMID)
	require.Equal(t, "26", got.Volume)
	require.Equal(t, "test.jsonl", got.Source)
	require.False(t, got.ImportedAt.IsZero())

	_, err = st.LibraryPaperByID(ctx, "doi:10.1093/nope")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	require.Contains(t, fmt.Sprint(err), "doi:10.1093/nope")
}
