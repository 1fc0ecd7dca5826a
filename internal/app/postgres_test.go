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
)

// pg is the test binary's throwaway PostgreSQL (internal/pgtest), started
// by the first test that asks for a database.
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

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
