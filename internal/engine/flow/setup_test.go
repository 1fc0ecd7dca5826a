package flow_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// bundle is a compiled definition's engine over a real SQLite store.
type bundle struct {
	store *store.Store
	eng   *engine.Engine
	path  string
}

// compile loads a definition from YAML and compiles it with skills.
func compile(t testing.TB, src string, skills flow.Skills) *engine.Workflow {
	t.Helper()
	d, err := def.Load("test.yaml", []byte(src), def.Options{Skills: skills.Names()})
	require.NoError(t, err)
	wf, err := flow.Compile(d, skills)
	require.NoError(t, err)
	return wf
}

// setup opens a store at path ("" = a fresh temp file) and an engine over
// it running wf; handler answers gates (nil: gates take their Auto path).
func setup(t *testing.T, path string, handler engine.CheckpointHandler, wf *engine.Workflow) *bundle {
	t.Helper()
	return setupClock(t, path, handler, nil, wf)
}

// setupClock is setup with the engine's clock (nil: the real one).
func setupClock(t *testing.T, path string, handler engine.CheckpointHandler, now func() time.Time, wf *engine.Workflow) *bundle {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "quarry.db")
	}
	st, err := store.Open(context.Background(), storetest.DSN(t, &pg, path), store.Options{BackupDir: filepath.Join(t.TempDir(), "backups")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	reg, err := engine.NewRegistry(wf)
	require.NoError(t, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: handler, Now: now,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	return &bundle{store: st, eng: eng, path: path}
}

// run starts the workflow and advances it in-process until it rests.
func (b *bundle) run(t *testing.T, wf string, params map[string]any) engine.Run {
	t.Helper()
	r, err := b.eng.Start(context.Background(), wf, params)
	require.NoError(t, err)
	return b.advance(t, r.ID)
}

func (b *bundle) advance(t *testing.T, id string) engine.Run {
	t.Helper()
	require.NoError(t, b.eng.Advance(context.Background(), id))
	r, err := b.store.Run(context.Background(), id)
	require.NoError(t, err)
	return r
}

// steps lists the run's audit trail as "step:outcome".
func (b *bundle) steps(t *testing.T, id string) []string {
	t.Helper()
	recs, err := b.store.StepRuns(context.Background(), id)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, r.Step+":"+r.Outcome)
	}
	return out
}

func contextOf(t *testing.T, r engine.Run) map[string]any {
	t.Helper()
	cx, err := flow.Context(r.State)
	require.NoError(t, err)
	return cx
}

func outputsOf(t *testing.T, r engine.Run) map[string]map[string]any {
	t.Helper()
	o, err := flow.Outputs(r.State)
	require.NoError(t, err)
	return o
}

// counter counts skill calls per stage.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(stage string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[stage]++
	return c.n[stage]
}

func (c *counter) get(stage string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[stage]
}

// echo returns its inputs as outputs and counts its calls.
func echo(c *counter) flow.Skill {
	return func(ctx context.Context, in flow.Input) (map[string]any, error) {
		c.inc(in.Stage)
		return in.With, nil
	}
}

func pendingCheckpoint(t *testing.T, b *bundle, r engine.Run) (engine.Checkpoint, flow.GatePayload) {
	t.Helper()
	require.Equal(t, engine.StatusWaiting, r.Status, r.Error)
	cp, dec, err := b.store.Checkpoint(context.Background(), r.CheckpointID)
	require.NoError(t, err)
	require.Nil(t, dec)
	p, err := engine.PayloadAs[flow.GatePayload](cp)
	require.NoError(t, err)
	return cp, p
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
