package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

func failing(msg string, c *counter) engine.Handler {
	return func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		c.inc(sc.StepID)
		return "", nil, errors.New(msg)
	}
}

// RetryPolicy.Then says where a step goes once its attempts are used up;
// Stop skips the remaining attempts.
func TestRetryPolicyThen(t *testing.T) {
	t.Parallel()
	c := &counter{}
	wf := func(name string, h engine.Handler, then engine.Outcome) *engine.Workflow {
		return &engine.Workflow{Name: name, Entry: "a", Steps: []engine.StepDef{
			{ID: "a", Handler: h, Next: engine.Next{engine.OK: engine.End, engine.Goto("b"): "b"},
				Retry: engine.RetryPolicy{MaxAttempts: 2, Then: then}},
			{ID: "b", Handler: appendStep(c), Next: engine.Next{engine.OK: engine.End}},
		}}
	}
	stop := func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		c.inc("stop")
		return "", nil, engine.Stop(errors.New("bound used up"), engine.Fail)
	}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{
		wf("fail", failing("boom", c), engine.Fail),
		wf("goto", failing("boom", c), engine.Goto("b")),
		wf("escalate", failing("boom", c), ""),
		wf("stop", stop, engine.Goto("b")),
	}})

	r := b.advance(t, b.start(t, "fail", nil).ID)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Equal(t, `step "a" failed: boom`, r.Error)

	r = b.advance(t, b.start(t, "goto", nil).ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	trail, _, err := engine.Get[[]string](r.State, "trail")
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, trail)

	r = b.advance(t, b.start(t, "escalate", nil).ID)
	require.Equal(t, engine.StatusEscalated, r.Status, "the default is unchanged: a person is asked")

	r = b.advance(t, b.start(t, "stop", nil).ID)
	require.Equal(t, engine.StatusFailed, r.Status, "Stop's own Then, not the policy's")
	require.Equal(t, `step "a" failed: bound used up`, r.Error)
	require.Equal(t, 1, c.get("stop"), "no second attempt")
}

// Workflow.Init builds the first state; a gate's Precheck either decides
// or has its update committed with the checkpoint.
func TestInitAndPrecheck(t *testing.T) {
	t.Parallel()
	g := reviewGate(kindNote)
	g.Precheck = func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, bool, error) {
		seed, _, err := engine.Get[string](sc.State, "seed")
		if err != nil {
			return "", nil, false, err
		}
		u, err := engine.NewUpdate(map[string]any{"checked": true})
		return engine.Goto(engine.End), u, seed == "skip", err
	}
	wf := &engine.Workflow{Name: "pre", Entry: "ask", MaxIterations: 1,
		Init: func(p engine.Params) (engine.State, error) {
			return engine.NewUpdate(map[string]any{"seed": p.String("seed")})
		},
		Steps: []engine.StepDef{{ID: "ask", Gate: g, Next: engine.Next{engine.OK: engine.End, engine.Goto(engine.End): engine.End},
			Params: []engine.Param{{Name: "seed", Type: engine.ParamString}}}},
	}
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{wf}})

	r := b.advance(t, b.start(t, "pre", map[string]any{"seed": "skip"}).ID)
	require.Equal(t, engine.StatusCompleted, r.Status, "the precheck decided")
	require.JSONEq(t, `"skip"`, string(r.State["seed"]))

	r = b.advance(t, b.start(t, "pre", map[string]any{"seed": "ask"}).ID)
	require.Equal(t, engine.StatusWaiting, r.Status)
	require.JSONEq(t, `true`, string(r.State["checked"]), "committed with the checkpoint")
}
