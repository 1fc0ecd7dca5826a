package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
)

const startSrc = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: pipeline}
params:
  - {name: topic, type: string, default: bees}
context: {min: 2}
stages:
  - id: fetch
    type: skill
    skill: echo
    with: {count: 5, topic: "{{ params.topic }}"}
  - id: choose
    type: set
    set: {enough: "outputs.fetch.count >= context.min", label: "context.prefix + params.topic"}
  - id: report
    type: skill
    skill: echo
    with: {enough: "{{ context.enough }}", label: "{{ context.label }}"}
`

// A run may start at any stage given what the stages from there read
// before writing it; each missing value is named; the run records where
// it started and runs from there only.
func TestStartAtAStage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls counter
	wf := compile(t, startSrc, flow.Skills{"echo": echo(&calls)})
	b := setup(t, "", nil, wf)

	// choose reads outputs.fetch.count (fetch is skipped) and
	// context.prefix, which a run from the start lacks too: not needed.
	_, err := b.eng.StartAt(ctx, "pipeline", nil, "choose", nil, "ada")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Equal(t, map[string]string{"outputs.fetch.count": `is needed: stage "choose" reads it`}, fault.ErrorFields(err))

	_, err = b.eng.StartAt(ctx, "pipeline", nil, "nowhere", nil, "ada")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["from"], `no stage "nowhere"`)

	given, err := flow.StartState(map[string]any{"x": 1}, map[string]map[string]any{"nope": {}})
	require.NoError(t, err)
	_, err = b.eng.StartAt(ctx, "pipeline", nil, "choose", given, "ada")
	require.Equal(t, map[string]string{"outputs.fetch.count": `is needed: stage "choose" reads it`, "outputs.nope": `there is no stage "nope"`}, fault.ErrorFields(err))

	given, err = flow.StartState(map[string]any{"prefix": "on "}, map[string]map[string]any{"fetch": {"count": 1}})
	require.NoError(t, err)
	r, err := b.eng.StartAt(ctx, "pipeline", map[string]any{"topic": "wasps"}, "choose", given, "ada")
	require.NoError(t, err)
	require.Equal(t, "choose", r.Step)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"choose:ok", "report:ok"}, b.steps(t, r.ID))
	require.Equal(t, 0, calls.get("fetch"), "stages before the start do not run")
	require.Equal(t, map[string]any{"enough": false, "label": "on wasps"}, outputsOf(t, r)["report"])
	from, err := b.store.StartOf(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, &engine.StartOrigin{Stage: "choose", Given: []string{"context.prefix", "outputs.fetch"}, By: "ada"}, from)

	// From report: choose's context is needed.
	_, err = b.eng.StartAt(ctx, "pipeline", nil, "report", nil, "ada")
	require.Equal(t, map[string]string{"context.enough": `is needed: stage "report" reads it`, "context.label": `is needed: stage "report" reads it`}, fault.ErrorFields(err))

	// An ordinary run records no start.
	r = b.run(t, "pipeline", nil)
	from, err = b.store.StartOf(ctx, r.ID)
	require.NoError(t, err)
	require.Nil(t, from)
}
