package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// BenchmarkStepCommitRatio measures, in one run on one database, the time
// per persisted step transition (a no-op step advanced by the engine: audit
// row + run update in one transaction) against a bare single-row commit
// with the same connection settings, and prints
// `engine: step_commit_ratio=R` (R: the median over alternating rounds of
// transition time ÷ bare commit time; both are fsync-bound, and one
// stalled fsync can triple a single round). Run with -benchtime=1x.
func BenchmarkStepCommitRatio(b *testing.B) {
	const steps = 400
	ids := make([]string, steps)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%03d", i)
	}
	wf := linear("long", nil, ids...)
	for i := range wf.Steps {
		wf.Steps[i].Handler = noop
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "bench.db")
	ctx := context.Background()
	st, err := store.Open(ctx, path, store.Options{})
	require.NoError(b, err)
	defer st.Close()
	reg, err := engine.NewRegistry(wf)
	require.NoError(b, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg})
	require.NoError(b, err)
	raw, err := store.OpenRaw(path, "")
	require.NoError(b, err)
	defer raw.Close()
	_, err = raw.Exec(`CREATE TABLE bench_bare (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
	require.NoError(b, err)
	// Prepared once, like the store's hot-path statements: like with like.
	insert, err := raw.Prepare(`INSERT INTO bench_bare (v) VALUES (?)`)
	require.NoError(b, err)
	defer insert.Close()

	// Rounds alternate the two measurements so drift in the machine's load
	// (fsync time on a shared VM varies by 2x) hits both alike; the
	// reported ratio is the median of the per-round ratios.
	const rounds = 15
	var ratios []float64
	var stepTime, bareTime time.Duration
	var transitions, commits int
	b.ResetTimer()
	for range b.N {
		for round := 0; round < rounds; round++ {
			r, err := eng.Start(ctx, "long", nil)
			require.NoError(b, err)
			t0 := time.Now()
			require.NoError(b, eng.Advance(ctx, r.ID))
			st := time.Since(t0)
			t0 = time.Now()
			for i := 0; i < steps+1; i++ {
				tx, err := raw.Begin()
				require.NoError(b, err)
				_, err = tx.Stmt(insert).Exec("x")
				require.NoError(b, err)
				require.NoError(b, tx.Commit())
			}
			bt := time.Since(t0)
			stepTime += st
			bareTime += bt
			transitions += steps + 1 // +1: pending → running
			commits += steps + 1
			ratios = append(ratios, float64(st)/float64(bt))
		}
	}
	b.StopTimer()
	slices.Sort(ratios)
	ratio := ratios[len(ratios)/2]
	perStep := stepTime / time.Duration(transitions)
	perBare := bareTime / time.Duration(commits)
	b.ReportMetric(ratio, "step_commit_ratio")
	b.ReportMetric(float64(perStep.Microseconds()), "µs/transition")
	fmt.Printf("engine: step_commit_ratio=%.2f (median of %d rounds, range %.2f-%.2f; transition %s, bare commit %s, %d each)\n",
		ratio, len(ratios), ratios[0], ratios[len(ratios)-1], perStep, perBare, transitions)
}

// BenchmarkResumeLatency measures the time from a decision being recorded
// (Decide returned: decision and resume job committed) to the resumed run's
// next step starting in a River worker, and prints
// `engine: resume_latency_ms p50=… p95=…`.
func BenchmarkResumeLatency(b *testing.B) {
	const runs = 60
	wf := &engine.Workflow{Name: "gate", Entry: "ask", Steps: []engine.StepDef{
		{ID: "ask", Gate: reviewGate(kindNote), Next: engine.Next{engine.OK: "after"}},
		{ID: "after", Handler: noop, Next: engine.Next{engine.OK: engine.End}},
	}}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "latency.db"), store.Options{})
	require.NoError(b, err)
	defer st.Close()
	reg, err := engine.NewRegistry(wf)
	require.NoError(b, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: engine.Pending()})
	require.NoError(b, err)
	require.NoError(b, st.StartWorkers(ctx, eng, store.QueueOptions{}))
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		for i := 0; i < runs; i++ {
			// Subscribe before starting: the worker may reach the gate
			// before Start returns.
			events, stop := eng.Events().Subscribe("")
			r, err := eng.Start(ctx, "gate", nil)
			require.NoError(b, err)
			cpID := ""
			for ev := range events {
				if ev.RunID == r.ID && ev.Type == engine.EventCheckpoint {
					got, err := st.Run(ctx, r.ID)
					require.NoError(b, err)
					cpID = got.CheckpointID
					break
				}
			}
			require.NoError(b, eng.Decide(ctx, r.ID, cpID, by("bench")))
			t0 := time.Now()
			for ev := range events {
				if ev.RunID == r.ID && ev.Type == engine.EventStepStarted && ev.Step == "after" {
					lat = append(lat, time.Since(t0))
					break
				}
			}
			stop()
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.95), "p95_ms")
	fmt.Printf("engine: resume_latency_ms p50=%.1f p95=%.1f (n=%d)\n", p(0.5), p(0.95), len(lat))
}
