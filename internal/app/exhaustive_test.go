package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/engine/exhaust"
	"quarry/internal/engine/flow"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
)

// exhaustiveBudget bounds the combinations run per workflow and script;
// a larger product is sampled (and the printed line says so).
const exhaustiveBudget = 8

// TestExhaustiveBuiltinWorkflows runs every built-in workflow (the search
// and the templates) once per combination of its parameters' domains
// (exhaust.Combinations: both booleans, each choice, bounded ints' values
// or bounds and default), under two scripted people — one taking the
// first option at every gate (approving the search at once), one taking
// the last (sending the search's review back until its bound) — each
// run to its end, timers passed by an injected clock, and checks every
// run against the invariants (exhaust.Check: completed, iterations
// bounded and +1 per loop, every move an edge of the graph, so gates come
// in order). It prints the suite's size, which make test shows.
func TestExhaustiveBuiltinWorkflows(t *testing.T) {
	// The app as main builds it (the search and the templates), its skills
	// searching the demo library.
	cfg, err := load(t, map[string]string{"QUARRY_DB": filepath.Join(t.TempDir(), "q.db"), "QUARRY_ADDR": "127.0.0.1:0"})
	require.NoError(t, err)
	a, err := app.New(t.Context(), cfg, app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(cfg.Search, st, slog.New(slog.DiscardHandler))
	}))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	// The runs live in a store of their own, advanced here by hand: the
	// app's workers never see them.
	runs, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { runs.Close() })
	reg := a.Engine().Registry()
	o := exhaust.Options{MaxSpan: 3, Budget: exhaustiveBudget, Seed: 1,
		Constants: map[string]any{"question": "sleep and memory consolidation", pipeline.ParamStartedBy: "exhaustive"}}
	total, ran := 0, 0
	for _, wf := range reg.List() {
		params, err := wf.Params()
		require.NoError(t, err)
		plan := exhaust.Combinations(params, o)
		for _, script := range []string{"first", "last"} {
			for _, combo := range plan.Combos {
				t.Run(fmt.Sprintf("%s/%s/%v", wf.Name, script, combo), func(t *testing.T) {
					clock := &stepClock{now: time.Now()} // templates read now() from the real clock
					eng, err := engine.New(engine.Config{Store: runs, Registry: reg, Handler: scripted(script), Now: clock.Now})
					require.NoError(t, err)
					r, err := eng.Start(context.Background(), wf.Name, combo)
					require.NoError(t, err)
					r = drive(t, eng, runs, r.ID, clock)
					trail, err := runs.StepRuns(context.Background(), r.ID)
					require.NoError(t, err)
					require.NoError(t, exhaust.Check(wf, r, trail))
				})
				ran++
			}
		}
		total += 2 * plan.Total
		fmt.Printf("exhaustive: %s: %d of %d parameter combinations%s × 2 scripts\n", wf.Name, len(plan.Combos), plan.Total, sampled(plan))
	}
	fmt.Printf("exhaustive: %d workflows, %d runs of %d combinations×scripts, every one completed within its invariants\n", len(reg.List()), ran, total)
}

func sampled(p exhaust.Plan) string {
	if p.Sampled {
		return " (sampled)"
	}
	return ""
}

// stepClock is the engine's clock: each read is a second later, and a
// run waiting on a timer skips a day ahead.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

func (c *stepClock) skip(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// drive advances a run as the queue would until it ends; a run waiting
// on a timer gets the clock moved past it.
func drive(t *testing.T, eng *engine.Engine, st *store.Store, id string, clock *stepClock) engine.Run {
	t.Helper()
	for range 500 {
		require.NoError(t, eng.Advance(context.Background(), id))
		r, err := st.Run(context.Background(), id)
		require.NoError(t, err)
		switch {
		case r.IsComplete() || r.Status == engine.StatusEscalated:
			return r
		case r.Status == engine.StatusWaiting && r.CheckpointID == "":
			clock.skip(48 * time.Hour)
		}
	}
	t.Fatalf("run %s did not end in 500 advances", id)
	return engine.Run{}
}

// scripted is a person who, at every gate, takes the first option (or
// approves), or the last one (or sends the search's review back with a
// note, which iterates until the run's bound). The search's strategy is
// approved with a note, so the quality gate lets it through.
func scripted(script string) engine.CheckpointHandler {
	return engine.HandlerFunc(func(ctx context.Context, cp engine.Checkpoint) (engine.Decision, error) {
		by := "exhaustive-" + script
		switch cp.Kind {
		case flow.KindGate:
			p, err := engine.PayloadAs[flow.GatePayload](cp)
			if err != nil {
				return engine.Decision{}, err
			}
			opt := p.Options[0]
			if script == "last" {
				opt = p.Options[len(p.Options)-1]
			}
			input := ""
			if opt.RequiresInput {
				input = "1"
			}
			return flow.Choose(opt.Label, input, by), nil
		case pipeline.KindResultReview:
			if script == "last" {
				return engine.Decision{Action: engine.Reject, Note: "more on adolescents", DecidedBy: by}, nil
			}
		case pipeline.KindStrategyConfirmation:
			// With a note, which the quality gate (quality_gate) takes as
			// the reason to approve despite its blocking findings.
			return engine.Decision{Action: engine.Approve, Note: "approved as proposed", DecidedBy: by}, nil
		}
		return engine.Decision{Action: engine.Approve, DecidedBy: by}, nil
	})
}
