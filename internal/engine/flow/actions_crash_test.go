package flow_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
)

// TestCrashWithASubWorkflowAndAForkInFlight is issue 18's "a crash test
// with a sub-workflow and a fork in flight: nothing lost or duplicated",
// on a real SQLite file, over three processes:
//
//  1. a parent run waits (start_workflow, wait: true) for its child,
//     which waits at a gate; another run of the child's workflow waits at
//     its gate. Then a process forks that run there and dies before the
//     fork's first advance runs.
//  2. a new process (no workers) decides the child's gate and the child
//     completes; that commit queues the parent's wake, and the process
//     dies before any job runs.
//  3. a third process starts its workers and recovers: the parent is
//     woken (by its queued job and by Recover, twice) and goes on exactly
//     once; the fork reaches its gate and finishes when decided.
//
// Counted at the end: four runs, one child, every stage run once, each
// trail exactly as a run without crashes would leave it.
func TestCrashWithASubWorkflowAndAForkInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crash.db")
	c := &counter{}
	skills := flow.Skills{"echo": echo(c), "boom": boom}
	process := func(workers bool) *bundle {
		b := setupFlows(t, path, nil, skills, childDef, parentDef)
		if workers {
			require.NoError(t, b.store.StartWorkers(ctx, b.eng, store.QueueOptions{}))
			_, err := b.eng.Recover(ctx)
			require.NoError(t, err)
		}
		return b
	}

	// Process 1, with workers: the parent waits for its child, which waits
	// at its gate; another run waits at its gate.
	first := process(true)
	p, err := first.eng.Start(ctx, "parent", nil)
	require.NoError(t, err)
	var kids []engine.ChildLink
	require.Eventually(t, func() bool { kids = childrenOf(t, first, p.ID); return len(kids) == 1 }, 10e9, 5e6)
	k := waitStatus(t, first, kids[0].RunID, engine.StatusWaiting)
	require.NotEmpty(t, k.CheckpointID, "the child waits at its gate")
	p = waitStatus(t, first, p.ID, engine.StatusWaiting)
	o, err := first.eng.Start(ctx, "child", map[string]any{"topic": "ants"})
	require.NoError(t, err)
	o = waitStatus(t, first, o.ID, engine.StatusWaiting)
	require.NotEmpty(t, o.CheckpointID)
	require.NoError(t, first.store.Close())

	// The fork is taken by a process that dies before its first advance.
	forker := process(false)
	f, err := forker.eng.Fork(ctx, o.ID, o.CheckpointID, "ada")
	require.NoError(t, err)
	oSteps := forker.steps(t, o.ID)
	require.NoError(t, forker.store.Close())

	// Process 2: the child's gate is decided and the child completes; the
	// process dies with the parent's wake queued, not run.
	second := process(false)
	require.NoError(t, second.eng.Decide(ctx, k.ID, k.CheckpointID, flow.Choose("Keep", "", "grace")))
	k = second.advance(t, k.ID)
	require.Equal(t, engine.StatusCompleted, k.Status, k.Error)
	mid, err := second.store.Run(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, mid.Status, "the parent has not run yet")
	require.Equal(t, 0, c.get("after"))
	require.NoError(t, second.store.Close())

	// Process 3: workers and recovery.
	third := process(true)
	p = waitStatus(t, third, p.ID, engine.StatusCompleted)
	fw := waitStatus(t, third, f.ID, engine.StatusWaiting)
	require.NotEmpty(t, fw.CheckpointID, "the fork waits at the gate it was taken at")
	require.NoError(t, third.eng.Decide(ctx, f.ID, fw.CheckpointID, flow.Choose("Keep", "", "ada")))
	waitStatus(t, third, f.ID, engine.StatusCompleted)
	// Let any duplicate wake still queued run before counting.
	require.Eventually(t, func() bool {
		ids, err := third.store.ResumableRuns(ctx)
		require.NoError(t, err)
		return len(ids) == 0
	}, 10e9, 5e6)

	// Nothing lost or duplicated.
	all, err := third.store.ListRuns(ctx, store.RunFilter{Limit: 100, TextParam: "topic"})
	require.NoError(t, err)
	require.Equal(t, 4, all.Total, "parent, child, the forked run and its fork")
	require.Len(t, childrenOf(t, third, p.ID), 1, "one child, never a second")
	require.Empty(t, childrenOf(t, third, o.ID))
	parent, err := third.store.RunParent(ctx, k.ID)
	require.NoError(t, err)
	require.Equal(t, &engine.Parent{RunID: p.ID, Step: "sub", Wait: true}, parent)
	origin, err := third.store.ForkOf(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, &engine.ForkOrigin{Run: o.ID, Checkpoint: o.CheckpointID, By: "ada"}, origin)

	require.Equal(t, 1, c.get("after"), "the parent went on exactly once")
	require.Equal(t, 2, c.get("look"), "the child's and the forked run's; the fork starts at the gate")
	require.Equal(t, []string{"sub:waiting", "sub:ok", "after:ok"}, third.steps(t, p.ID))
	require.Equal(t, map[string]any{"seen": "bees", "child": k.ID}, outputsOf(t, p)["after"])
	require.Equal(t, []string{"look:ok", "ok:checkpoint", "ok:goto:_end"}, third.steps(t, k.ID))
	require.Equal(t, []string{"ok:checkpoint", "ok:goto:_end"}, third.steps(t, f.ID))
	oNow, err := third.store.Run(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, oNow.Status, "the forked run is untouched")
	require.Equal(t, o.CheckpointID, oNow.CheckpointID)
	require.Equal(t, oSteps, third.steps(t, o.ID))
	require.Equal(t, map[string]any{"topic": "ants"}, outputsOf(t, fw)["look"], "the fork carries the state it was taken with")
}
