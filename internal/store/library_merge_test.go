package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// TestBulkMergeLetsAnotherProcessWrite: a bulk import's merge commits in
// short batches, so a second process writing to the same database (a
// server next to `quarry import`) gets the write lock between them instead
// of waiting for the whole merge; and the index built batch by batch is
// whole. Before, the merge was one transaction: no write from the other
// process could finish while it ran.
func TestBulkMergeLetsAnotherProcessWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lib.db")
	importer, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", MergeRows: 50})
	require.NoError(t, err)
	defer importer.Close()
	server, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer server.Close()

	const n = 3000
	recs := make([]library.Record, n)
	for i := range recs {
		recs[i] = paper(fmt.Sprintf("Quokka study %d", i), "An abstract about marsupial habitats.", 2020, fmt.Sprintf("10.9/q%d", i))
	}
	imported := make(chan error, 1)
	go func() {
		_, err := library.Import(ctx, importer, stream(recs...), library.ImportOptions{BatchSize: 500})
		imported <- err
	}()
	// After each of its writes the server counts the imported papers it
	// can see: one merge transaction shows it 0 or n, batches show it
	// partial counts in between.
	partial := map[int]bool{}
	writes := 0
	for running := true; running; {
		select {
		case err := <-imported:
			require.NoError(t, err)
			running = false
		case <-time.After(10 * time.Millisecond): // requests come and go; a tight loop would starve the importer instead
		}
		rec := paper(fmt.Sprintf("Wombat note %d", writes), "", 2021, fmt.Sprintf("10.9/w%d", writes))
		_, err := server.WritePapers(ctx, []store.ImportPaper{{RawPaper: rec.Paper, Origin: "server", Line: 1}})
		require.NoError(t, err)
		writes++
		seen, err := server.LibraryCount(ctx)
		require.NoError(t, err)
		if seen -= writes; seen > 0 && seen < n {
			partial[seen] = true
		}
	}
	require.GreaterOrEqual(t, len(partial), 3, "the other process's writes land between the merge's batches")

	count, err := server.LibraryCount(ctx)
	require.NoError(t, err)
	require.Equal(t, n+writes, count)
	found, err := server.CountLibrary(ctx, `"quokka"`, research.YearRange{})
	require.NoError(t, err)
	require.Equal(t, n, found)
	requireIndexAsBuiltAfresh(t, server, path, `"quokka"`, `"quokka" AND "field"`)
}

// TestBulkReimportReplacesIndexEntries: a bulk import that changes papers
// already in the library replaces their index entries batch by batch: the
// new words are found, the old ones are not, and the index stays whole.
func TestBulkReimportReplacesIndexEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lib.db")
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", MergeRows: 7})
	require.NoError(t, err)
	defer st.Close()
	batch := func(abstract string) []library.Record {
		recs := make([]library.Record, 60)
		for i := range recs {
			recs[i] = paper(fmt.Sprintf("Echidna paper %d", i), abstract, 2019, fmt.Sprintf("10.8/e%d", i))
		}
		return append(recs, recs[3]) // the same paper twice in one file
	}
	stats, err := library.Import(ctx, st, stream(batch("burrowing behaviour")...), library.ImportOptions{BatchSize: 10})
	require.NoError(t, err)
	require.Equal(t, 60, stats.Inserted)
	// With the index built, the second import's batches are followed as
	// they commit (followLibraryIndex) and the rest at its end.
	require.NoError(t, st.WarmLibraryIndex(ctx))
	stats, err = library.Import(ctx, st, stream(batch("electroreception in monotremes")...), library.ImportOptions{BatchSize: 10})
	require.NoError(t, err)
	require.Equal(t, 0, stats.Inserted)
	require.Equal(t, 61, stats.Updated+stats.Unchanged)

	requireIndexAsBuiltAfresh(t, st, path, `"echidna"`, `"electroreception" OR "burrowing"`, `"monotremes" NOT "paper"`)
	require.Len(t, search(t, st, "electroreception"), 50, "search returns its limit of the 60 updated papers")
	require.Empty(t, search(t, st, "burrowing"), "the old abstracts' words are gone from the index")
}

// TestImportThatFillsTheDiskClearsItsStage: an import stopped by a full
// disk (here the database's size cap, which fails the same way) says so
// (fault code storage_full) and deletes what it staged at once, giving
// the space back, instead of leaving it for a day.
func TestImportThatFillsTheDiskClearsItsStage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lib.db")
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", MaxBytes: 2 << 20})
	require.NoError(t, err)
	defer st.Close()
	recs := make([]library.Record, 4000)
	for i := range recs {
		recs[i] = paper(fmt.Sprintf("Platypus survey %d", i), strings.Repeat("venom spur anatomy ", 40), 2018, fmt.Sprintf("10.7/p%d", i))
	}
	stats, err := library.Import(ctx, st, stream(recs...), library.ImportOptions{BatchSize: 200})
	require.Error(t, err)
	require.Equal(t, fault.EStorageFull, fault.ErrorCode(err), "%v", err)
	require.Contains(t, fault.ErrorMessage(err), "the disk holding the database is full")
	require.Equal(t, "nothing was imported, the library is as it was", stats.Outcome())

	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	var staged int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM import_staging`).Scan(&staged))
	require.Zero(t, staged, "the stage is cleared as the import fails")
	var free int
	require.NoError(t, raw.QueryRow(`PRAGMA freelist_count`).Scan(&free))
	require.Positive(t, free, "its pages are free for the next writes")
}
