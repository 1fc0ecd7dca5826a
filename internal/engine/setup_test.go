package engine_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// bundle is what most engine tests need: a real store (a SQLite file in a
// temp dir, or its PostgreSQL stand-in: storetest) and an engine over it.
type bundle struct {
	store *store.Store
	eng   *engine.Engine
	path  string
}

type setupOpts struct {
	handler engine.CheckpointHandler
	wfs     []*engine.Workflow
	path    string
	// observer, if set, is the engine's Observer.
	observer engine.Observer
}

func setup(t *testing.T, o setupOpts) *bundle {
	t.Helper()
	if o.path == "" {
		o.path = filepath.Join(t.TempDir(), "quarry.db")
	}
	st, err := store.Open(context.Background(), storetest.DSN(t, &pg, o.path), store.Options{BackupDir: filepath.Join(t.TempDir(), "backups")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	reg, err := engine.NewRegistry(o.wfs...)
	require.NoError(t, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: o.handler, Observer: o.observer,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	return &bundle{store: st, eng: eng, path: o.path}
}

// advance drives a run in-process until it rests (waits, escalates or ends).
func (b *bundle) advance(t *testing.T, id string) engine.Run {
	t.Helper()
	require.NoError(t, b.eng.Advance(context.Background(), id))
	r, err := b.store.Run(context.Background(), id)
	require.NoError(t, err)
	return r
}

func (b *bundle) start(t *testing.T, wf string, params map[string]any) engine.Run {
	t.Helper()
	r, err := b.eng.Start(context.Background(), wf, params)
	require.NoError(t, err)
	return r
}

func (b *bundle) pending(t *testing.T, id string) engine.Checkpoint {
	t.Helper()
	r, err := b.store.Run(context.Background(), id)
	require.NoError(t, err)
	require.NotEmpty(t, r.CheckpointID, "run %s is %s and has no checkpoint", id, r.Status)
	cp, d, err := b.store.Checkpoint(context.Background(), r.CheckpointID)
	require.NoError(t, err)
	require.Nil(t, d)
	return cp
}

// counter counts handler executions per step, to prove no step re-runs.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(step string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[step]++
}

func (c *counter) get(step string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[step]
}

// appendStep records its ID in state key "trail", so results are comparable.
func appendStep(c *counter) engine.Handler {
	return func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		if c != nil {
			c.inc(sc.StepID)
		}
		trail, _, err := engine.Get[[]string](sc.State, "trail")
		if err != nil {
			return "", nil, err
		}
		u := engine.Update{}
		if err := u.Set("trail", append(trail, sc.StepID)); err != nil {
			return "", nil, err
		}
		return engine.OK, u, nil
	}
}

func linear(name string, c *counter, ids ...string) *engine.Workflow {
	wf := &engine.Workflow{Name: name, Entry: ids[0]}
	for i, id := range ids {
		next := engine.End
		if i+1 < len(ids) {
			next = ids[i+1]
		}
		wf.Steps = append(wf.Steps, engine.StepDef{ID: id, Handler: appendStep(c), Next: engine.Next{engine.OK: next}})
	}
	return wf
}

// notePayload is a test payload for a custom checkpoint kind.
type notePayload struct {
	Text string `json:"text"`
}

const kindNote engine.CheckpointKind = "note"

func (notePayload) CheckpointKind() engine.CheckpointKind { return kindNote }

// reviewGate approves to OK, edits and rejects to Iterate.
func reviewGate(kind engine.CheckpointKind) *engine.Gate {
	return &engine.Gate{
		Kind: kind,
		Payload: func(ctx context.Context, sc engine.StepContext) (engine.Payload, error) {
			return notePayload{Text: sc.StepID}, nil
		},
		Apply: func(ctx context.Context, sc engine.StepContext, cp engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			u := engine.Update{}
			if err := u.Set("last_decision_"+sc.StepID, d.Action); err != nil {
				return "", nil, err
			}
			if d.Action == engine.Approve {
				return engine.OK, u, nil
			}
			return engine.Iterate, u, nil
		},
	}
}

// loopWorkflow: work → review gate (approve ends, anything else iterates back to work).
func loopWorkflow(name string, maxIter int, c *counter) *engine.Workflow {
	return &engine.Workflow{
		Name: name, Entry: "work", MaxIterations: maxIter,
		Steps: []engine.StepDef{
			{ID: "work", Handler: appendStep(c), Next: engine.Next{engine.OK: "review"},
				Params: []engine.Param{{Name: engine.MaxIterationsParam, Type: engine.ParamInt, Min: engine.Bound(1), Max: engine.Bound(50)}}},
			{ID: "review", Gate: reviewGate(kindNote), Next: engine.Next{engine.OK: engine.End, engine.Iterate: "work"}},
		},
	}
}

func by(name string) engine.Decision { return engine.Decision{Action: engine.Approve, DecidedBy: name} }
