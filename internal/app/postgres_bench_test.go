package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/pgtest"
	"quarry/internal/store"
)

// sayIfSkipped prints a figure-shaped line when b was skipped (no
// PostgreSQL here), so `make bench`, which shows only figure lines, says
// why the PostgreSQL figures are missing; the reason is in bench.out.
func sayIfSkipped(b *testing.B) {
	if b.Skipped() {
		fmt.Printf("postgres: skipped %s (PostgreSQL is not installed; scripts/setup-postgres.sh installs it)\n", b.Name())
	}
}

// durablePG are the settings PostgreSQL ships with, which pgtest's
// throwaway defaults turn off: every commit is flushed to disk, as
// SQLite's synchronous=FULL does, so the two databases' figures compare
// like with like.
func durablePG() pgtest.Options {
	return pgtest.Options{Settings: map[string]string{
		"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on", "autovacuum": "on",
	}}
}

// benchStages is how many stages a benchmark run has, and benchStageWork
// how many bytes each stage hashes: a small workflow whose stages do a
// little CPU work (about a parse's worth) and write a small result.
const (
	benchStages    = 5
	benchStageWork = 256 << 10
)

// benchWorkflow is the benchmark's workflow: benchStages stages in a line,
// no gate, each hashing benchStageWork bytes and storing the digest; ran
// counts the stages this replica ran, so the benchmark can show that
// River spread the work.
func benchWorkflow(ran *atomic.Int64) *engine.Workflow {
	buf := []byte(strings.Repeat("quarry ", benchStageWork/7+1))[:benchStageWork]
	stage := func(_ context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		ran.Add(1)
		sum := sha256.Sum256(append([]byte(sc.RunID+sc.StepID), buf...))
		out, err := json.Marshal(fmt.Sprintf("%x", sum))
		if err != nil {
			return "", nil, err
		}
		return engine.OK, engine.Update{sc.StepID: out}, nil
	}
	wf := &engine.Workflow{Name: "bench", Entry: "s1"}
	for i := 1; i <= benchStages; i++ {
		next := engine.End
		if i < benchStages {
			next = fmt.Sprintf("s%d", i+1)
		}
		wf.Steps = append(wf.Steps, engine.StepDef{ID: fmt.Sprintf("s%d", i), Handler: stage, Next: engine.Next{engine.OK: next}})
	}
	return wf
}

// BenchmarkPostgresReplicas measures how many runs per second 1, 2 and 3
// replicas sharing one PostgreSQL database complete, and prints
// `postgres: runs_per_s replicas=R <x> ratio=<x/x₁>` for each, with
// every commit flushed to disk (PostgreSQL's defaults), then the same as
// `postgres: runs_per_s_async_commit …` with synchronous_commit off (an
// operator's choice: a crash may lose the last commits, never corrupts).
// The replicas are app.App instances in this process, each with its own
// store, connection pools and River client (4 run workers), exactly as
// `quarry serve` builds them; only River decides which replica runs which
// job, and the line says how many stages each ran. They share this
// process's 2 cores with PostgreSQL, as separate processes would. A round
// is benchRuns runs, started concurrently through the replicas in turn (as
// a load balancer would spread API calls), timed from the first start to
// the last run's completion; the line also gives the CPU this process
// used (in cores) and the machine's load average, since other work on the
// machine moves the figures. Run with -benchtime=1x.
func BenchmarkPostgresReplicas(b *testing.B) {
	defer sayIfSkipped(b)
	srv := pgtest.New(b, durablePG())
	for _, mode := range []struct {
		name, metric string
		async        bool
	}{{"flushed", "runs_per_s", false}, {"async_commit", "runs_per_s_async_commit", true}} {
		b.Run(mode.name, func(b *testing.B) {
			var single float64
			for _, replicas := range []int{1, 2, 3} {
				b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
					perSec := replicasRound(b, srv, replicas, mode.async, mode.metric, single)
					if replicas == 1 {
						single = perSec
					}
				})
			}
		})
	}
}

// replicasRound measures one figure of BenchmarkPostgresReplicas on a new
// database of srv: runs per second on that many replicas, printed as
// metric with its ratio to single (when known), and returns it.
func replicasRound(b *testing.B, srv *pgtest.Server, replicas int, async bool, metric string, single float64) float64 {
	const (
		benchRuns = 120
		starters  = 6 // concurrent clients starting runs
		budget    = 60 * time.Second
	)
	url, err := srv.NewDatabase(b.Context(), "bench")
	require.NoError(b, err)
	if async {
		conn, err := pgx.Connect(b.Context(), url)
		require.NoError(b, err)
		_, err = conn.Exec(b.Context(), "ALTER DATABASE "+pgx.Identifier{conn.Config().Database}.Sanitize()+" SET synchronous_commit = off")
		require.NoError(b, errors.Join(err, conn.Close(b.Context())))
	}
	ran := make([]atomic.Int64, replicas)
	apps := make([]*app.App, replicas)
	for i := range apps {
		apps[i] = replicaOn(b, url, app.WithoutDemoLibrary(), app.WithWorkflowsFrom(func(*store.Store) (*engine.Registry, error) {
			return engine.NewRegistry(benchWorkflow(&ran[i]))
		}))
	}
	// A warm-up round: River's leader election, the pools' connections
	// and prepared statements are not what is timed.
	runRound(b, apps, 4*replicas, starters, budget)
	for i := range ran {
		ran[i].Store(0)
	}
	var took, cpu time.Duration
	for b.Loop() {
		before := cpuTime(b)
		took = runRound(b, apps, benchRuns, starters, budget)
		cpu = cpuTime(b) - before
	}
	perSec := float64(benchRuns) / took.Seconds()
	b.ReportMetric(perSec, "runs/s")
	stages := make([]string, replicas)
	for i := range ran {
		stages[i] = fmt.Sprint(ran[i].Load())
	}
	ratio := ""
	if replicas > 1 && single > 0 {
		ratio = fmt.Sprintf(" ratio=%.2f", perSec/single)
	}
	fmt.Printf("postgres: %s replicas=%d %.1f%s (%d runs of %d stages in %s; stages run per replica %s; quarry used %.2f cores; load average %s)\n",
		metric, replicas, perSec, ratio, benchRuns, benchStages, took.Round(time.Millisecond), strings.Join(stages, "/"),
		cpu.Seconds()/took.Seconds(), loadAverage())
	return perSec
}

// loadAverage is the machine's one-minute load average ("?" where
// /proc/loadavg does not exist).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// runRound starts n runs of the bench workflow through apps in turn, from
// starters goroutines, waits until every one has completed and returns
// how long that took. It fails if any run ends otherwise or the round
// outlasts budget.
func runRound(b *testing.B, apps []*app.App, n, starters int, budget time.Duration) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), budget)
	defer cancel()
	before := completed(b, apps[0])
	t0 := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, starters)
	for range starters {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if _, err := apps[i%len(apps)].Engine().Start(ctx, "bench", nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	// Polled: one count a 25 ms costs the database little and errs by
	// less than 1 % of a round.
	for completed(b, apps[0]) < before+n {
		select {
		case <-ctx.Done():
			b.Fatalf("%d of %d runs completed within %s", completed(b, apps[0])-before, n, budget)
		case <-time.After(25 * time.Millisecond):
		}
	}
	took := time.Since(t0)
	for _, status := range []engine.Status{engine.StatusFailed, engine.StatusEscalated} {
		list, err := apps[0].Store().ListRuns(b.Context(), runsIn(status))
		require.NoError(b, err)
		require.Zero(b, list.Total, "runs %s", status)
	}
	return took
}

// completed counts the database's completed runs.
func completed(b *testing.B, a *app.App) int {
	b.Helper()
	list, err := a.Store().ListRuns(b.Context(), runsIn(engine.StatusCompleted))
	require.NoError(b, err)
	return list.Total
}

// runsIn is a one-run page of the runs in status, for its Total.
// ListRuns wants a parameter to show as a run's text; the bench
// workflow has none, so any name does.
func runsIn(status engine.Status) store.RunFilter {
	return store.RunFilter{Status: status, TextParam: "question", Limit: 1}
}

// commitTimer is a store that times each of the engine's commits (one
// step's record and the run's next state, in one transaction). Only
// Engine.Advance, called by the benchmark itself, commits (no workers),
// so took needs no lock.
type commitTimer struct {
	*store.Store
	took []time.Duration
}

func (s *commitTimer) Commit(ctx context.Context, c engine.Commit) (engine.Run, error) {
	t0 := time.Now()
	r, err := s.Store.Commit(ctx, c)
	s.took = append(s.took, time.Since(t0))
	return r, err
}

// BenchmarkPostgresStepCommit measures the latency of one step's commit
// (Store.Commit: the step record and the run's next state in one
// transaction, on PostgreSQL behind the write lock) on PostgreSQL with
// durable settings and on a SQLite file (synchronous=FULL), in alternating
// rounds so drift in the machine's load hits both alike, one writer at a
// time (no replica competes), and prints `postgres: step_commit_ms p50=…
// p95=… sqlite_p50=… sqlite_p95=…`. Run with -benchtime=1x.
func BenchmarkPostgresStepCommit(b *testing.B) {
	const (
		rounds = 6
		steps  = 50
	)
	ctx := context.Background()
	defer sayIfSkipped(b)
	srv := pgtest.New(b, durablePG())
	url, err := srv.NewDatabase(ctx, "commit")
	require.NoError(b, err)
	ids := make([]string, steps)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%02d", i)
	}
	wf := &engine.Workflow{Name: "line", Entry: ids[0]}
	for i, id := range ids {
		next := engine.End
		if i+1 < len(ids) {
			next = ids[i+1]
		}
		wf.Steps = append(wf.Steps, engine.StepDef{ID: id, Next: engine.Next{engine.OK: next},
			Handler: func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
				return engine.OK, engine.Update{"at": json.RawMessage(`"` + id + `"`)}, nil
			}})
	}
	open := func(dsn string) (*engine.Engine, *commitTimer) {
		st, err := store.Open(ctx, dsn, store.Options{})
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, st.Close()) })
		timed := &commitTimer{Store: st}
		reg, err := engine.NewRegistry(wf)
		require.NoError(b, err)
		eng, err := engine.New(engine.Config{Store: timed, Registry: reg})
		require.NoError(b, err)
		return eng, timed
	}
	pgEng, pgTimes := open(url)
	liteEng, liteTimes := open(filepath.Join(b.TempDir(), "commit.db"))
	advance := func(eng *engine.Engine, st *commitTimer) {
		r, err := eng.Start(ctx, "line", nil)
		require.NoError(b, err)
		require.NoError(b, eng.Advance(ctx, r.ID))
		done, err := st.Run(ctx, r.ID)
		require.NoError(b, err)
		require.Equal(b, engine.StatusCompleted, done.Status, done.Error)
	}
	advance(pgEng, pgTimes) // warm-up: connections, prepared statements
	advance(liteEng, liteTimes)
	pgTimes.took, liteTimes.took = nil, nil
	for b.Loop() {
		for range rounds {
			advance(pgEng, pgTimes)
			advance(liteEng, liteTimes)
		}
	}
	pg50, pg95 := percentiles(pgTimes.took)
	lite50, lite95 := percentiles(liteTimes.took)
	b.ReportMetric(pg95, "pg_p95_ms")
	fmt.Printf("postgres: step_commit_ms p50=%.2f p95=%.2f sqlite_p50=%.2f sqlite_p95=%.2f (%d commits each, one writer, both flushed to disk)\n",
		pg50, pg95, lite50, lite95, len(pgTimes.took))
}

// percentiles are the 50th and 95th percentiles of d, in milliseconds.
func percentiles(d []time.Duration) (p50, p95 float64) {
	slices.Sort(d)
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000 }
	return at(0.5), at(0.95)
}
