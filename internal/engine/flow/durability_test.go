package flow_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
)

const durableDef = head + `metadata: {name: durable}
params: [{name: topic, type: string, default: bees}]
context: {topic: "{{ params.topic }}"}
stages:
  - id: a
    type: skill
    skill: count
    with: {topic: "{{ context.topic }}"}
    outputs: [{name: topic, required: true}]
  - id: b
    type: skill
    skill: block
    with: {from_a: "{{ outputs.a.topic }}"}
  - id: review
    type: gate
    context: [topic]
    options: [{label: Go, next: c}]
  - id: c
    type: skill
    skill: count
    with: {done: "{{ outputs.b.from_a }}"}
`

// withWorkers opens the database at path as a new process would: River
// workers running and start-up recovery done.
func withWorkers(t *testing.T, path string, wf *engine.Workflow) *bundle {
	t.Helper()
	b := setup(t, path, engine.Pending(), wf)
	require.NoError(t, b.store.StartWorkers(context.Background(), b.eng, store.QueueOptions{}))
	_, err := b.eng.Recover(context.Background())
	require.NoError(t, err)
	return b
}

// waitStatus polls the run until it reaches want. A retry that River
// schedules (a branch's) waits for River's scheduler, every 5 s, so a
// loaded machine (CI beside other work) can take several of those: the
// bound is generous, and the failure says where the run stopped.
func waitStatus(t *testing.T, b *bundle, id string, want engine.Status) engine.Run {
	t.Helper()
	var r engine.Run
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		r, err = b.store.Run(context.Background(), id)
		require.NoError(t, err)
		if r.Status == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never reached %s (last: %s at %s: %s)", id, want, r.Status, r.Step, r.Error)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCompiledRunResumesAfterCrashWithoutRerunningStages(t *testing.T) {
	t.Parallel()
	c := &counter{}
	entered := make(chan struct{})
	skills := func(crash bool) flow.Skills {
		return flow.Skills{
			"count": echo(c),
			"block": func(ctx context.Context, in flow.Input) (map[string]any, error) {
				if crash {
					c.inc("b:interrupted")
					close(entered)
					<-ctx.Done() // the process dies in the middle of b
					return nil, ctx.Err()
				}
				return echo(c)(ctx, in)
			},
		}
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	first := setup(t, path, engine.Pending(), compile(t, durableDef, skills(true)))
	r, err := first.eng.Start(context.Background(), "durable", map[string]any{"topic": "ants"})
	require.NoError(t, err)
	ctx, crash := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.eng.Advance(ctx, r.ID) }()
	<-entered
	crash()
	require.ErrorIs(t, <-done, context.Canceled)
	mid, err := first.store.Run(context.Background(), r.ID)
	require.NoError(t, err)
	require.Equal(t, "b", mid.Step, "a was committed; b was not")
	require.NoError(t, first.store.Close())

	// A new process: the definition compiled again, the engine rebuilt on
	// the same file; recovery resumes the run at b.
	second := withWorkers(t, path, compile(t, durableDef, skills(false)))
	w := waitStatus(t, second, r.ID, engine.StatusWaiting)
	require.NoError(t, second.store.Close())

	// And again while it waits at the gate: the decision goes through the
	// third process's engine.
	third := withWorkers(t, path, compile(t, durableDef, skills(false)))
	require.NoError(t, third.eng.Decide(context.Background(), r.ID, w.CheckpointID, flow.Choose("Go", "", "ada")))
	got := waitStatus(t, third, r.ID, engine.StatusCompleted)

	require.Equal(t, 1, c.get("a"), "a completed before the crash and never ran again")
	require.Equal(t, 1, c.get("b:interrupted"))
	require.Equal(t, 1, c.get("b"))
	require.Equal(t, 1, c.get("c"))
	require.JSONEq(t, `{"a": {"topic": "ants"}, "b": {"from_a": "ants"}, "review": {"option": "Go", "input": "", "decided_by": "ada"}, "c": {"done": "ants"}}`,
		jsonOf(t, outputsOf(t, got)))
	require.Equal(t, []string{"a:ok", "b:ok", "review:checkpoint", "review:goto:c", "c:ok"}, third.steps(t, r.ID))
}
