package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
)

const forkDef = head + `metadata: {name: forkable}
context: {n: 1}
stages:
  - {id: bump, type: set, set: {n: context.n + 1}}
  - id: choose
    type: gate
    options:
      - {label: Go, next: work}
      - {label: Stop, next: complete}
  - {id: work, type: skill, skill: echo, with: {n: "{{ context.n }}"}}
`

// A run forked from its gate starts there with the state it had (the set
// before the gate ran once, not again), is asked anew and may choose
// otherwise; the original keeps its own ending.
func TestForkStartsAgainAtTheCheckpoint(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, "", engine.Pending(), compile(t, forkDef, flow.Skills{"echo": echo(c)}))
	ctx := context.Background()
	r := b.run(t, "forkable", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Stop", "", "ada")))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	require.Zero(t, c.get("work"))

	f, err := b.eng.Fork(ctx, r.ID, cp.ID, "bob")
	require.NoError(t, err)
	f = b.advance(t, f.ID)
	fcp, _ := pendingCheckpoint(t, b, f)
	require.NotEqual(t, cp.ID, fcp.ID)
	require.NoError(t, b.eng.Decide(ctx, f.ID, fcp.ID, flow.Choose("Go", "", "bob")))
	f = b.advance(t, f.ID)
	require.Equal(t, engine.StatusCompleted, f.Status, f.Error)
	require.Equal(t, map[string]any{"n": float64(2)}, outputsOf(t, f)["work"], "bump ran once, before the checkpoint")
	require.Equal(t, []string{"choose:checkpoint", "choose:goto:work", "work:ok"}, b.steps(t, f.ID))

	orig, err := b.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, r.Version, orig.Version, "the original is untouched")
	from, err := b.store.ForkOf(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, &engine.ForkOrigin{Run: r.ID, Checkpoint: cp.ID, By: "bob"}, from)

	_, err = b.eng.Fork(ctx, f.ID, cp.ID, "bob")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "a checkpoint of another run")
}
