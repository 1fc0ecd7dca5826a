package flow_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

const parallelDef = head + `metadata: {name: fan}
params: [{name: topics, type: list, default: [bees, ants, moths]}]
stages:
  - id: prepare
    type: set
    set: {ready: "true"}
  - id: fan
    type: parallel
    join: 2
    branches:
      - {id: a, type: skill, skill: work, with: {ok: true, name: a}}
      - {id: b, type: skill, skill: work, with: {ok: true, name: b}}
      - {id: c, type: skill, skill: work, with: {ok: false, name: c}, on_error: {retry: 0, then: fail}}
    on_complete: after
  - id: after
    type: skill
    skill: work
    with: {ok: true, a: "{{ outputs.a.name }}", n: "{{ outputs.fan.succeeded }}", c: "{{ outputs.fan.branches.c.status }}"}
`

// work succeeds when with.ok is true, else fails; it counts its calls.
func work(c *counter) flow.Skill {
	return func(ctx context.Context, in flow.Input) (map[string]any, error) {
		c.inc(in.Stage)
		if ok, _ := in.With["ok"].(bool); !ok {
			return nil, errors.New("told to fail")
		}
		return in.With, nil
	}
}

func TestParallelJoinsTwoOfThreeWithWorkers(t *testing.T) {
	t.Parallel()
	c := &counter{}
	wf := compile(t, parallelDef, flow.Skills{"work": work(c)})
	b := withWorkers(t, "", wf)
	r, err := b.eng.Start(context.Background(), "fan", nil)
	require.NoError(t, err)
	got := waitStatus(t, b, r.ID, engine.StatusCompleted)

	outs := outputsOf(t, got)
	require.Equal(t, "a", outs["after"]["a"], "a branch stage's outputs are outputs.<stage>")
	require.EqualValues(t, 2, outs["fan"]["succeeded"])
	br := outs["fan"]["branches"].(map[string]any)
	require.Equal(t, "completed", br["a"].(map[string]any)["status"])
	require.Equal(t, "completed", br["b"].(map[string]any)["status"])
	require.Contains(t, []any{"failed", "canceled", "pending", "running"}, br["c"].(map[string]any)["status"])
	require.Equal(t, 1, c.get("a"))
	require.Equal(t, 1, c.get("b"))
	require.LessOrEqual(t, c.get("c"), 1, "c has no retries")
	require.Equal(t, 1, c.get("after"))

	rows, err := b.store.Branches(context.Background(), r.ID, "fan")
	require.NoError(t, err)
	require.Len(t, rows, 3)
	for _, row := range rows {
		require.False(t, row.Status.Open(), "branch %s left %s after the join", row.ID, row.Status)
	}
	trail := b.steps(t, r.ID)
	require.Contains(t, trail, "fan:branches")
	require.Contains(t, trail, "fan:ok")
}

const forEachDef = head + `metadata: {name: each}
params: [{name: topics, type: list, default: [bees, ants, moths]}]
stages:
  - id: fan
    type: parallel
    for_each: params.topics
    join: all
    branches:
      - [{id: fetch, type: skill, skill: work, with: {ok: true, topic: "{{ item }}"}},
         {id: shout, type: set, set: {loud: "upper(outputs.fetch.topic)"}}]
    on_any_reject: rejected
  - id: done
    type: skill
    skill: work
    with: {ok: true, n: "{{ outputs.fan.total }}"}
    on_complete: complete
  - id: rejected
    type: set
    set: {why: "'a branch failed'"}
`

func TestParallelForEachRunsABranchPerItem(t *testing.T) {
	t.Parallel()
	c := &counter{}
	wf := compile(t, forEachDef, flow.Skills{"work": work(c)})
	b := withWorkers(t, "", wf)
	r, err := b.eng.Start(context.Background(), "each", nil)
	require.NoError(t, err)
	got := waitStatus(t, b, r.ID, engine.StatusCompleted)
	outs := outputsOf(t, got)
	require.EqualValues(t, 3, outs["done"]["n"])
	br := outs["fan"]["branches"].(map[string]any)
	var topics []string
	for id, v := range br {
		m := v.(map[string]any)
		require.Equal(t, "completed", m["status"], id)
		topics = append(topics, m["outputs"].(map[string]any)["fetch"].(map[string]any)["topic"].(string))
	}
	sort.Strings(topics)
	require.Equal(t, []string{"ants", "bees", "moths"}, topics)
	require.Equal(t, 3, c.get("fetch"))
	require.NotContains(t, b.steps(t, r.ID), "rejected:ok")
}

const retryBranchDef = head + `metadata: {name: flaky}
stages:
  - id: fan
    type: parallel
    branches:
      - {id: steady, type: skill, skill: steady}
      - {id: shaky, type: skill, skill: shaky, on_error: {retry: 2, backoff: 1ms, then: fail}}
    on_complete: complete
`

// A failed branch is retried per its policy; the other branch does not
// run again.
func TestParallelRetriesOnlyTheFailedBranch(t *testing.T) {
	t.Parallel()
	c := &counter{}
	skills := flow.Skills{
		"steady": echo(c),
		"shaky": func(ctx context.Context, in flow.Input) (map[string]any, error) {
			if c.inc(in.Stage) < 3 {
				return nil, fmt.Errorf("attempt %d fails", in.Attempt)
			}
			return map[string]any{"attempt": in.Attempt, "prev": in.PrevError}, nil
		},
	}
	b := setup(t, "", nil, compile(t, retryBranchDef, skills))
	r, err := b.eng.Start(context.Background(), "flaky", nil)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, b.eng.Advance(ctx, r.ID))
	rows, err := b.store.Branches(ctx, r.ID, "fan")
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for range 3 { // the queue would run shaky's job again after each backoff
		for _, row := range rows {
			require.NoError(t, b.eng.AdvanceBranch(ctx, r.ID, row.Fan, row.ID))
		}
	}
	got := b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, got.Status, got.Error)
	require.Equal(t, 1, c.get("steady"))
	require.Equal(t, 3, c.get("shaky"))
	shaky := outputsOf(t, got)["shaky"]
	require.EqualValues(t, 3, shaky["attempt"])
	require.Equal(t, "attempt 2 fails", shaky["prev"])
}

// A process that dies while branches run: after the restart only the
// branch that had not finished runs again.
func TestParallelCrashRerunsOnlyUnfinishedBranches(t *testing.T) {
	t.Parallel()
	c := &counter{}
	entered := make(chan struct{}, 1)
	skills := func(crash bool) flow.Skills {
		return flow.Skills{
			"steady": echo(c),
			"shaky": func(ctx context.Context, in flow.Input) (map[string]any, error) {
				if crash {
					c.inc("shaky:interrupted")
					entered <- struct{}{}
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return echo(c)(ctx, in)
			},
		}
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	first := setup(t, path, nil, compile(t, retryBranchDef, skills(true)))
	ctx := context.Background()
	r, err := first.eng.Start(ctx, "flaky", nil)
	require.NoError(t, err)
	require.NoError(t, first.eng.Advance(ctx, r.ID))
	rows, err := first.store.Branches(ctx, r.ID, "fan")
	require.NoError(t, err)
	require.NoError(t, first.eng.AdvanceBranch(ctx, r.ID, rows[0].Fan, "steady"))
	dying, crash := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- first.eng.AdvanceBranch(dying, r.ID, rows[0].Fan, "shaky") }()
	<-entered
	crash()
	require.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, first.store.Close())

	second := withWorkers(t, path, compile(t, retryBranchDef, skills(false)))
	waitStatus(t, second, r.ID, engine.StatusCompleted)
	require.Equal(t, 1, c.get("steady"), "steady finished before the crash")
	require.Equal(t, 1, c.get("shaky:interrupted"))
	require.Equal(t, 1, c.get("shaky"))
}
