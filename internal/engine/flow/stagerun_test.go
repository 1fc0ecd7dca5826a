package flow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

// TestStageRunsRecordStatusAndMaxAttempts: the audit trail says what
// each record left its stage in and how many attempts the stage had: a
// failed attempt that is retried and the last one are failed, a stage
// whose condition does not hold is skipped, and GET /api/runs/:id's
// stages (engine.Progress) carry the bound too.
func TestStageRunsRecordStatusAndMaxAttempts(t *testing.T) {
	t.Parallel()
	wf := compile(t, head+`metadata: {name: flaky}
stages:
  - id: maybe
    type: set
    condition: "false"
    set: {x: "1"}
  - id: boom
    type: skill
    skill: boom
    on_error: {retry: 2, then: fail}
`, flow.Skills{"boom": func(ctx context.Context, in flow.Input) (map[string]any, error) { return nil, errors.New("no") }})
	b := setup(t, "", nil, wf)
	r := b.run(t, "flaky", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	recs, err := b.store.StepRuns(context.Background(), r.ID)
	require.NoError(t, err)
	var got []string
	var max []int
	for _, rec := range recs {
		got = append(got, rec.Step+":"+rec.Outcome+":"+rec.Status())
		max = append(max, rec.MaxAttempts)
	}
	require.Equal(t, []string{"maybe:skip:skipped", "boom:error:failed", "boom:error:failed", "boom:failed:failed"}, got)
	require.Equal(t, []int{1, 3, 3, 3}, max)

	trail, err := b.store.StepTrail(context.Background(), r.ID)
	require.NoError(t, err)
	stages, _ := engine.Progress(wf, r, trail, nil)
	require.Equal(t, "maybe", stages[0].ID)
	require.Equal(t, 1, stages[0].MaxAttempts)
	require.Equal(t, engine.StageFailed, stages[1].State)
	require.Equal(t, 3, stages[1].Attempts)
	require.Equal(t, 3, stages[1].MaxAttempts)
}
