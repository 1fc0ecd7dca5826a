package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// moreWorkflow: work → ask (a gate: edit asks for more, approve ends);
// more goes to extend, which comes back to ask.
func moreWorkflow(c *counter) *engine.Workflow {
	gate := &engine.Gate{
		Kind: kindNote,
		Payload: func(ctx context.Context, sc engine.StepContext) (engine.Payload, error) {
			trail, _, err := engine.Get[[]string](sc.State, "trail")
			return notePayload{Text: joinTrail(trail)}, err
		},
		Apply: func(ctx context.Context, sc engine.StepContext, cp engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			if d.Action == engine.Edit {
				return engine.More, nil, nil
			}
			return engine.OK, nil, nil
		},
	}
	return &engine.Workflow{
		Name: "more", Entry: "work", MaxIterations: 1,
		Steps: []engine.StepDef{
			{ID: "work", Handler: appendStep(c), Next: engine.Next{engine.OK: "ask"}},
			{ID: "ask", Gate: gate, Next: engine.Next{engine.OK: engine.End, engine.More: "extend"}},
			{ID: "extend", Handler: appendStep(c), Next: engine.Next{engine.OK: "ask"}},
		},
	}
}

func joinTrail(trail []string) string {
	var out strings.Builder
	for _, s := range trail {
		out.WriteString(s + " ")
	}
	return out.String()
}

// TestMoreOutcome: a gate's More outcome runs the step it maps to and
// asks again with a new checkpoint showing what it added, in the same
// iteration (even at the loop bound, since it is not an iteration); a
// second decision on the first checkpoint is a conflict, so the step
// runs once per request.
func TestMoreOutcome(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{moreWorkflow(c)}})
	run := b.start(t, "more", nil)
	run = b.advance(t, run.ID)
	first := b.pending(t, run.ID)
	ctx := context.Background()
	more := engine.Decision{Action: engine.Edit, DecidedBy: "ann"}
	require.NoError(t, b.eng.Decide(ctx, run.ID, first.ID, more))
	require.Equal(t, fault.EConflict, fault.ErrorCode(b.eng.Decide(ctx, run.ID, first.ID, more)))
	run = b.advance(t, run.ID)
	require.Equal(t, engine.StatusWaiting, run.Status)
	second := b.pending(t, run.ID)
	require.NotEqual(t, first.ID, second.ID)
	require.Equal(t, 1, second.Iteration)
	p, err := engine.PayloadAs[notePayload](second)
	require.NoError(t, err)
	require.Equal(t, "work extend ", p.Text)
	require.Equal(t, 1, c.get("extend"))
	require.NoError(t, b.eng.Decide(ctx, run.ID, second.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann"}))
	run = b.advance(t, run.ID)
	require.Equal(t, engine.StatusCompleted, run.Status)
	require.Equal(t, 1, run.Iteration)
}
