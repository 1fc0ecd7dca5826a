package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// TestRunsKeepTheirWorkflowSource: a run created with a definition's text
// stores it by hash in the run's transaction; runs of one text share it,
// and an unknown hash is not found.
func TestRunsKeepTheirWorkflowSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openRuns(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src := &engine.Source{Hash: "abc", Name: "pin", Version: 3, File: "pin.yaml", Text: "apiVersion: quarry/v1\n"}
	for _, id := range []string{"r1", "r2"} {
		require.NoError(t, st.CreateRun(ctx, engine.Run{ID: id, Workflow: "pin", Status: engine.StatusPending, Iteration: 1,
			CreatedAt: at, UpdatedAt: at, Source: src}))
	}
	got, err := st.WorkflowSource(ctx, "abc")
	require.NoError(t, err)
	require.Equal(t, *src, got)
	_, err = st.WorkflowSource(ctx, "nope")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))

	// A run that cannot be created keeps no text.
	dup := *src
	dup.Hash = "def"
	require.Error(t, st.CreateRun(ctx, engine.Run{ID: "r1", Workflow: "pin", Status: engine.StatusPending, Iteration: 1,
		CreatedAt: at, UpdatedAt: at, Source: &dup}))
	_, err = st.WorkflowSource(ctx, "def")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
}
