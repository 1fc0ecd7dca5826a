package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
)

// TestRunAPIShowsGateChecksAndStageAttempts: GET /api/runs/:id of a
// workflow file's run lists its gate's checks (type, config, passed,
// result, time) and each stage's max_attempts next to its attempts.
func TestRunAPIShowsGateChecksAndStageAttempts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "checked.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: checked}
params:
  - {name: n, type: int, required: true}
stages:
  - id: prepare
    type: set
    set: {twice: "params.n * 2"}
    on_error: {retry: 2}
  - id: approve
    type: gate
    conditions: ["context.twice > 4"]
    options:
      - {label: Done, next: complete}
`), 0o644))
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir})
	require.NoError(t, err)
	w := serveApp(t, a)
	created := w.startAPIRun(t, map[string]any{"workflow": "checked", "params": map[string]any{"n": 3}})
	var run handlers.RunJSON
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "waiting" && run.Checkpoint != nil
	}, 10*time.Second, 20*time.Millisecond)

	require.Len(t, run.GateChecks, 1)
	c := run.GateChecks[0]
	require.Equal(t, "approve", c.Stage)
	require.Equal(t, "condition", c.Type)
	require.Equal(t, "context.twice > 4", c.Config)
	require.True(t, c.Passed)
	require.JSONEq(t, "true", string(c.Result))
	require.Equal(t, 1, c.Iteration)
	require.WithinDuration(t, time.Now(), c.CheckedAt, time.Minute)

	byID := map[string][3]any{}
	for _, s := range run.Stages {
		byID[s.ID] = [3]any{s.State, s.Attempts, s.MaxAttempts}
	}
	require.Equal(t, map[string][3]any{"prepare": {"completed", 1, 3}, "approve": {"waiting", 0, 1}}, byID)
}
