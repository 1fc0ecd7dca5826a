package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// spendingWorkflow's one step spends a unit each attempt and fails, keeping
// the count (KeepOnFailure) but not its result; then is its retry policy's
// Then once three attempts failed.
func spendingWorkflow(name string, then engine.Outcome, next engine.Next) *engine.Workflow {
	return &engine.Workflow{Name: name, Entry: "s", Steps: []engine.StepDef{{
		ID: "s", Retry: engine.RetryPolicy{MaxAttempts: 3, Then: then},
		Handler: func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
			spent, _, err := engine.Get[int](sc.State, "spent")
			if err != nil {
				return "", nil, err
			}
			kept := engine.Update{}
			if err := kept.Set("spent", spent+1); err != nil {
				return "", nil, err
			}
			return "", engine.Update{"result": []byte(`"lost"`)}, engine.KeepOnFailure(fmt.Errorf("boom %d", sc.Attempt), kept)
		},
		Next: next,
	}}}
}

// TestKeepOnFailureCommitsWithEveryFailedAttempt: what a failed attempt
// keeps is in the run's state for the next attempt and after the last one,
// whether a person is asked or the run fails; the attempt's own update is
// not.
func TestKeepOnFailureCommitsWithEveryFailedAttempt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		then   engine.Outcome
		next   engine.Next
		status engine.Status
	}{
		{"Escalated", "", engine.Next{engine.OK: engine.End}, engine.StatusEscalated},
		{"Failed", engine.Fail, engine.Next{engine.OK: engine.End}, engine.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpts{wfs: []*engine.Workflow{spendingWorkflow("spend", tt.then, tt.next)}})
			r := b.advance(t, b.start(t, "spend", nil).ID)
			require.Equal(t, tt.status, r.Status)
			spent, ok, err := engine.Get[int](r.State, "spent")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, 3, spent, "each attempt started from what the one before kept")
			require.NotContains(t, r.State, "result", "a failed attempt's results are not kept")
		})
	}
}

// TestKeepOnFailureWithStop: a Stop error keeps what KeepOnFailure kept,
// with its own update, and makes no further attempt.
func TestKeepOnFailureWithStop(t *testing.T) {
	t.Parallel()
	wf := &engine.Workflow{Name: "stop", Entry: "s", Steps: []engine.StepDef{{
		ID: "s", Retry: engine.RetryPolicy{MaxAttempts: 3},
		Handler: func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
			return "", nil, engine.StopWith(engine.KeepOnFailure(fmt.Errorf("for good"), engine.Update{"spent": []byte(`1`)}),
				engine.Fail, engine.Update{"forgot": []byte(`true`)})
		},
		Next: engine.Next{engine.OK: engine.End},
	}}}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "stop", nil).ID)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.JSONEq(t, `1`, string(r.State["spent"]))
	require.JSONEq(t, `true`, string(r.State["forgot"]))
	require.Equal(t, 1, r.Attempt)
}
