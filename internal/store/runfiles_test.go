package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/store"
)

func TestRunFilesBelongToTheirRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), store.Options{})
	require.NoError(t, err)
	defer s.Close()
	now := time.Now().UTC()
	for _, id := range []string{"run-a", "run-b"} {
		require.NoError(t, s.CreateRun(ctx, engine.Run{ID: id, Workflow: "search", Status: engine.StatusPending, Iteration: 1, CreatedAt: now, UpdatedAt: now, State: engine.State{}}))
	}
	papers := []research.RawPaper{{ID: "doi:10.1/x", Title: "X", Authors: []string{"A B"}, Year: 2020, DOI: "10.1/x", Source: "embase.ris"}}
	f, err := s.AttachRunFile(ctx, store.RunFile{RunID: "run-a", Name: "embase.ris", Format: "ris", Papers: papers,
		Skipped: []research.RecordError{{Line: 12, Reason: "missing title"}}, UploadedBy: "Ada"})
	require.NoError(t, err)
	require.NotEmpty(t, f.ID)

	got, err := s.RunFilePapers(ctx, "run-a", f.ID)
	require.NoError(t, err)
	require.Equal(t, papers, got)

	_, err = s.RunFilePapers(ctx, "run-b", f.ID)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "another run cannot read the file")
	_, err = s.AttachRunFile(ctx, store.RunFile{RunID: "nope", Name: "x.ris", Format: "ris"})
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
}
