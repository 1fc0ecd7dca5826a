package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// withProjects adds projects ids to st, each owned by one account.
func withProjects(t *testing.T, st *store.Store, ids ...string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "ann", Email: "ann@example.org", Name: "Ann", CreatedAt: now}))
	for _, id := range ids {
		require.NoError(t, st.CreateProject(ctx, store.Project{ID: id, Name: "Project " + id, CreatedAt: now}, "ann"))
	}
}

// TestLibrarySelection: a project's selection holds library papers only,
// is listed and searched on its own, narrows every library read of a
// search whose context names it, and leaves the library and other
// projects' selections alone.
func TestLibrarySelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	withProjects(t, st, "pa", "pb")
	var recs []library.Record
	for i := range 30 {
		topic := "sleep memory"
		if i%3 == 0 {
			topic = "consensus algorithm"
		}
		recs = append(recs, paper(fmt.Sprintf("Paper %d on %s", i, topic), "about "+topic, 2000+i%20, fmt.Sprintf("10.1/%d", i)))
	}
	_, err := library.Import(ctx, st, stream(recs...), library.ImportOptions{})
	require.NoError(t, err)
	id := func(i int) string { return recs[i].Paper.ID }

	added, err := st.SelectPapers(ctx, "pa", "Ann", []string{id(0), id(1), id(2), id(3), "not-in-the-library"})
	require.NoError(t, err)
	require.Equal(t, 4, added, "an ID the library lacks is skipped")
	added, err = st.SelectPapers(ctx, "pa", "Ann", []string{id(1), id(4)})
	require.NoError(t, err)
	require.Equal(t, 1, added, "a paper already selected is not added twice")
	_, err = st.SelectPapers(ctx, "pb", "Ann", []string{id(5)})
	require.NoError(t, err)
	n, err := st.SelectionCount(ctx, "pa")
	require.NoError(t, err)
	require.Equal(t, 5, n)
	added, err = st.SelectPapers(ctx, "nope", "Ann", []string{id(6)})
	require.NoError(t, err)
	require.Zero(t, added, "no project, no selection")

	listed, err := st.BrowseLibrary(ctx, store.LibraryQuery{Limit: 25, Selection: "pa"})
	require.NoError(t, err)
	require.Equal(t, 5, listed.Total)
	require.ElementsMatch(t, []string{id(0), id(1), id(2), id(3), id(4)}, paperIDs(listed))
	found, err := st.BrowseLibrary(ctx, store.LibraryQuery{Limit: 25, Text: "sleep", Selection: "pa"})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{id(1), id(2), id(4)}, paperIDs(found), "a search of a selection finds its matches alone")
	whole, err := st.BrowseLibrary(ctx, store.LibraryQuery{Limit: 25, Text: "sleep"})
	require.NoError(t, err)
	require.Equal(t, 20, whole.Total, "the whole library is unchanged")

	in, err := st.SelectedIn(ctx, id(1), []string{"pb", "pa"})
	require.NoError(t, err)
	require.Equal(t, []string{"pa"}, in)

	// A search whose context names the selection sees only it, in every
	// read: ranked hits, counts, pages.
	sel := research.WithLibrarySelection(ctx, "pa")
	hits, err := st.LibraryHits(sel, `"sleep"`, research.YearRange{}, 2, 100)
	require.NoError(t, err)
	require.Len(t, hits, 3)
	count, err := st.CountLibrary(sel, `"sleep"`, research.YearRange{})
	require.NoError(t, err)
	require.Equal(t, 3, count)
	page, err := st.SearchLibraryPage(sel, `"consensus"`, research.YearRange{}, 0, 10)
	require.NoError(t, err)
	require.Len(t, page, 2, "papers 0 and 3 of the selection are about consensus")
	count, err = st.CountLibrary(ctx, `"sleep"`, research.YearRange{})
	require.NoError(t, err)
	require.Equal(t, 20, count, "without the selection, the whole library")

	removed, err := st.UnselectPapers(ctx, "pa", []string{id(1), id(9)})
	require.NoError(t, err)
	require.Equal(t, 1, removed)
	n, err = st.SelectionCount(ctx, "pa")
	require.NoError(t, err)
	require.Equal(t, 4, n)

	added, matched, err := st.SelectMatching(ctx, "pb", "Ann", "consensus", 100)
	require.NoError(t, err)
	require.Equal(t, 10, matched)
	require.Equal(t, 10, added)
	_, matched, err = st.SelectMatching(ctx, "pa", "Ann", "sleep", 5)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "more matches than allowed: nothing added")
	require.Equal(t, 20, matched)
	n, err = st.SelectionCount(ctx, "pa")
	require.NoError(t, err)
	require.Equal(t, 4, n)
}

// TestImportIntoSelection: an import for a project puts its papers in the
// library and the project's selection, by one write or staged in bulk.
func TestImportIntoSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	withProjects(t, st, "pa")
	var recs []library.Record
	for i := range 25 {
		recs = append(recs, paper(fmt.Sprintf("Imported paper %d", i), "", 2010, fmt.Sprintf("10.2/%d", i)))
	}
	_, err := library.Import(ctx, st, stream(recs[:5]...), library.ImportOptions{Project: "pa", By: "Ann"})
	require.NoError(t, err)
	n, err := st.SelectionCount(ctx, "pa")
	require.NoError(t, err)
	require.Equal(t, 5, n, "a small import, one write")
	_, err = library.Import(ctx, st, stream(recs...), library.ImportOptions{Project: "pa", By: "Ann", BatchSize: 4})
	require.NoError(t, err)
	n, err = st.SelectionCount(ctx, "pa")
	require.NoError(t, err)
	require.Equal(t, 25, n, "a bulk import, staged")
	_, err = library.Import(ctx, st, stream(paper("Not the project's", "", 2011, "10.3/1")), library.ImportOptions{})
	require.NoError(t, err)
	total, err := st.LibraryCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 26, total)
	n, err = st.SelectionCount(ctx, "pa")
	require.NoError(t, err)
	require.Equal(t, 25, n, "an import of no project selects nothing")
}
