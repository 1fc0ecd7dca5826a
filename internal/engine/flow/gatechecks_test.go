package flow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

type checkRow struct {
	Stage, Config, Result, Error string
	Iteration                    int
	Passed                       bool
}

func gateChecks(t *testing.T, b *bundle, id string) ([]checkRow, []engine.GateCheck) {
	t.Helper()
	cs, err := b.store.GateChecks(context.Background(), id)
	require.NoError(t, err)
	out := make([]checkRow, 0, len(cs))
	for i, c := range cs {
		require.Equal(t, flow.CheckCondition, c.Type)
		require.False(t, c.CheckedAt.IsZero())
		if i > 0 {
			require.GreaterOrEqual(t, c.Seq, cs[i-1].Seq)
		}
		out = append(out, checkRow{Stage: c.Stage, Config: c.Config, Result: string(c.Result), Error: c.Error, Iteration: c.Iteration, Passed: c.Passed})
	}
	return out, cs
}

// TestGateChecksAreRecordedWithTheirVisit: every condition a gate checks
// is a gate_checks row committed with the visit's step record (same seq),
// at every visit: passing, failing and looping back, failing the run, an
// expression that cannot be evaluated, and a gate that then waits for a
// person.
func TestGateChecksAreRecordedWithTheirVisit(t *testing.T) {
	t.Parallel()
	b := setup(t, "", nil, compile(t, loopDef("{goto: gave_up}"), flow.Skills{"echo": echo(&counter{})}))
	r := b.run(t, "loop", map[string]any{"target": 3})
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	rows, cs := gateChecks(t, b, r.ID)
	cond := "context.n >= params.target"
	require.Equal(t, []checkRow{
		{Stage: "enough", Config: cond, Result: "false", Iteration: 1},
		{Stage: "enough", Config: cond, Result: "false", Iteration: 1},
		{Stage: "enough", Config: cond, Result: "true", Iteration: 1, Passed: true},
	}, rows)
	// Each check's seq is its visit's step record: the 2nd, 4th and 6th
	// records (bump, enough, bump, enough, bump, enough, done) of a run
	// whose first commit (pending → running) wrote none.
	recs, err := b.store.StepRuns(context.Background(), r.ID)
	require.NoError(t, err)
	require.Len(t, recs, 7)
	seqs := []int64{cs[0].Seq, cs[1].Seq, cs[2].Seq}
	require.Equal(t, []int64{seqs[0], seqs[0] + 2, seqs[0] + 4}, seqs, "one visit of the gate every other record")
}

func TestGateChecksOfAFailedRunAndAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, "", nil, compile(t, head+`metadata: {name: strict}
params: [{name: n, type: int, required: true}, {name: xs, type: list, default: []}]
stages:
  - {id: check, type: gate, conditions: ["params.n > 2", "params.xs[3] == 'a'"]}
`, flow.Skills{}))
	r := b.run(t, "strict", map[string]any{"n": 1})
	require.Equal(t, engine.StatusFailed, r.Status)
	rows, _ := gateChecks(t, b, r.ID)
	require.Len(t, rows, 2, "the checks are committed with the failed run")
	require.Equal(t, checkRow{Stage: "check", Config: "params.n > 2", Result: "false", Iteration: 1}, rows[0])
	require.Equal(t, "null", rows[1].Result, "could not be evaluated")
	require.False(t, rows[1].Passed)
	require.NotEmpty(t, rows[1].Error)
}

func TestGateChecksBeforeAPersonDecides(t *testing.T) {
	t.Parallel()
	b := setup(t, "", engine.Pending(), compile(t, head+`metadata: {name: ask}
params: [{name: n, type: int, required: true}]
stages:
  - id: ask
    type: gate
    conditions: ["params.n > 2"]
    options:
      - {label: Go, next: complete}
`, flow.Skills{}))
	r := b.run(t, "ask", map[string]any{"n": 5})
	cp, _ := pendingCheckpoint(t, b, r)
	rows, _ := gateChecks(t, b, r.ID)
	require.Equal(t, []checkRow{{Stage: "ask", Config: "params.n > 2", Result: "true", Iteration: 1, Passed: true}}, rows,
		"committed with the checkpoint")
	require.NoError(t, b.eng.Decide(context.Background(), r.ID, cp.ID, flow.Choose("Go", "", "ada")))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	rows, _ = gateChecks(t, b, r.ID)
	require.Len(t, rows, 1, "the decision checks nothing again")
}
