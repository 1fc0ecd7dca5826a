package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/skills/query"
	"quarry/internal/store"
	"quarry/migrations"
)

// TestStaleIndexIsRebuiltByAnImport: a row-by-row write into a stale
// index (its entries cannot be replaced) is refused, and an import of even
// one record then takes the bulk path, whose rebuild makes it fresh.
func TestStaleIndexIsRebuiltByAnImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, path := openLibraryFile(t)
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Exec(`UPDATE library_index SET stale = 1`)
	require.NoError(t, err)

	rec := paper("Stale index quokka", "", 2020, "10.6/s")
	_, err = st.WritePapers(ctx, []store.ImportPaper{{RawPaper: rec.Paper, Origin: rec.Origin, Line: 1}})
	require.ErrorContains(t, err, "stale")

	var progress []library.Progress
	stats, err := library.Import(ctx, st, stream(rec), library.ImportOptions{Progress: func(p library.Progress) { progress = append(progress, p) }})
	require.NoError(t, err)
	require.Equal(t, 1, stats.Inserted)
	require.True(t, progress[len(progress)-1].Indexing, "the import rebuilt the index")
	require.Equal(t, []string{rec.Paper.ID}, search(t, st, `"quokka"`))
	stale, err := st.LibraryIndexStale(ctx)
	require.NoError(t, err)
	require.False(t, stale)
}

// TestHyphenatedCompoundsMatchEitherSpelling: "pretraining" finds papers
// that write "pre-training" and the other way round, through small and
// bulk imports and through an update that keeps the stored abstract, and
// the index stays consistent with its content table.
func TestHyphenatedCompoundsMatchEitherSpelling(t *testing.T) {
	t.Parallel()
	for _, bulk := range []bool{false, true} {
		t.Run(map[bool]string{false: "SmallImport", true: "BulkImport"}[bulk], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st, path := openLibraryFile(t)
			hyphen := paper("Pre-training deep bidirectional transformers", "We study fine-tuning.", 2019, "10.5/a")
			joined := paper("Pretraining language models at scale", "", 2020, "10.5/b")
			spaced := paper("Pre training of deep networks", "", 2010, "10.5/c")
			other := paper("Training schedules", "Nothing hyphenated here.", 2021, "10.5/d")
			opts := library.ImportOptions{}
			if bulk {
				opts.BatchSize = 1
			}
			_, err := library.Import(ctx, st, stream(hyphen, joined, spaced, other), opts)
			require.NoError(t, err)
			local := func(q string) []string {
				m, err := query.Render(query.Local, query.Words(q))
				require.NoError(t, err)
				return search(t, st, m)
			}
			require.ElementsMatch(t, []string{hyphen.Paper.ID, joined.Paper.ID}, local("pretraining"))
			require.ElementsMatch(t, []string{hyphen.Paper.ID, joined.Paper.ID, spaced.Paper.ID}, local("pre-training"))
			require.Equal(t, []string{hyphen.Paper.ID}, local("finetuning"))

			// A newer record without an abstract keeps the stored one, and
			// with it the stored abstract's compounds.
			changed := hyphen.Paper
			changed.Title, changed.Abstract = "Deep bidirectional transformers, revised", ""
			_, err = library.UpsertPaper(ctx, st, changed, "edit", nil)
			require.NoError(t, err)
			require.Equal(t, []string{hyphen.Paper.ID}, local("finetuning"))
			require.Equal(t, []string{joined.Paper.ID}, local("pretraining"), "the old title's compound left the index")

			raw, err := store.OpenRaw(path, "OFF")
			require.NoError(t, err)
			defer raw.Close()
			_, err = raw.Exec(`INSERT INTO papers_fts (papers_fts) VALUES ('integrity-check')`)
			require.NoError(t, err, "the index agrees with its content table")
		})
	}
}

// TestOpenIndexesCompoundsOfAnOlderLibrary: a library written before the
// compounds column existed is migrated and re-indexed by Open, so its
// hyphenated words are found by their joined spelling at once.
func TestOpenIndexesCompoundsOfAnOlderLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lib.db")
	old := fstest.MapFS{}
	for _, name := range []string{"00001_engine.sql", "00002_library.sql", "00003_paper_locators.sql", "00004_run_files.sql", "00005_import_staging.sql"} {
		data, err := migrations.FS.ReadFile(name)
		require.NoError(t, err)
		old[name] = &fstest.MapFile{Data: data}
	}
	st, err := store.Open(ctx, path, store.Options{Synchronous: "OFF", Migrations: old})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	_, err = raw.Exec(`INSERT INTO papers (id, title, abstract, imported_at) VALUES ('p1', 'Self-supervised pre-training', '', '2026-01-01T00:00:00Z')`)
	require.NoError(t, err)
	_, err = raw.Exec(`INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	st, err = store.Open(ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer st.Close()
	require.Equal(t, []string{"p1"}, search(t, st, `"pretraining"`))
	require.Equal(t, []string{"p1"}, search(t, st, `"self supervised"`), "the old columns are indexed too")
	stale, err := st.LibraryIndexStale(ctx)
	require.NoError(t, err)
	require.False(t, stale)
}
