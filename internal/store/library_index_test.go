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

// TestIndexFollowsAnotherProcess: a server's in-memory index follows what
// another process (`quarry import` beside it) writes to the library:
// papers it inserts, changes and deletes are found, found by their new
// words, and gone, at the server's next search.
func TestIndexFollowsAnotherProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	server, path := openLibraryFile(t)
	a, b := paper("Quokka ecology", "Rottnest Island.", 2020, "10.6/a"), paper("Wombat burrows", "", 2019, "10.6/b")
	_, err := library.Import(ctx, server, stream(a, b), library.ImportOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{a.Paper.ID}, search(t, server, `"quokka"`))

	other, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer other.Close()
	c := paper("Quokka diet", "", 2021, "10.6/c")
	changed := b
	changed.Paper.Title = "Wombat and quokka burrows"
	_, err = library.Import(ctx, other, stream(c, changed), library.ImportOptions{})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{a.Paper.ID, b.Paper.ID, c.Paper.ID}, search(t, server, `"quokka"`))

	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Exec(`DELETE FROM papers WHERE id = ?`, a.Paper.ID)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{b.Paper.ID, c.Paper.ID}, search(t, server, `"quokka"`))
	require.Empty(t, search(t, server, `"rottnest"`))
	requireIndexAsBuiltAfresh(t, server, path, `"quokka"`, `"wombat" OR "diet"`, `"burrows" NOT "quokka"`)
}

// TestIndexRebuildsWhenTheLogWasPruned: an index whose last applied log
// entry is older than the oldest one left (a process that slept through
// a large import, after which the log was pruned) cannot replay the
// changes and rebuilds from the papers table, so nothing written meanwhile
// is missed.
func TestIndexRebuildsWhenTheLogWasPruned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	server, path := openLibraryFile(t)
	_, err := library.Import(ctx, server, stream(paper("Quokka ecology", "", 2020, "10.7/a")), library.ImportOptions{})
	require.NoError(t, err)
	require.Len(t, search(t, server, `"quokka"`), 1)

	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	var applied int64
	require.NoError(t, raw.QueryRow(`SELECT max(seq) FROM library_log`).Scan(&applied))
	for _, id := range []string{"p-missed", "p-kept"} {
		_, err = raw.Exec(`INSERT INTO papers (id, title, compounds, imported_at) VALUES (?, 'Quokka survey', '', '2026-01-01T00:00:00Z')`, id)
		require.NoError(t, err)
	}
	_, err = raw.Exec(`DELETE FROM library_log WHERE seq <= ?`, applied+1)
	require.NoError(t, err)
	require.Len(t, search(t, server, `"quokka"`), 3, "the paper whose log entry was pruned is found too")
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

			requireIndexAsBuiltAfresh(t, st, path, `"pretraining"`, `"pre training"`, `"finetuning" OR "training"`, `"deep"`)
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
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", Migrations: old})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	_, err = raw.Exec(`INSERT INTO papers (id, title, abstract, imported_at) VALUES ('p1', 'Self-supervised pre-training', '', '2026-01-01T00:00:00Z')`)
	require.NoError(t, err)
	_, err = raw.Exec(`INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	st, err = store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer st.Close()
	require.Equal(t, []string{"p1"}, search(t, st, `"pretraining"`))
	require.Equal(t, []string{"p1"}, search(t, st, `"self supervised"`), "the old columns are indexed too")
}
