package store_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
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
	st, err := store.OpenForTest(t, context.Background(), path, store.Options{Synchronous: "OFF"})
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

// requireIndexAsBuiltAfresh checks that st's full-text index, which
// followed the writes made through it, answers each query as an index
// built from the table in a process of its own does: the same papers,
// the same ranks, the same bm25 scores.
func requireIndexAsBuiltAfresh(t *testing.T, st *store.Store, path string, queries ...string) {
	t.Helper()
	ctx := context.Background()
	fresh, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer fresh.Close()
	for _, q := range queries {
		want, err := fresh.LibraryHits(ctx, q, research.YearRange{}, 10, 1000)
		require.NoError(t, err, q)
		got, err := st.LibraryHits(ctx, q, research.YearRange{}, 10, 1000)
		require.NoError(t, err, q)
		require.Equal(t, want, got, "query %s", q)
	}
}
