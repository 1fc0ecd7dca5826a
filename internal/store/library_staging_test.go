package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/store"
)

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
			raw, err := store.RawForTest(t, path, "OFF")
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

// TestAbandonedStagingIsClearedOnOpen: rows staged by a process that died
// mid-import are deleted by a later Open once they are old enough.
func TestAbandonedStagingIsClearedOnOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lib.db")
	st, err := store.OpenForTest(t, context.Background(), path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err := store.RawForTest(t, path, "OFF")
	require.NoError(t, err)
	insert := `INSERT INTO import_staging (import_id, seq, staged_at, id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, volume, issue, pages)
		VALUES (?, 1, ?, 'x', 'X', '[]', 0, '', '', '', '', '', '', '', '', '', '')`
	_, err = raw.Exec(insert, "dead", time.Now().Add(-48*time.Hour).UTC().Format(time.RFC3339Nano))
	require.NoError(t, err)
	_, err = raw.Exec(insert, "live", time.Now().UTC().Format(time.RFC3339Nano))
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	st, err = store.OpenForTest(t, context.Background(), path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	raw, err = store.RawForTest(t, path, "OFF")
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
