package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// quarry workflow trigger-token prints a webhook trigger's token, and
// --rotate replaces it; a trigger the server never saw has none.
func TestWorkflowTriggerTokenCommand(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "q.db")
	env := dbEnv(t, db, nil)
	st, err := openStore(t, t.Context(), db)
	require.NoError(t, err)
	first, err := st.TriggerToken(t.Context(), "intake", "new-papers", "first-token")
	require.NoError(t, err)
	require.NoError(t, st.Close())

	got := quarry(t, "", env, "workflow", "trigger-token", "intake", "new-papers")
	require.Equal(t, 0, got.code, got.stderr)
	require.Equal(t, first+"\n", got.stdout)

	got = quarry(t, "", env, "workflow", "trigger-token", "--rotate", "intake", "new-papers")
	require.Equal(t, 0, got.code, got.stderr)
	rotated := strings.TrimSpace(got.stdout)
	require.NotEqual(t, first, rotated)
	require.GreaterOrEqual(t, len(rotated), 40)
	got = quarry(t, "", env, "workflow", "trigger-token", "intake", "new-papers")
	require.Equal(t, rotated+"\n", got.stdout, "the rotated token is the one kept")

	got = quarry(t, "", env, "workflow", "trigger-token", "intake", "other")
	require.Equal(t, 1, got.code)
	require.Contains(t, got.stderr, "has no webhook trigger other")
	got = quarry(t, "", env, "workflow", "trigger-token", "intake")
	require.Equal(t, 2, got.code)
}
