package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// recorder is an engine.Observer that keeps what it was told.
type recorder struct {
	mu        sync.Mutex
	steps     []string // workflow/step/outcome
	decisions []string // workflow/kind/action
	progress  []string // workflow/step/message
}

func (r *recorder) StepDone(wf string, rec engine.StepRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, wf+"/"+rec.Step+"/"+rec.Outcome)
}

func (r *recorder) Decided(wf string, kind engine.CheckpointKind, action engine.DecisionAction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decisions = append(r.decisions, wf+"/"+string(kind)+"/"+string(action))
}

func (r *recorder) Progress(wf string, ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, wf+"/"+ev.Step+"/"+ev.Message)
}

func TestObserverSeesStepsDecisionsAndProgress(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	wf := loopWorkflow("loop", 3, nil)
	wf.Steps[0].Handler = func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		sc.Progress("half way", nil)
		return engine.OK, nil, nil
	}
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{wf}, observer: rec})
	r := b.advance(t, b.start(t, "loop", nil).ID)
	require.Equal(t, engine.StatusWaiting, r.Status)
	cp := b.pending(t, r.ID)
	require.NoError(t, b.eng.Decide(context.Background(), r.ID, cp.ID, by("ada")))
	require.Equal(t, engine.StatusCompleted, b.advance(t, r.ID).Status)

	require.Equal(t, []string{"loop/work/ok", "loop/review/checkpoint", "loop/review/ok"}, rec.steps)
	require.Equal(t, []string{"loop/note/approve"}, rec.decisions)
	require.Equal(t, []string{"loop/work/half way"}, rec.progress)
}

func TestObserverCountsProgrammaticDecisionsOnce(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	b := setup(t, setupOpts{handler: engine.AlwaysApprove("bot"), wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}, observer: rec})
	require.Equal(t, engine.StatusCompleted, b.advance(t, b.start(t, "loop", nil).ID).Status)
	require.Equal(t, []string{"loop/work/ok", "loop/review/ok"}, rec.steps)
	require.Equal(t, []string{"loop/note/approve"}, rec.decisions)
}
