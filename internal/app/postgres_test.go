package app_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/pgtest"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// pg is the test binary's throwaway PostgreSQL (internal/pgtest), started
// by the first test that asks for a database (every test's app, with
// QUARRY_TEST_STORE=postgres).
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// newApp is app.New for the tests: with QUARRY_TEST_STORE=postgres the
// app runs on a database standing for cfg.DB (storetest.DatabaseURL), so a
// test that starts a second app on the same cfg (a restart) reopens it.
func newApp(t testing.TB, ctx context.Context, cfg app.Config, opts ...app.Option) (*app.App, error) {
	t.Helper()
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = storetest.DatabaseURL(t, &pg, cfg.DB)
	}
	return app.New(ctx, cfg, opts...)
}

// replicaOn is a Quarry app on the PostgreSQL database url, as a replica
// of an installation is: its own process state, the shared database. It
// runs the builtin workflows unless opts say otherwise, and is closed when
// t ends.
func replicaOn(t testing.TB, url string, opts ...app.Option) *app.App {
	t.Helper()
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "spool.db"), DatabaseURL: url}
	opts = append([]app.Option{app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(cfg.Search, st, slog.New(slog.DiscardHandler))
	})}, opts...)
	a, err := app.New(context.Background(), cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

// TestReplicasShareARun: two replicas of one PostgreSQL installation: a
// search run started on the first waits at its review on both; the second
// replica's pages hear of the run's steps live, whichever replica ran
// them (the event relay); deciding on the second finishes the run, which
// the first then reads as completed.
func TestReplicasShareARun(t *testing.T) {
	t.Parallel()
	url := pg.NewDatabase(t)
	first := replicaOn(t, url)
	second := replicaOn(t, url)
	heard, stop := second.Engine().Events().Subscribe("")
	defer stop()

	run, err := first.Engine().Start(context.Background(), pipeline.Name, map[string]any{
		pipeline.ParamQuestion: "sleep and memory consolidation", pipeline.ParamSources: []string{research.SourceLocal},
		pipeline.ParamStrategyCheckpoint: false})
	require.NoError(t, err)
	r := waitRun(t, second, run.ID, atGate)
	require.Equal(t, pipeline.StepReview, r.Step)

	checkpointHeard := false
	deadline := time.After(20 * time.Second)
	for !checkpointHeard {
		select {
		case ev := <-heard:
			checkpointHeard = ev.RunID == run.ID && ev.Type == engine.EventCheckpoint
		case <-deadline:
			t.Fatal("the second replica never heard of the run's checkpoint")
		}
	}

	require.NoError(t, second.Engine().Decide(context.Background(), run.ID, r.CheckpointID,
		engine.Decision{Action: engine.Approve, DecidedBy: "Ann"}))
	done := waitRun(t, first, run.ID, ended)
	require.Equal(t, engine.StatusCompleted, done.Status, done.Error)
}

// timedDef waits on a delay, then at a gate nobody answers: its timer
// takes the default option.
const timedDef = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: timed}
stages:
  - {id: pause, type: delay, duration: 1s, on_complete: ask}
  - id: ask
    type: gate
    options:
      - {label: Go, next: complete}
    timeout: 1s
    on_timeout: {default: Go}
`

// TestReplicasFireTimersOnce: three replicas of one PostgreSQL
// installation, all with workers, run a workflow whose delay and gate
// timer are River jobs scheduled for later: River's scheduler (on the
// elected leader) makes each due once, one replica works it, and the run
// ends with the gate decided once, by its timer, each stage committed as
// often as on one SQLite process.
func TestReplicasFireTimersOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "timed.yaml"), []byte(timedDef), 0o644))
	trail := func(a *app.App, runID string) ([]string, int) {
		t.Helper()
		recs, err := a.Store().StepRuns(context.Background(), runID)
		require.NoError(t, err)
		var out []string
		for _, r := range recs {
			out = append(out, r.Step+":"+r.Outcome)
		}
		cps, err := a.Store().Checkpoints(context.Background(), runID)
		require.NoError(t, err)
		decided := 0
		for _, cp := range cps {
			if cp.Decision != nil {
				require.Equal(t, engine.TimeoutBy, cp.Decision.DecidedBy)
				decided++
			}
		}
		return out, decided
	}
	start := func(a *app.App) engine.Run {
		t.Helper()
		r, err := a.Engine().Start(context.Background(), "timed", nil)
		require.NoError(t, err)
		return r
	}

	// The reference: one process on SQLite.
	one := workflowApp(t, app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir})
	ref := start(one)
	require.Equal(t, engine.StatusCompleted, waitRun(t, one, ref.ID, ended).Status)
	want, decided := trail(one, ref.ID)
	require.Equal(t, 1, decided)

	url := pg.NewDatabase(t)
	var replicas []*app.App
	for range 3 {
		replicas = append(replicas, workflowApp(t, app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "spool.db"), DatabaseURL: url, WorkflowsDir: dir}))
	}
	var runs []engine.Run
	for i := range 6 {
		runs = append(runs, start(replicas[i%3]))
	}
	for i, r := range runs {
		done := waitRun(t, replicas[(i+1)%3], r.ID, ended)
		require.Equal(t, engine.StatusCompleted, done.Status, done.Error)
		got, decided := trail(replicas[(i+2)%3], r.ID)
		require.Equal(t, want, got, "run %s: each stage once, as on one process", r.ID)
		require.Equal(t, 1, decided, "run %s: its gate decided once, by its timer", r.ID)
	}
}

// workflowApp is an app of cfg with the workflows of cfg.WorkflowsDir.
func workflowApp(t *testing.T, cfg app.Config) *app.App {
	t.Helper()
	a, err := app.New(context.Background(), cfg, app.WithoutDemoLibrary())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}
