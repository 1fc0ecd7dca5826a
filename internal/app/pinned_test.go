package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

const pinV1 = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: pin, version: 1}
stages:
  - id: ask
    type: gate
    options:
      - {label: Go, next: mark}
  - id: mark
    type: set
    set: {result: "'v1'"}
`

// pinV2 sets another value and adds a stage after it.
const pinV2 = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: pin, version: 2}
stages:
  - id: ask
    type: gate
    options:
      - {label: Go, next: mark}
  - id: mark
    type: set
    set: {result: "'v2'"}
  - id: after
    type: set
    set: {extra: "'only in v2'"}
`

func openPinApp(t *testing.T, dir, db string) *app.App {
	t.Helper()
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: db, WorkflowsDir: dir})
	require.NoError(t, err)
	return a
}

// waitRun polls the store until the run satisfies ok.
func waitRun(t *testing.T, a *app.App, id string, ok func(engine.Run) bool) engine.Run {
	t.Helper()
	var r engine.Run
	require.Eventually(t, func() bool {
		var err error
		r, err = a.Store().Run(context.Background(), id)
		require.NoError(t, err)
		return ok(r)
	}, 20*time.Second, 20*time.Millisecond)
	return r
}

func atGate(r engine.Run) bool { return r.Status == engine.StatusWaiting && r.CheckpointID != "" }
func ended(r engine.Run) bool  { return r.IsComplete() }

func decideAndFinish(t *testing.T, a *app.App, r engine.Run) map[string]any {
	t.Helper()
	require.NoError(t, a.Engine().Decide(context.Background(), r.ID, r.CheckpointID, flow.Choose("Go", "", "ada")))
	done := waitRun(t, a, r.ID, ended)
	require.Equal(t, engine.StatusCompleted, done.Status, done.Error)
	cx, err := flow.Context(done.State)
	require.NoError(t, err)
	return cx
}

// TestRunsFinishByTheTextTheyStartedWith: a run of a definition file
// stopped at its gate is finished by that file's text after a restart
// with the file edited (v2) or removed; a new run follows the edit. The
// text is kept in the store with the run.
func TestRunsFinishByTheTextTheyStartedWith(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "pin.yaml")
	db := filepath.Join(t.TempDir(), "q.db")
	require.NoError(t, os.WriteFile(file, []byte(pinV1), 0o644))

	a := openPinApp(t, dir, db)
	old, err := a.Engine().Start(context.Background(), "pin", nil)
	require.NoError(t, err)
	old = waitRun(t, a, old.ID, atGate)
	gone, err := a.Engine().Start(context.Background(), "pin", nil)
	require.NoError(t, err)
	gone = waitRun(t, a, gone.ID, atGate)
	stamp, ok, err := flow.RunStamp(old.State)
	require.NoError(t, err)
	require.True(t, ok)
	src, err := a.Store().WorkflowSource(context.Background(), stamp.Hash)
	require.NoError(t, err)
	require.Equal(t, pinV1, src.Text)
	require.Equal(t, "pin.yaml", src.File)
	require.Equal(t, 1, src.Version)
	require.NoError(t, a.Close())

	// Edited: the old run finishes by v1, a new one runs v2.
	require.NoError(t, os.WriteFile(file, []byte(pinV2), 0o644))
	a = openPinApp(t, dir, db)
	wf, err := a.Engine().Workflow(context.Background(), old)
	require.NoError(t, err)
	require.Len(t, wf.Steps, 2, "pages draw the old run's stages by v1 too")
	cx := decideAndFinish(t, a, old)
	require.Equal(t, "v1", cx["result"])
	require.NotContains(t, cx, "extra", "v1 has no stage after mark")
	fresh, err := a.Engine().Start(context.Background(), "pin", nil)
	require.NoError(t, err)
	fresh = waitRun(t, a, fresh.ID, atGate)
	cx = decideAndFinish(t, a, fresh)
	require.Equal(t, "v2", cx["result"])
	require.Equal(t, "only in v2", cx["extra"])
	require.NoError(t, a.Close())

	// Removed: a run of it still finishes, by its own text.
	require.NoError(t, os.Remove(file))
	a = openPinApp(t, dir, db)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	_, err = a.Engine().Start(context.Background(), "pin", nil)
	require.Error(t, err, "no file, no new runs")
	cx = decideAndFinish(t, a, gone)
	require.Equal(t, "v1", cx["result"])
}
