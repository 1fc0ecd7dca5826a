package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// A workflow written in Go has no CheckStart: it starts at its entry
// (recorded as a start there), and anywhere else, or with state given,
// is refused on the field "from".
func TestStartAtAGoWorkflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ok := func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
		return engine.OK, nil, nil
	}
	wf := &engine.Workflow{Name: "two", Entry: "a", Steps: []engine.StepDef{
		{ID: "a", Handler: ok, Next: engine.Next{engine.OK: "b"}},
		{ID: "b", Handler: ok, Next: engine.Next{engine.OK: engine.End}},
	}}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	_, err := b.eng.StartAt(ctx, "two", nil, "b", nil, "ada")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["from"], `starts only at its first stage "a"`)
	_, err = b.eng.StartAt(ctx, "two", nil, "a", engine.State{"x": []byte("1")}, "ada")
	require.Contains(t, fault.ErrorFields(err)["from"], "written in Go")
	_, err = b.eng.StartAt(ctx, "two", nil, "c", nil, "ada")
	require.Contains(t, fault.ErrorFields(err)["from"], `no stage "c" (its stages: a, b)`)

	r, err := b.eng.StartAt(ctx, "two", nil, "a", nil, "ada")
	require.NoError(t, err)
	require.Equal(t, engine.StatusCompleted, b.advance(t, r.ID).Status)
	from, err := b.store.StartOf(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, &engine.StartOrigin{Stage: "a", Given: []string{}, By: "ada"}, from)
}
