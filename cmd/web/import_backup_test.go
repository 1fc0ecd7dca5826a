package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// quarry import of a bulk load (more records than one batch) backs the
// database up before it merges them: a backup with reason import, which
// passes the integrity check and holds the library as it was.
func TestBulkImportCommandBacksUpFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	env := dbEnv(t, db, nil)
	var b strings.Builder
	for i := range library.DefaultBatchSize + 1 {
		fmt.Fprintf(&b, `{"title":"Quokka study number %d","authors":["A. Author"],"year":2020,"doi":"10.9999/q.%d"}`+"\n", i, i)
	}
	file := filepath.Join(dir, "many.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	got := quarry(t, "", env, "import", file)
	require.Equal(t, 0, got.code, got.stderr)

	st, err := openStore(t, t.Context(), db)
	require.NoError(t, err)
	defer st.Close()
	list, err := st.Backups(t.Context())
	require.NoError(t, err)
	if storetest.OnPostgres() {
		// Backups are SQLite's (VACUUM INTO); PostgreSQL imports without.
		require.Empty(t, list)
	} else {
		require.Len(t, list, 1)
		require.Equal(t, store.BackupImport, list[0].Reason)
		require.NoError(t, store.CheckBackupFile(t.Context(), list[0].Path))
	}
	n, err := st.LibraryCount(t.Context())
	require.NoError(t, err)
	require.Equal(t, library.DefaultBatchSize+1, n)
}
