package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestRunStamp: a run's stamp is its version and no marks; an unknown
// run is ENotFound. (Its moving with commits and marks is checked through
// the pages that rely on it: handlers' TestRunReadsFollowChanges.)
func TestRunStamp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), store.Options{})
	require.NoError(t, err)
	defer st.Close()

	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, st.CreateRun(ctx, engine.Run{ID: "r1", Workflow: "w", Status: engine.StatusPending, Version: 3,
		CreatedAt: now, UpdatedAt: now}))
	got, err := st.RunStamp(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, store.RunStamp{Version: 3}, got)

	_, err = st.RunStamp(ctx, "nope")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
}
