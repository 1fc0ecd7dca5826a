package store_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/store"
	"quarry/migrations"
)

func openLibrary(t testing.TB) *store.Store {
	t.Helper()
	st, _ := openLibraryFile(t)
	return st
}

// openLibraryFile is openLibrary that also says where the database is, for
// tests that look at it through a raw connection.
func openLibraryFile(t testing.TB) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lib.db")
	st, err := store.Open(context.Background(), path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, path
}

// stream yields recs in order, then io.EOF.
func stream(recs ...library.Record) library.Next {
	i := 0
	return func() (library.Record, error) {
		if i == len(recs) {
			return library.Record{}, io.EOF
		}
		i++
		r := recs[i-1]
		if r.Line == 0 {
			r.Line = i
		}
		return r, nil
	}
}

func paper(title, abstract string, year int, doi string) library.Record {
	p := research.RawPaper{Title: title, Abstract: abstract, Year: year, DOI: doi, Authors: []string{"Ada Lovelace", "Alan Turing"}, Venue: "NeurIPS"}
	p.ID = research.StableID(p)
	return library.Record{Paper: p, Origin: "test.jsonl"}
}

func search(t *testing.T, st *store.Store, q string) []string {
	t.Helper()
	ps, err := st.SearchLibrary(context.Background(), q, research.YearRange{}, 50)
	require.NoError(t, err)
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

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
			stale, err := st.LibraryIndexStale(ctx)
			require.NoError(t, err)
			require.False(t, stale)
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

func TestSearchLibraryRanksFiltersAndLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	inTitle := paper("Transformers for protein folding", "We study structure.", 2021, "10.2/t")
	inAbstract := paper("A study of structure prediction", "We use transformers for proteins.", 2021, "10.2/a")
	old := paper("Transformers in 1999", "Early transformers.", 1999, "10.2/o")
	noYear := paper("Transformers without a year", "Undated.", 0, "10.2/n")
	_, err := library.Import(ctx, st, stream(inAbstract, inTitle, old, noYear), library.ImportOptions{})
	require.NoError(t, err)

	tests := []struct {
		name  string
		match string
		years research.YearRange
		limit int
		want  []string
	}{
		{"TitleBeatsAbstract", `"protein" AND "transformers"`, research.YearRange{}, 10, []string{inTitle.Paper.ID, inAbstract.Paper.ID}},
		{"PorterStemming", `"folded"`, research.YearRange{}, 10, []string{inTitle.Paper.ID}},
		{"YearRangeKeepsUnknownYear", `"transformers"`, research.YearRange{From: 2020, To: 2022}, 10, []string{inTitle.Paper.ID, inAbstract.Paper.ID, noYear.Paper.ID}},
		{"YearTo", `"transformers"`, research.YearRange{To: 2000}, 10, []string{old.Paper.ID, noYear.Paper.ID}},
		{"Limit", `"protein" AND "transformers"`, research.YearRange{}, 1, []string{inTitle.Paper.ID}},
		{"Not", `"transformers" NOT "protein" NOT "proteins"`, research.YearRange{From: 2000}, 10, []string{noYear.Paper.ID}},
		{"NoMatch", `"nothing-here-at-all"`, research.YearRange{}, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := st.SearchLibrary(ctx, tt.match, tt.years, tt.limit)
			require.NoError(t, err)
			var ids []string
			for _, p := range got {
				ids = append(ids, p.ID)
			}
			if tt.name == "YearRangeKeepsUnknownYear" || tt.name == "YearTo" {
				require.ElementsMatch(t, tt.want, ids)
				return
			}
			require.Equal(t, tt.want, ids)
		})
	}
	got, err := st.SearchLibrary(ctx, `"folding"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, inTitle.Paper, got[0], "every stored field comes back")
}

func TestSearchLibraryRejectsBadSyntaxAsInvalid(t *testing.T) {
	t.Parallel()
	st := openLibrary(t)
	_, err := library.Import(context.Background(), st, stream(paper("Anything", "", 2020, "")), library.ImportOptions{})
	require.NoError(t, err)
	for _, match := range []string{`"unclosed`, `a AND`, `(a OR b`, `title:`, `nosuchcol:x`, `NEAR(`, `*`, ``, `   `, `a) OR (b`, `^`} {
		t.Run(match, func(t *testing.T) {
			t.Parallel()
			_, err := st.SearchLibrary(context.Background(), match, research.YearRange{}, 10)
			require.Error(t, err)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
		})
	}
	_, err = st.SearchLibrary(context.Background(), `"anything"`, research.YearRange{}, 0)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

// TestInterruptedImportLeavesNothing: a bulk import cancelled while its
// second batch is read, or cut short by a broken file, leaves the library
// as it was — no rows, nothing staged — and importing again works.
func TestInterruptedImportLeavesNothing(t *testing.T) {
	t.Parallel()
	recs := []library.Record{
		paper("First quokka paper", "", 2020, "10.3/1"),
		paper("Second quokka paper", "", 2020, "10.3/2"),
		paper("Third quokka paper", "", 2020, "10.3/3"),
	}
	for name, fail := range map[string]func(cancel context.CancelFunc, ctx context.Context) error{
		"Cancelled": func(cancel context.CancelFunc, ctx context.Context) error {
			cancel() // the user presses ^C while the second batch is read
			return ctx.Err()
		},
		"BrokenFile": func(context.CancelFunc, context.Context) error { return errors.New("unexpected EOF in gzip stream") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, path := openLibraryFile(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			next := func() (library.Record, error) {
				if n == 2 {
					return library.Record{}, fail(cancel, ctx)
				}
				n++
				return recs[n-1], nil
			}
			stats, err := library.Import(ctx, st, next, library.ImportOptions{BatchSize: 1})
			require.Error(t, err)
			require.Equal(t, 2, stats.Read, "the records read are reported")
			require.Zero(t, stats.Inserted+stats.Updated, "but none reached the library")

			bg := context.Background()
			count, err := st.LibraryCount(bg)
			require.NoError(t, err)
			require.Zero(t, count)
			raw, err := store.OpenRaw(path, "OFF")
			require.NoError(t, err)
			defer raw.Close()
			var staged int
			require.NoError(t, raw.QueryRow(`SELECT count(*) FROM import_staging`).Scan(&staged))
			require.Zero(t, staged, "the stage is cleared")

			stats, err = library.Import(bg, st, stream(recs...), library.ImportOptions{BatchSize: 1})
			require.NoError(t, err)
			require.Equal(t, 3, stats.Inserted)
			require.Len(t, search(t, st, `"quokka"`), 3, "a bulk import is searchable once it returns")
		})
	}
}

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

// TestAbandonedStagingIsClearedOnOpen: rows staged by a process that died
// mid-import are deleted by a later Open once they are old enough.
func TestAbandonedStagingIsClearedOnOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lib.db")
	st, err := store.Open(context.Background(), path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	insert := `INSERT INTO import_staging (import_id, seq, staged_at, id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, volume, issue, pages)
		VALUES (?, 1, ?, 'x', 'X', '[]', 0, '', '', '', '', '', '', '', '', '', '')`
	_, err = raw.Exec(insert, "dead", time.Now().Add(-48*time.Hour).UTC().Format(time.RFC3339Nano))
	require.NoError(t, err)
	_, err = raw.Exec(insert, "live", time.Now().UTC().Format(time.RFC3339Nano))
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	st, err = store.Open(context.Background(), path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err = store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	var ids []string
	rows, err := raw.Query(`SELECT import_id FROM import_staging`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"live"}, ids, "a young stage may belong to an import still running elsewhere")
}

// FuzzSearchLibrary checks that no string, sent directly or through the
// query language and its local renderer, fails a library search with
// anything but EInvalid, and that whatever the renderer produces is always
// accepted.
func FuzzSearchLibrary(f *testing.F) {
	st := openLibrary(f)
	_, err := library.Import(context.Background(), st, stream(
		paper("Machine learning for sepsis", "Septic shock in children.", 2020, "10.5/1"),
		paper("Case report: NEAR miss", `A "quoted" abstract with title:colons and stars*`, 2019, "10.5/2"),
	), library.ImportOptions{})
	require.NoError(f, err)
	for _, seed := range []string{
		`"machine learning" (sepsis OR "septic shock") -mice NOT (rats OR "case report")`,
		`title:x NEAR/3 y* ^z`, `"unclosed`, `a OR`, `NEAR(a b, 2)`, "a\x00b", "\xff", `{title abstract}: x`,
		`"OR" -"-x"`, `-`, `()`, `a AND NOT b`, `col:"x"`, `x + y`, `"" x`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ctx := context.Background()
		if _, err := st.SearchLibrary(ctx, in, research.YearRange{}, 5); err != nil {
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "direct %q: %v", in, err)
		}
		q, err := query.Parse(in)
		if err != nil {
			return
		}
		match := query.RenderAll(q, []string{query.Local})[query.Local]
		if match == "" {
			return
		}
		_, err = st.SearchLibrary(ctx, match, research.YearRange{}, 5)
		require.NoError(t, err, "rendered %q from %q", match, in)
	})
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
