package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// TestStepTrailLeavesLargeOutputsOut: the trail pages and polls read keeps
// small outputs and only the size of large ones, in order; StepRuns keeps
// every output whole.
func TestStepTrailLeavesLargeOutputsOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openRuns(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := seedRun(t, st, "r1", at, engine.Params{}, engine.StatusRunning, 1)
	big := json.RawMessage(`{"papers":"` + strings.Repeat("é", engine.MaxShownOutput/2) + `"}`) // bytes, not characters, count
	for i, out := range []json.RawMessage{json.RawMessage(`{"n":1}`), big, nil} {
		next := r
		next.Step = []string{"a", "b", "c"}[i]
		rec := engine.StepRecord{RunID: "r1", Step: next.Step, Iteration: 1, Attempt: 1, Outcome: "ok", StartedAt: at, FinishedAt: at, Output: out}
		var err error
		r, err = st.Commit(ctx, engine.Commit{Run: next, From: r.Status, Step: &rec})
		require.NoError(t, err)
	}
	trail, err := st.StepTrail(ctx, "r1")
	require.NoError(t, err)
	require.Len(t, trail, 3)
	require.Equal(t, []string{"a", "b", "c"}, []string{trail[0].Step, trail[1].Step, trail[2].Step})
	require.JSONEq(t, `{"n":1}`, string(trail[0].Output))
	require.Zero(t, trail[0].OutputSize)
	require.Nil(t, trail[1].Output, "over MaxShownOutput bytes")
	require.Equal(t, len(big), trail[1].OutputSize)
	require.Nil(t, trail[2].Output)
	require.Zero(t, trail[2].OutputSize)

	whole, err := st.StepRuns(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, string(big), string(whole[1].Output))
}
