package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
)

func TestImportPapersIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{0, 2} { // one small transaction; bulk with rebuild
		t.Run(map[int]string{0: "Small", 2: "Bulk"}[batch], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := openLibrary(t)
			recs := []library.Record{
				paper("Sepsis prediction with gradient boosting", "We predict sepsis in intensive care.", 2020, "10.1/a"),
				paper("Graph neural networks for molecules", "Message passing on molecular graphs.", 2019, "10.1/b"),
				paper("Diffusion models for image synthesis", "Denoising diffusion beats GANs.", 2021, ""),
				{Problem: "malformed JSON"},
				{Skip: "status Reject"},
			}
			var progress []library.Progress
			stats, err := library.Import(ctx, st, stream(recs...), library.ImportOptions{BatchSize: batch, Progress: func(p library.Progress) { progress = append(progress, p) }})
			require.NoError(t, err)
			require.Equal(t, 5, stats.Read)
			require.Equal(t, 3, stats.Inserted)
			require.Equal(t, 0, stats.Updated)
			require.Equal(t, 2, stats.Skipped)
			require.Equal(t, map[string]int{"malformed JSON": 1, "status Reject": 1}, stats.SkipReasons)
			require.Equal(t, []research.RecordError{{Origin: "", Line: 4, Reason: "malformed JSON"}}, stats.Errors)
			require.NotEmpty(t, progress)
			require.Equal(t, batch > 0, progress[len(progress)-1].Indexing, "bulk imports report the index build")

			// Again, unchanged: nothing reads as updated.
			stats, err = library.Import(ctx, st, stream(recs[:3]...), library.ImportOptions{BatchSize: batch})
			require.NoError(t, err)
			require.Equal(t, 0, stats.Inserted)
			require.Equal(t, 0, stats.Updated)
			require.Equal(t, 3, stats.Unchanged)

			// Again, with one record corrected and one missing a field it
			// had (which keeps the stored value, so changes nothing).
			fixed := paper("Sepsis prediction with gradient boosting", "We predict sepsis in intensive care units.", 2020, "10.1/a")
			sparse := paper("Graph neural networks for molecules", "", 0, "10.1/b")
			stats, err = library.Import(ctx, st, stream(fixed, sparse, recs[2]), library.ImportOptions{BatchSize: batch})
			require.NoError(t, err)
			require.Equal(t, 0, stats.Inserted)
			require.Equal(t, 1, stats.Updated)
			require.Equal(t, 2, stats.Unchanged)
			require.Equal(t, stats.Read, stats.Inserted+stats.Updated+stats.Unchanged+stats.Skipped)
			n, err := st.LibraryCount(ctx)
			require.NoError(t, err)
			require.Equal(t, 3, n)
			require.Equal(t, []string{recs[0].Paper.ID}, search(t, st, `"sepsis"`))
		})
	}
}

func TestImportSameIDTwiceInOneBatchCountsOneInsert(t *testing.T) {
	t.Parallel()
	st := openLibrary(t)
	a := paper("Old title", "x", 2020, "10.1/dup")
	b := paper("New title", "", 0, "10.1/dup")
	stats, err := library.Import(context.Background(), st, stream(a, b), library.ImportOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, stats.Inserted)
	require.Equal(t, 1, stats.Updated)
	got, err := st.SearchLibrary(context.Background(), `"title"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "New title", got[0].Title)
	require.Equal(t, 2020, got[0].Year, "a missing field keeps its old value")
	require.Equal(t, "x", got[0].Abstract)
}

func TestChangedPaperIsFoundByNewTitleOnly(t *testing.T) {
	t.Parallel()
	for _, bulkFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "AfterSmallImport", true: "AfterBulkImport"}[bulkFirst], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := openLibrary(t)
			orig := paper("Zebrafish regeneration atlas", "Fins regrow.", 2018, "10.9/zf")
			other := paper("Unrelated heart study", "Cardiac output.", 2018, "10.9/h")
			opts := library.ImportOptions{}
			if bulkFirst {
				opts.BatchSize = 1
			}
			_, err := library.Import(ctx, st, stream(orig, other), opts)
			require.NoError(t, err)
			require.Equal(t, []string{orig.Paper.ID}, search(t, st, `"zebrafish"`))

			changed := orig.Paper
			changed.Title = "Axolotl limb regeneration atlas"
			isNew, err := library.UpsertPaper(ctx, st, changed, "edit", nil)
			require.NoError(t, err)
			require.False(t, isNew)

			require.Empty(t, search(t, st, `"zebrafish"`), "the old title must leave the index")
			require.Equal(t, []string{orig.Paper.ID}, search(t, st, `"axolotl"`))
			require.Equal(t, []string{orig.Paper.ID}, search(t, st, `"fins"`), "unchanged fields stay indexed")
			require.Equal(t, []string{other.Paper.ID}, search(t, st, `"cardiac"`))
			// The index agrees with its content table.
			_, err = library.Import(ctx, st, stream(), library.ImportOptions{})
			require.NoError(t, err)
		})
	}
}

// TestReimportMergesExtra: a record read back from a format with no place
// for a corpus's own fields (arXiv categories in RIS) keeps them, counts
// as unchanged when it brings nothing new, and adds what it brings.
func TestReimportMergesExtra(t *testing.T) {
	t.Parallel()
	for _, bulk := range []bool{false, true} {
		st := openLibrary(t)
		opts := library.ImportOptions{}
		if bulk {
			opts.BatchSize = 1
		}
		ctx := context.Background()
		p := paper("Sleep spindles", "x", 2020, "10.1/s")
		orig := p
		orig.Extra = []byte(`{"categories":["q-bio.NC","cs.LG"],"type":"article"}`)
		_, err := library.Import(ctx, st, stream(orig), opts)
		require.NoError(t, err)

		back := p
		back.Extra = []byte(`{"type":"article"}`)
		stats, err := library.Import(ctx, st, stream(back), opts)
		require.NoError(t, err)
		require.Equal(t, 1, stats.Unchanged, "bulk=%v: %+v", bulk, stats)

		more := p
		more.Extra = []byte(`{"type":"article","publisher":"Elsevier"}`)
		stats, err = library.Import(ctx, st, stream(more), opts)
		require.NoError(t, err)
		require.Equal(t, 1, stats.Updated, "bulk=%v: %+v", bulk, stats)
		got, err := st.LibraryPaperByID(ctx, "doi:10.1/s")
		require.NoError(t, err)
		require.JSONEq(t, `{"categories":["q-bio.NC","cs.LG"],"type":"article","publisher":"Elsevier"}`, string(got.Extra))
	}
}
