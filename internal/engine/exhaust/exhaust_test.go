package exhaust_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/exhaust"
)

func TestDomains(t *testing.T) {
	t.Parallel()
	o := exhaust.Options{MaxSpan: 3, Constants: map[string]any{"q": "sleep"}}
	cases := []struct {
		p    engine.Param
		want []any
	}{
		{engine.Param{Name: "b", Type: engine.ParamBool}, []any{false, true}},
		{engine.Param{Name: "n", Type: engine.ParamInt, Min: engine.Bound(1), Max: engine.Bound(3), Default: 2}, []any{1, 2, 3}},
		{engine.Param{Name: "n", Type: engine.ParamInt, Min: engine.Bound(1), Max: engine.Bound(20), Default: 5}, []any{1, 5, 20}},
		{engine.Param{Name: "n", Type: engine.ParamInt, Default: 5}, []any{5}},
		{engine.Param{Name: "f", Type: engine.ParamFloat, Min: engine.Bound(0), Max: engine.Bound(1), Default: 0.5}, []any{0.0, 0.5, 1.0}},
		{engine.Param{Name: "c", Type: engine.ParamString, Choices: []string{"x", "y"}, Default: "x"}, []any{"x", "y"}},
		{engine.Param{Name: "s", Type: engine.ParamString, Default: "d"}, []any{"d"}},
		{engine.Param{Name: "q", Type: engine.ParamString, Required: true}, []any{"sleep"}},
		{engine.Param{Name: "free", Type: engine.ParamString}, []any{""}},
		{engine.Param{Name: "l", Type: engine.ParamStrings, Choices: []string{"a", "b"}, Default: []string{"a", "b"}},
			[]any{[]string{"a"}, []string{"b"}, []string{"a", "b"}}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, exhaust.Domain(c.p, o), "%+v", c.p)
	}
}

func TestCombinationsAndSampling(t *testing.T) {
	t.Parallel()
	ps := []engine.Param{
		{Name: "a", Type: engine.ParamBool},
		{Name: "n", Type: engine.ParamInt, Min: engine.Bound(1), Max: engine.Bound(3), Default: 1},
	}
	all := exhaust.Combinations(ps, exhaust.Options{MaxSpan: 5})
	require.Equal(t, 6, all.Total)
	require.False(t, all.Sampled)
	require.Len(t, all.Combos, 6)
	seen := map[string]bool{}
	for _, c := range all.Combos {
		seen[fmtCombo(c)] = true
	}
	require.Len(t, seen, 6, "every combination once")

	some := exhaust.Combinations(ps, exhaust.Options{MaxSpan: 5, Budget: 4, Seed: 1})
	require.Equal(t, 6, some.Total)
	require.True(t, some.Sampled)
	require.Len(t, some.Combos, 4)
	again := exhaust.Combinations(ps, exhaust.Options{MaxSpan: 5, Budget: 4, Seed: 1})
	require.Equal(t, some.Combos, again.Combos, "a seed gives the same sample")
}

func fmtCombo(c map[string]any) string { return fmt.Sprint(c["a"], c["n"]) }

func TestCheck(t *testing.T) {
	t.Parallel()
	w := &engine.Workflow{Name: "w", Entry: "a", MaxIterations: 2, Steps: []engine.StepDef{
		{ID: "a", Next: engine.Next{engine.OK: "b"}},
		{ID: "b", Next: engine.Next{engine.OK: "c", engine.Iterate: "a"}},
		{ID: "c", Next: engine.Next{engine.OK: engine.End}},
	}}
	rec := func(step string, it int) engine.StepRecord { return engine.StepRecord{Step: step, Iteration: it} }
	done := engine.Run{Status: engine.StatusCompleted, Iteration: 2}
	require.NoError(t, exhaust.Check(w, done, []engine.StepRecord{rec("a", 1), rec("b", 1), rec("b", 1), rec("a", 2), rec("b", 2), rec("c", 2)}))
	require.ErrorContains(t, exhaust.Check(w, done, []engine.StepRecord{rec("a", 1), rec("c", 1)}), `from "a" to "c", which is not an edge`)
	require.ErrorContains(t, exhaust.Check(w, done, []engine.StepRecord{rec("a", 1), rec("b", 1), rec("a", 3)}), "iteration went from 1 to 3")
	require.ErrorContains(t, exhaust.Check(w, engine.Run{Status: engine.StatusCompleted, Iteration: 3}, nil), "past its bound 2")
	require.ErrorContains(t, exhaust.Check(w, engine.Run{Status: engine.StatusEscalated, Step: "b"}, nil), "ended escalated")
}
