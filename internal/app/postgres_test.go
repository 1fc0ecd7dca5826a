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
// of an installation is: its own process state, the shared database.
func replicaOn(t *testing.T, url string) *app.App {
	t.Helper()
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "spool.db"), DatabaseURL: url}
	a, err := newApp(t, context.Background(), cfg, app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(cfg.Search, st, slog.New(slog.DiscardHandler))
	}))
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
