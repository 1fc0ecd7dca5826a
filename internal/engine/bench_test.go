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
// `engine: step_commit_ratio=R`. Run with -benchtime=1x (make bench).
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

	var stepTime, bareTime time.Duration
	var transitions, commits int
	b.ResetTimer()
	for range b.N {
		// Alternate rounds so drift in the machine's load hits both alike.
		for round := 0; round < 5; round++ {
			r, err := eng.Start(ctx, "long", nil)
			require.NoError(b, err)
			t0 := time.Now()
			require.NoError(b, eng.Advance(ctx, r.ID))
			stepTime += time.Since(t0)
			transitions += steps + 1 // +1: pending → running
			t0 = time.Now()
			for i := 0; i < steps+1; i++ {
				tx, err := raw.Begin()
				require.NoError(b, err)
				_, err = tx.Stmt(insert).Exec("x")
				require.NoError(b, err)
				require.NoError(b, tx.Commit())
			}
			bareTime += time.Since(t0)
			commits += steps + 1
		}
	}
	b.StopTimer()
	perStep := stepTime / time.Duration(transitions)
	perBare := bareTime / time.Duration(commits)
	ratio := float64(perStep) / float64(perBare)
	b.ReportMetric(ratio, "step_commit_ratio")
	b.ReportMetric(float64(perStep.Microseconds()), "µs/transition")
	fmt.Printf("engine: step_commit_ratio=%.2f (transition %s, bare commit %s, %d each)\n", ratio, perStep, perBare, transitions)
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
