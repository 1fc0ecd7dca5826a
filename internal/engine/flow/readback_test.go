package flow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
)

// A native step's read-back postcondition runs inside the transaction
// that commits its result: when it fails the whole commit is rolled back
// (the step's state write, its audit record, its move on), and the
// attempt follows on_error like any failed attempt.
func TestReadBackFailureRollsTheStepBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const src = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: store}
stages:
  - id: save
    type: skill
    skill: go.save
    on_error: {retry: 1, then: {goto: fallback}}
    on_complete: complete
  - id: fallback
    type: set
    set: {fell_back: "true"}
`
	compileRB := func(fails int) (*engine.Workflow, *counter) {
		var calls counter
		save := func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
			u, err := engine.NewUpdate(map[string]any{"papers": []string{"a", "b"}})
			return engine.OK, u, err
		}
		rb := engine.ReadBack{Name: "papers stored", Check: func(ctx context.Context, w engine.Written, u engine.Update) error {
			raw, ok, err := w.State(ctx, "papers")
			require.NoError(t, err)
			require.True(t, ok, "the transaction holds the write")
			require.JSONEq(t, string(u["papers"]), string(raw))
			if calls.inc("check") <= fails {
				return errors.New("2 papers written, 1 stored")
			}
			return nil
		}}
		d, err := def.Load("s.yaml", []byte(src), def.Options{Skills: []string{"go.save"}})
		require.NoError(t, err)
		wf, err := flow.CompileWith(d, flow.Options{Natives: flow.Natives{"go.save": save},
			ReadBacks: map[string][]engine.ReadBack{"go.save": {rb}}})
		require.NoError(t, err)
		return wf, &calls
	}

	wf, calls := compileRB(99)
	b := setup(t, "", nil, wf)
	r := b.run(t, "store", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 2, calls.get("check"))
	require.Equal(t, []string{"save:error", "save:goto:fallback", "fallback:ok"}, b.steps(t, r.ID))
	_, kept := r.State["papers"]
	require.False(t, kept, "nothing of the step persisted")
	recs, err := b.store.StepRuns(ctx, r.ID)
	require.NoError(t, err)
	require.Contains(t, recs[0].Error, `postcondition "papers stored" failed on reading back what was written (rolled back): 2 papers written, 1 stored`)

	wf, calls = compileRB(1)
	b = setup(t, "", nil, wf)
	r = b.run(t, "store", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"save:error", "save:ok"}, b.steps(t, r.ID))
	require.JSONEq(t, `["a","b"]`, string(r.State["papers"]))
	require.Equal(t, 2, calls.get("check"))
}
