package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// blockingAt is appendStep, except that at step `at` it signals entered and
// then blocks until its context ends — a worker killed mid-step.
func blockingAt(c *counter, at string, entered chan<- struct{}) engine.Handler {
	inner := appendStep(c)
	return func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		if sc.StepID == at && entered != nil {
			c.inc(sc.StepID + ":interrupted")
			close(entered)
			<-ctx.Done()
			return "", nil, ctx.Err()
		}
		return inner(ctx, sc)
	}
}

func fiveSteps(h engine.Handler) *engine.Workflow {
	wf := linear("five", nil, "a", "b", "c", "d", "e")
	for i := range wf.Steps {
		wf.Steps[i].Handler = h
	}
	return wf
}

// withWorkers opens the database at path with River workers running.
func withWorkers(t *testing.T, path string, handler engine.CheckpointHandler, wf *engine.Workflow) *bundle {
	t.Helper()
	b := setup(t, setupOpts{path: path, handler: handler, wfs: []*engine.Workflow{wf}})
	require.NoError(t, b.store.StartWorkers(context.Background(), b.eng, store.QueueOptions{}))
	_, err := b.eng.Recover(context.Background())
	require.NoError(t, err)
	return b
}

func waitStatus(t *testing.T, b *bundle, id string, want engine.Status) engine.Run {
	t.Helper()
	var r engine.Run
	require.Eventually(t, func() bool {
		var err error
		r, err = b.store.Run(context.Background(), id)
		require.NoError(t, err)
		return r.Status == want
	}, 20*time.Second, 5*time.Millisecond, "run %s never reached %s (last: %s %s)", id, want, r.Status, r.Error)
	return r
}

func TestCrashMidRunResumesFromLastCommittedStep(t *testing.T) {
	t.Parallel()
	// The uninterrupted run, for comparison.
	ref := withWorkers(t, filepath.Join(t.TempDir(), "ref.db"), nil, fiveSteps(appendStep(nil)))
	want := waitStatus(t, ref, ref.start(t, "five", nil).ID, engine.StatusCompleted)

	path := filepath.Join(t.TempDir(), "crash.db")
	c := &counter{}
	entered := make(chan struct{})
	first := setup(t, setupOpts{path: path, wfs: []*engine.Workflow{fiveSteps(blockingAt(c, "c", entered))}})
	id := first.start(t, "five", nil).ID
	ctx, crash := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.eng.Advance(ctx, id) }()
	<-entered
	crash() // the worker dies in the middle of step c
	require.ErrorIs(t, <-done, context.Canceled)
	mid, err := first.store.Run(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, engine.StatusRunning, mid.Status)
	require.Equal(t, "c", mid.Step, "a and b were committed; c was not")
	require.NoError(t, first.store.Close())

	// A new process opens the same file; start-up recovery resumes the run.
	second := withWorkers(t, path, nil, fiveSteps(blockingAt(c, "c", nil)))
	got := waitStatus(t, second, id, engine.StatusCompleted)

	require.Equal(t, want.State, got.State, "same result as an uninterrupted run")
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		require.Equal(t, 1, c.get(s), "step %s completed exactly once", s)
	}
	require.Equal(t, 1, c.get("c:interrupted"))
	steps, err := second.store.StepRuns(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, []string{"ok", "ok", "ok", "ok", "ok"}, outcomes(steps), "no step result duplicated")
	// Recovery may have queued the run twice; later jobs are harmless no-ops.
	n, err := second.eng.Recover(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestWaitingRunSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "restart.db")
	first := withWorkers(t, path, engine.Pending(), loopWorkflow("loop", 3, nil))
	id := first.start(t, "loop", nil).ID
	r := waitStatus(t, first, id, engine.StatusWaiting)
	cpID := r.CheckpointID
	require.NoError(t, first.store.Close()) // the process stops

	second := withWorkers(t, path, engine.Pending(), loopWorkflow("loop", 3, nil))
	r, err := second.store.Run(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, r.Status)
	require.Equal(t, cpID, r.CheckpointID)
	require.NoError(t, second.eng.Decide(context.Background(), id, cpID, by("ada")))
	r = waitStatus(t, second, id, engine.StatusCompleted)
	require.Empty(t, r.CheckpointID)
}

func TestDecisionRecordedWhileStoppedIsNotLost(t *testing.T) {
	t.Parallel()
	// The decision and its resume job commit together: even with no worker
	// running when it is recorded, the next start picks the job up.
	path := filepath.Join(t.TempDir(), "q.db")
	b := setup(t, setupOpts{path: path, handler: engine.Pending(), wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}})
	r := b.advance(t, b.start(t, "loop", nil).ID)
	require.NoError(t, b.eng.Decide(context.Background(), r.ID, r.CheckpointID, by("ada")))
	require.NoError(t, b.store.Close())
	second := withWorkers(t, path, engine.Pending(), loopWorkflow("loop", 3, nil))
	waitStatus(t, second, r.ID, engine.StatusCompleted)
}

func TestDecisionEventPrecedesTheStepsItResumes(t *testing.T) {
	t.Parallel()
	wf := &engine.Workflow{Name: "gate", Entry: "ask", Steps: []engine.StepDef{
		{ID: "ask", Gate: reviewGate(kindNote), Next: engine.Next{engine.OK: "after"}},
		{ID: "after", Handler: noop, Next: engine.Next{engine.OK: engine.End}},
	}}
	b := withWorkers(t, filepath.Join(t.TempDir(), "order.db"), engine.Pending(), wf)
	events, stop := b.eng.Events().Subscribe("")
	defer stop()
	id := b.start(t, "gate", nil).ID
	r := waitStatus(t, b, id, engine.StatusWaiting)
	require.NoError(t, b.eng.Decide(context.Background(), id, r.CheckpointID, by("ada")))
	waitStatus(t, b, id, engine.StatusCompleted)
	var order []string
	for len(events) > 0 {
		ev := <-events
		if ev.RunID == id && (ev.Type == engine.EventDecision || ev.Type == engine.EventStepStarted && ev.Step == "after") {
			order = append(order, string(ev.Type))
		}
	}
	require.Equal(t, []string{string(engine.EventDecision), string(engine.EventStepStarted)}, order)
}
