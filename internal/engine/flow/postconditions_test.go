package flow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

// A postcondition reads back what the stage wrote before it is committed:
// a false one fails the attempt, nothing of it is kept, and on_error is
// followed (here: retried once, then the goto).
func TestPostconditionFailsTheAttemptAndFollowsOnError(t *testing.T) {
	t.Parallel()
	const src = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: post}
stages:
  - id: count
    type: skill
    skill: count
    postconditions: ["outputs.count.n > 0", "outputs.count.n < 100"]
    on_error: {retry: 1, then: {goto: fallback}}
    on_complete: note
  - id: note
    type: set
    set: {seen: "outputs.count.n"}
    postconditions: ["context.seen == outputs.count.n"]
    on_complete: complete
  - id: fallback
    type: set
    set: {fell_back: "true"}
    postconditions: ["context.fell_back"]
`
	var calls counter
	ns := []int{0, 0}
	skills := flow.Skills{"count": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		i := calls.inc(in.Stage)
		return map[string]any{"n": ns[min(i, len(ns))-1]}, nil
	}}
	wf := compile(t, src, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "post", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 2, calls.get("count"))
	require.Equal(t, []string{"count:error", "count:goto:fallback", "fallback:ok"}, b.steps(t, r.ID))
	_, wrote := outputsOf(t, r)["count"]
	require.False(t, wrote, "the failed attempts' outputs are not kept")
	require.Equal(t, true, contextOf(t, r)["fell_back"])
	recs, err := b.store.StepRuns(context.Background(), r.ID)
	require.NoError(t, err)
	require.Contains(t, recs[0].Error, `postcondition "outputs.count.n > 0" failed`)

	// A retry that satisfies them goes on, and the next stage's hold.
	ns = []int{0, 7}
	var again counter
	skills2 := flow.Skills{"count": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		return map[string]any{"n": ns[again.inc(in.Stage)-1]}, nil
	}}
	b2 := setup(t, "", nil, compile(t, src, skills2))
	r = b2.run(t, "post", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"count:error", "count:ok", "note:ok"}, b2.steps(t, r.ID))
	require.EqualValues(t, 7, contextOf(t, r)["seen"])
}

// A set stage's postcondition that fails leaves the context as it was.
func TestPostconditionOfASetStage(t *testing.T) {
	t.Parallel()
	const src = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: setpost}
context: {n: 1}
stages:
  - id: bump
    type: set
    set: {n: "context.n + 1"}
    postconditions: ["context.n == 1"]
`
	b := setup(t, "", nil, compile(t, src, nil))
	r := b.run(t, "setpost", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.True(t, strings.Contains(r.Error, "postcondition"), r.Error)
	require.EqualValues(t, 1, contextOf(t, r)["n"])
}
