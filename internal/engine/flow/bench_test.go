package flow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
)

// benchStage is the small stage both shapes run 100 times: a skill that
// waits 10 ms, as a call to a source or a webhook does.
const benchStage = 10 * time.Millisecond

// BenchmarkParallel100 runs 100 branches of a small stage as one
// parallel stage (for_each, join all; the default 8 branch workers) and
// the same 100 stages in sequence, each with the River workers a server
// runs, and prints `engine: parallel_100_ms=P sequential_100_ms=S
// ratio=P/S` measured in one run. Run with -benchtime=1x.
func BenchmarkParallel100(b *testing.B) {
	const n = 100
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("i%d", i)
	}
	var seq strings.Builder
	fmt.Fprintf(&seq, "%smetadata: {name: sequential}\nstages:\n", head)
	for i := range n {
		fmt.Fprintf(&seq, "  - {id: s%d, type: skill, skill: small, with: {item: %d}}\n", i, i)
	}
	par := head + `metadata: {name: parallel}
params: [{name: items, type: list}]
stages:
  - id: fan
    type: parallel
    for_each: params.items
    branches:
      - {id: one, type: skill, skill: small, with: {item: "{{ item }}"}}
`
	skills := flow.Skills{"small": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		select {
		case <-time.After(benchStage):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]any{"item": in.With["item"]}, nil
	}}
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir()+"/bench.db", store.Options{})
	require.NoError(b, err)
	defer st.Close()
	reg, err := engine.NewRegistry(compile(b, seq.String(), skills), compile(b, par, skills))
	require.NoError(b, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg})
	require.NoError(b, err)
	require.NoError(b, st.StartWorkers(ctx, eng, store.QueueOptions{}))
	defer st.StopWorkers(ctx)
	timed := func(wf string, params map[string]any) time.Duration {
		t0 := time.Now()
		r, err := eng.Start(ctx, wf, params)
		require.NoError(b, err)
		for {
			got, err := st.Run(ctx, r.ID)
			require.NoError(b, err)
			if got.IsComplete() {
				require.Equal(b, engine.StatusCompleted, got.Status, got.Error)
				return time.Since(t0)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	b.ResetTimer()
	for range b.N {
		p := timed("parallel", map[string]any{"items": items})
		s := timed("sequential", nil)
		fmt.Printf("engine: parallel_100_ms=%.0f sequential_100_ms=%.0f ratio=%.2f\n",
			float64(p.Microseconds())/1000, float64(s.Microseconds())/1000, float64(p)/float64(s))
	}
}
