package dbcopy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/store"
	"quarry/internal/store/dbcopy"
)

// BenchmarkCopyLibrary copies a library of the size Quarry is built for
// (170,000 papers with 1 KB abstracts) into a new database per iteration.
// On the shared 2-core test machine one Copy took 37 to 53 s, the
// verification included (5 to 10 s); loading the papers, whose generated
// tsvector PostgreSQL computes per row, is most of the rest.
func BenchmarkCopyLibrary(b *testing.B) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "q.db")
	st, err := store.Open(ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(b, err)
	require.NoError(b, st.Close())
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(b, err)
	abstract := strings.Repeat("sleep spindles consolidate memory in the hippocampus; ", 20)
	_, err = raw.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 170000)
		INSERT INTO papers (id, title, authors, year, abstract, imported_at, compounds)
		SELECT 'p:' || i, 'Paper ' || i || ' on sleep', '["A, B","C, D"]', 1990 + i % 30, ? || i, '2025-01-01T00:00:00Z', '' FROM n`, abstract)
	require.NoError(b, err)
	require.NoError(b, raw.Close())
	src, err := dbcopy.OpenSQLite(path)
	require.NoError(b, err)
	defer src.Close()
	for b.Loop() {
		b.StopTimer()
		url := pg.NewDatabase(b)
		b.StartTimer()
		_, err := dbcopy.Copy(ctx, src, url, dbcopy.Options{})
		require.NoError(b, err)
	}
}
