package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// slowSteps is a workflow of two slow steps that counts the runs inside
// a step at once, keeping the most seen.
func slowSteps(name string, active, most *atomic.Int32) *engine.Workflow {
	wf := linear(name, nil, "a", "b")
	for i := range wf.Steps {
		wf.Steps[i].Handler = func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
			n := active.Add(1)
			defer active.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			select {
			case <-time.After(150 * time.Millisecond):
			case <-ctx.Done():
				return "", nil, ctx.Err()
			}
			return engine.OK, nil, nil
		}
	}
	return wf
}

// TestConcurrencyLimit: with a limit of 1 (per workflow, or global),
// three runs started at once never execute two at a time, the ones
// waiting say they are queued behind the limit, and all three complete.
func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		limits store.RunLimits
		want   string
	}{
		{"PerWorkflow", store.RunLimits{PerWorkflow: map[string]int{"slow": 1, "other": 5}}, "runs of slow are executing"},
		{"Global", store.RunLimits{Max: 1}, "QUARRY_MAX_ACTIVE_RUNS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var active, most atomic.Int32
			b := setup(t, setupOpts{wfs: []*engine.Workflow{slowSteps("slow", &active, &most)}})
			require.NoError(t, b.store.StartWorkers(context.Background(), b.eng, store.QueueOptions{Workers: 4, Limits: tt.limits}))
			t.Cleanup(func() { _ = b.store.StopWorkers(context.Background()) })
			var ids []string
			for range 3 {
				ids = append(ids, b.start(t, "slow", nil).ID)
			}
			queued := ""
			require.Eventually(t, func() bool {
				for _, id := range ids {
					r, err := b.store.QueuedBehindLimit(context.Background(), id)
					require.NoError(t, err)
					if r != "" {
						queued = r
						return true
					}
				}
				return false
			}, 10*time.Second, 5*time.Millisecond, "no run said it was queued")
			require.Contains(t, queued, tt.want)
			for _, id := range ids {
				waitStatus(t, b, id, engine.StatusCompleted)
			}
			require.EqualValues(t, 1, most.Load(), "two runs executed at once")
			for _, id := range ids {
				r, err := b.store.QueuedBehindLimit(context.Background(), id)
				require.NoError(t, err)
				require.Empty(t, r)
			}
		})
	}
}
