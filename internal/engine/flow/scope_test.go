package flow_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
)

type spentKey struct{}

// spendScope is a Scope that gives each skill call a counter in its
// context and adds what the call spent to the run's "spent", as a
// program's LLM meter would; failures (unless nil) lists the errors done
// was told of.
func spendScope(failures *[]string) flow.Scope {
	return func(ctx context.Context, sc engine.StepContext) (context.Context, flow.StageDone) {
		prev, _, _ := engine.Get[int64](sc.State, "spent")
		n := &atomic.Int64{}
		return context.WithValue(ctx, spentKey{}, n), func(u engine.Update, failed error) error {
			if failed != nil && failures != nil {
				*failures = append(*failures, failed.Error())
			}
			return u.Set("spent", prev+n.Load())
		}
	}
}

func spend(ctx context.Context, n int64) { ctx.Value(spentKey{}).(*atomic.Int64).Add(n) }

// spendingSkills are "cheap", which spends 2 and succeeds, and "boom",
// which spends 5 and fails.
func spendingSkills() flow.Skills {
	return flow.Skills{
		"cheap": func(ctx context.Context, in flow.Input) (map[string]any, error) {
			spend(ctx, 2)
			return map[string]any{"ok": true}, nil
		},
		"boom": func(ctx context.Context, in flow.Input) (map[string]any, error) {
			spend(ctx, 5)
			return nil, errors.New("no")
		},
	}
}

// TestScopeKeepsWhatSkillCallsSpent: a skill stage's call runs in the
// context the Scope gives it, and what done adds is stored with the
// stage's outputs when it succeeds and with every failed attempt when it
// fails, so the next attempt starts from it; natives run without it.
func TestScopeKeepsWhatSkillCallsSpent(t *testing.T) {
	t.Parallel()
	skills := spendingSkills()
	natives := flow.Natives{"native": func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		if ctx.Value(spentKey{}) != nil {
			return "", nil, errors.New("a native ran in the skills' scope")
		}
		return engine.OK, nil, nil
	}}
	d, err := def.Load("test.yaml", []byte(head+`metadata: {name: spend}
stages:
  - {id: first, type: skill, skill: cheap}
  - {id: own, type: skill, skill: native}
  - id: boom
    type: skill
    skill: boom
    on_error: {retry: 2, then: fail}
`), def.Options{Skills: append(skills.Names(), natives.Names()...)})
	require.NoError(t, err)
	var failures []string
	wf, err := flow.CompileWith(d, flow.Options{Skills: skills, Natives: natives, Scope: spendScope(&failures)})
	require.NoError(t, err)
	b := setup(t, "", nil, wf)
	r := b.run(t, "spend", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	spent, _, err := engine.Get[int64](r.State, "spent")
	require.NoError(t, err)
	require.EqualValues(t, 2+3*5, spent, "the first stage's 2 and each of boom's three attempts' 5")
	require.Equal(t, []string{"no", "no", "no"}, failures)
	require.Equal(t, []string{"first:ok", "own:ok", "boom:error", "boom:error", "boom:failed"}, b.steps(t, r.ID))
}

// TestScopeKeepsWhatABranchSpent: in a parallel stage's branch, what a
// failed skill call spent is kept in the branch's state, each retry
// starting from it.
func TestScopeKeepsWhatABranchSpent(t *testing.T) {
	t.Parallel()
	skills := flow.Skills{"boom": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		spend(ctx, 5)
		return nil, errors.New("no")
	}}
	d, err := def.Load("test.yaml", []byte(head+`metadata: {name: fanspend}
stages:
  - id: fan
    type: parallel
    branches:
      - {id: a, type: skill, skill: boom, on_error: {retry: 1, then: fail}}
`), def.Options{Skills: skills.Names()})
	require.NoError(t, err)
	wf, err := flow.CompileWith(d, flow.Options{Skills: skills, Scope: spendScope(nil)})
	require.NoError(t, err)
	b := withWorkers(t, "", wf)
	r, err := b.eng.Start(context.Background(), "fanspend", nil)
	require.NoError(t, err)
	waitStatus(t, b, r.ID, engine.StatusFailed)
	rows, err := b.store.Branches(context.Background(), r.ID, "fan")
	require.NoError(t, err)
	require.Len(t, rows, 1)
	spent, _, err := engine.Get[int64](rows[0].State, "spent")
	require.NoError(t, err)
	require.EqualValues(t, 10, spent, "both attempts' 5")
}

// spentGather sums what each branch spent beyond the run's "spent".
func spentGather(run engine.State, branches []engine.State) (engine.Update, error) {
	base, _, err := engine.Get[int64](run, "spent")
	if err != nil {
		return nil, err
	}
	total := base
	for _, b := range branches {
		if n, ok, err := engine.Get[int64](b, "spent"); err != nil {
			return nil, err
		} else if ok {
			total += n - base
		}
	}
	u := engine.Update{}
	return u, u.Set("spent", total)
}

// TestGatherSumsWhatBranchesSpent: the join adds what every branch spent
// to the run, after what the stages before the fan-out spent, whether the
// join passes or the parallel stage fails.
func TestGatherSumsWhatBranchesSpent(t *testing.T) {
	t.Parallel()
	skills := spendingSkills()
	for name, c := range map[string]struct {
		branches string
		status   engine.Status
		spent    int64
	}{
		"all pass": {"      - {id: a, type: skill, skill: cheap}\n      - {id: b, type: skill, skill: cheap}\n      - {id: c, type: skill, skill: cheap}\n", engine.StatusCompleted, 2 + 3*2},
		// b's backoff gives a, cheap, time to commit before b's second
		// failure fails the stage and cancels what is still running (on
		// PostgreSQL a's commit can otherwise come second).
		"one fails": {"      - {id: a, type: skill, skill: cheap}\n      - {id: b, type: skill, skill: boom, on_error: {retry: 1, backoff: 1s, then: fail}}\n", engine.StatusFailed, 2 + 2 + 2*5},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := def.Load("test.yaml", []byte(head+`metadata: {name: gather}
stages:
  - {id: before, type: skill, skill: cheap}
  - id: fan
    type: parallel
    branches:
`+c.branches), def.Options{Skills: skills.Names()})
			require.NoError(t, err)
			wf, err := flow.CompileWith(d, flow.Options{Skills: skills, Scope: spendScope(nil), Gather: spentGather})
			require.NoError(t, err)
			b := withWorkers(t, "", wf)
			r, err := b.eng.Start(context.Background(), "gather", nil)
			require.NoError(t, err)
			r = waitStatus(t, b, r.ID, c.status)
			spent, _, err := engine.Get[int64](r.State, "spent")
			require.NoError(t, err)
			require.Equal(t, c.spent, spent)
		})
	}
}
