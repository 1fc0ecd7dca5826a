package flow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// A definition that declares backup: true has the database backed up
// before each run's first stage: a backup row names the run, its file
// passes the integrity check, and it holds the run as it was before
// its first stage (pending, nothing run).
func TestBackupBeforeADeclaredRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const src = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: careful}
backup: true
stages:
  - {id: a, type: set, set: {x: "1"}}
`
	b := setup(t, "", nil, compile(t, src, nil))
	r := b.run(t, "careful", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	list, err := b.store.Backups(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, store.BackupRun, list[0].Reason)
	require.Equal(t, r.ID, list[0].RunID)
	require.Positive(t, list[0].Size)
	if storetest.OnPostgres() {
		// pg_dump's archive: pg_restore reads it (store's TestPostgresBackup).
		require.True(t, strings.HasSuffix(list[0].Path, ".dump"), list[0].Path)
		return
	}
	require.NoError(t, store.CheckBackupFile(ctx, list[0].Path))
	db, err := store.OpenRaw(list[0].Path, "")
	require.NoError(t, err)
	defer db.Close()
	var status string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, r.ID).Scan(&status))
	require.Equal(t, "pending", status)

	// Without backup: true, no backup.
	const plain = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: plain}
stages:
  - {id: a, type: set, set: {x: "1"}}
`
	b2 := setup(t, "", nil, compile(t, plain, nil))
	r = b2.run(t, "plain", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	list, err = b2.store.Backups(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}
