package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

func TestLinearRunCompletesAndRecordsEveryStep(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{linear("lin", c, "a", "b", "c")}})
	r := b.start(t, "lin", nil)
	require.Equal(t, engine.StatusPending, r.Status)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	require.True(t, r.IsComplete())
	trail, _, err := engine.Get[[]string](r.State, "trail")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, trail)
	steps, err := b.store.StepRuns(context.Background(), r.ID)
	require.NoError(t, err)
	require.Len(t, steps, 3)
	for i, s := range steps {
		require.Equal(t, []string{"a", "b", "c"}[i], s.Step)
		require.Equal(t, "ok", s.Outcome)
		require.Equal(t, 1, s.Attempt)
		require.False(t, s.FinishedAt.Before(s.StartedAt))
	}
	// Advancing a completed run is a no-op.
	r2 := b.advance(t, r.ID)
	require.Equal(t, r.Version, r2.Version)
	require.Equal(t, 1, c.get("a"))
}

func TestGateWaitsThenDecisionResumes(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}})
	r := b.advance(t, b.start(t, "loop", nil).ID)
	require.Equal(t, engine.StatusWaiting, r.Status)
	cp := b.pending(t, r.ID)
	require.Equal(t, kindNote, cp.Kind)
	require.Equal(t, "review", cp.Step)
	require.Equal(t, 1, cp.Iteration)
	p, err := engine.PayloadAs[notePayload](cp)
	require.NoError(t, err)
	require.Equal(t, "review", p.Text)

	// Advancing a waiting run does nothing.
	require.Equal(t, r.Version, b.advance(t, r.ID).Version)

	require.NoError(t, b.eng.Decide(context.Background(), r.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ada", Note: "looks good"}))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	cps, err := b.store.Checkpoints(context.Background(), r.ID)
	require.NoError(t, err)
	require.Len(t, cps, 1)
	require.Equal(t, engine.CheckpointDecided, cps[0].Checkpoint.Status)
	require.Equal(t, "ada", cps[0].Decision.DecidedBy)
	require.Equal(t, "looks good", cps[0].Decision.Note)
}

func TestSecondDecisionIsConflictNamingWhoDecided(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}})
	r := b.advance(t, b.start(t, "loop", nil).ID)
	cp := b.pending(t, r.ID)
	require.NoError(t, b.eng.Decide(context.Background(), r.ID, cp.ID, by("grace")))
	err := b.eng.Decide(context.Background(), r.ID, cp.ID, engine.Decision{Action: engine.Reject, DecidedBy: "alan"})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorMessage(err), "grace")
	require.Contains(t, fault.ErrorMessage(err), "approve")
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, "the losing decision must not affect the run")
}

func TestConcurrentDecisionsExactlyOneWins(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}})
	r := b.advance(t, b.start(t, "loop", nil).ID)
	cp := b.pending(t, r.ID)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = b.eng.Decide(context.Background(), r.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: fmt.Sprintf("p%d", i)})
		}()
	}
	close(start)
	wg.Wait()
	wins, conflicts := 0, 0
	for _, err := range errs {
		switch fault.ErrorCode(err) {
		case "":
			wins++
		case fault.EConflict:
			conflicts++
			require.Contains(t, fault.ErrorMessage(err), "already decided by p")
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	require.Equal(t, 1, wins)
	require.Equal(t, n-1, conflicts)
	cps, err := b.store.Checkpoints(context.Background(), r.ID)
	require.NoError(t, err)
	require.Len(t, cps, 1)
	require.NotNil(t, cps[0].Decision)
}

func TestDecisionValidation(t *testing.T) {
	t.Parallel()
	wf := loopWorkflow("strict", 3, nil)
	wf.Steps[1].Gate.Validate = func(sc engine.StepContext, cp engine.Checkpoint, d engine.Decision) error {
		if d.Action == engine.Edit && !strings.Contains(string(d.RevisedData), "ok") {
			return fault.Errorf(fault.EInvalid, "revised data must say ok")
		}
		return nil
	}
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "strict", nil).ID)
	cp := b.pending(t, r.ID)
	ctx := context.Background()
	tests := []struct {
		name string
		d    engine.Decision
		code string
	}{
		{"UnknownAction", engine.Decision{Action: "maybe", DecidedBy: "x"}, fault.EInvalid},
		{"NoDecider", engine.Decision{Action: engine.Approve}, fault.EInvalid},
		{"BadJSON", engine.Decision{Action: engine.Edit, DecidedBy: "x", RevisedData: []byte("{nope")}, fault.EInvalid},
		{"GateRefuses", engine.Decision{Action: engine.Edit, DecidedBy: "x", RevisedData: []byte(`"bad"`)}, fault.EInvalid},
	}
	for _, tt := range tests {
		require.Equal(t, tt.code, fault.ErrorCode(b.eng.Decide(ctx, r.ID, cp.ID, tt.d)), tt.name)
	}
	require.Equal(t, fault.ENotFound, fault.ErrorCode(b.eng.Decide(ctx, r.ID, "nope", by("x"))))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(b.eng.Decide(ctx, "nope", cp.ID, by("x"))))
	// Nothing was recorded by the refused decisions.
	require.Equal(t, engine.StatusWaiting, b.advance(t, r.ID).Status)
	require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "x", RevisedData: []byte(`"ok"`)}))
}

func TestRetryPassesPreviousErrorThenSucceeds(t *testing.T) {
	t.Parallel()
	var seen []string
	wf := &engine.Workflow{Name: "flaky", Entry: "s", Steps: []engine.StepDef{{
		ID: "s", Retry: engine.RetryPolicy{MaxAttempts: 3},
		Handler: func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
			seen = append(seen, fmt.Sprintf("%d:%s", sc.Attempt, sc.PrevError))
			if sc.Attempt < 3 {
				return "", nil, fmt.Errorf("boom %d", sc.Attempt)
			}
			return engine.OK, nil, nil
		},
		Next: engine.Next{engine.OK: engine.End},
	}}}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "flaky", nil).ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	require.Equal(t, []string{"1:", "2:boom 1", "3:boom 2"}, seen)
	steps, err := b.store.StepRuns(context.Background(), r.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"error", "error", "ok"}, outcomes(steps))
}

func outcomes(steps []engine.StepRecord) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Outcome
	}
	return out
}

func failingWorkflow(name string, failures *int) *engine.Workflow {
	return &engine.Workflow{Name: name, Entry: "s", Steps: []engine.StepDef{
		{ID: "s", Retry: engine.RetryPolicy{MaxAttempts: 2},
			Handler: func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
				if *failures > 0 {
					*failures--
					return "", nil, errors.New("source down")
				}
				return engine.OK, nil, nil
			},
			Postconditions: []engine.Condition{{Name: "non-negative", Check: func(engine.StepContext) bool { return *failures >= 0 }, Message: "never"}},
			Next:           engine.Next{engine.OK: "t", engine.Skip: "t"}},
		{ID: "t", Handler: appendStep(nil), Next: engine.Next{engine.OK: engine.End}},
	}}
}

func TestEscalationOffersRetrySkipAbort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		action engine.DecisionAction
		want   engine.Status
		trail  []string
	}{
		{engine.Approve, engine.StatusCompleted, []string{"t"}}, // retry: the step now succeeds
		{engine.Edit, engine.StatusCompleted, []string{"t"}},    // skip
		{engine.Reject, engine.StatusCanceled, nil},             // abort
	}
	for _, tt := range tests {
		t.Run(string(tt.action), func(t *testing.T) {
			t.Parallel()
			failures := 2
			b := setup(t, setupOpts{handler: engine.AlwaysApprove("bot"), wfs: []*engine.Workflow{failingWorkflow("f", &failures)}})
			r := b.advance(t, b.start(t, "f", nil).ID)
			require.Equal(t, engine.StatusEscalated, r.Status, "an always-approve handler must not answer escalations")
			require.Contains(t, r.Error, "source down")
			cp := b.pending(t, r.ID)
			require.Equal(t, engine.KindEscalation, cp.Kind)
			p, err := engine.PayloadAs[engine.EscalationPayload](cp)
			require.NoError(t, err)
			require.Equal(t, engine.EscalationPayload{Step: "s", Error: "source down", Attempts: 2}, p)
			require.NoError(t, b.eng.Decide(context.Background(), r.ID, cp.ID, engine.Decision{Action: tt.action, DecidedBy: "ops"}))
			r = b.advance(t, r.ID)
			require.Equal(t, tt.want, r.Status)
			require.True(t, r.IsComplete())
			trail, _, _ := engine.Get[[]string](r.State, "trail")
			require.Equal(t, tt.trail, trail)
		})
	}
}

func TestSkipRefusedWhenStepHasNoSkipPath(t *testing.T) {
	t.Parallel()
	failures := 5
	wf := failingWorkflow("f", &failures)
	wf.Steps[0].Next = engine.Next{engine.OK: "t"}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "f", nil).ID)
	cp := b.pending(t, r.ID)
	err := b.eng.Decide(context.Background(), r.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "ops"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorMessage(err), "cannot be skipped")
}

func TestIterationsBoundedAndExitTaken(t *testing.T) {
	t.Parallel()
	c := &counter{}
	reject := engine.Decision{Action: engine.Reject, DecidedBy: "r"}
	b := setup(t, setupOpts{handler: engine.HandlerFunc(func(context.Context, engine.Checkpoint) (engine.Decision, error) { return reject, nil }),
		wfs: []*engine.Workflow{loopWorkflow("loop", 5, c)}})
	r := b.advance(t, b.start(t, "loop", map[string]any{"max_iterations": 3}).ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	require.Equal(t, 3, r.Iteration)
	require.Equal(t, 3, c.get("work"))
	cps, err := b.store.Checkpoints(context.Background(), r.ID)
	require.NoError(t, err)
	require.Len(t, cps, 3)
	for i, cp := range cps {
		require.Equal(t, i+1, cp.Checkpoint.Iteration)
		require.Equal(t, "r", cp.Decision.DecidedBy)
	}
}

func TestFailOutcomeWithoutTransitionFailsRun(t *testing.T) {
	t.Parallel()
	wf := &engine.Workflow{Name: "f", Entry: "s", Steps: []engine.StepDef{{ID: "s",
		Handler: func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
			return engine.Fail, nil, nil
		},
		Next: engine.Next{engine.OK: engine.End}}}}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "f", nil).ID)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.True(t, r.IsComplete())
	require.Contains(t, r.Error, `step "s" failed`)
}

func TestDefaultTransitionCatchesUnmappedOutcome(t *testing.T) {
	t.Parallel()
	wf := &engine.Workflow{Name: "d", Entry: "s", Steps: []engine.StepDef{
		{ID: "s", Handler: func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
			return engine.Skip, nil, nil
		},
			Next: engine.Next{engine.OK: engine.End, engine.Default: "t"}},
		{ID: "t", Handler: appendStep(nil), Next: engine.Next{engine.OK: engine.End}},
	}}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "d", nil).ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	trail, _, _ := engine.Get[[]string](r.State, "trail")
	require.Equal(t, []string{"t"}, trail)
}

func TestPreconditionFailureEscalatesAtOnce(t *testing.T) {
	t.Parallel()
	calls := 0
	wf := &engine.Workflow{Name: "p", Entry: "s", Steps: []engine.StepDef{{ID: "s",
		Preconditions: []engine.Condition{{Name: "has input", Check: func(sc engine.StepContext) bool { return sc.Params.Has("input") }, Message: "input is missing"}},
		Handler: func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
			calls++
			return engine.OK, nil, nil
		},
		Params: []engine.Param{{Name: "input", Type: engine.ParamString}},
		Next:   engine.Next{engine.OK: engine.End}}}}
	b := setup(t, setupOpts{wfs: []*engine.Workflow{wf}})
	r := b.advance(t, b.start(t, "p", nil).ID)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Contains(t, r.Error, "input is missing")
	require.Zero(t, calls)
}

func TestCancelExpiresPendingCheckpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}})
	r := b.advance(t, b.start(t, "loop", nil).ID)
	cp := b.pending(t, r.ID)
	require.NoError(t, b.eng.Cancel(context.Background(), r.ID, "ada"))
	r, err := b.store.Run(context.Background(), r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusCanceled, r.Status)
	got, _, err := b.store.Checkpoint(context.Background(), cp.ID)
	require.NoError(t, err)
	require.Equal(t, engine.CheckpointExpired, got.Status)
	require.Equal(t, fault.EConflict, fault.ErrorCode(b.eng.Decide(context.Background(), r.ID, cp.ID, by("x"))))
	require.Equal(t, fault.EConflict, fault.ErrorCode(b.eng.Cancel(context.Background(), r.ID, "ada")))
}

func TestStartRejectsBadParams(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{wfs: []*engine.Workflow{loopWorkflow("loop", 3, nil)}})
	_, err := b.eng.Start(context.Background(), "loop", map[string]any{"max_iterations": 0})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["max_iterations"], "at least 1")
	_, err = b.eng.Start(context.Background(), "nope", nil)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
}

func TestProgressEventsArePublished(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{wfs: []*engine.Workflow{linear("lin", nil, "a", "b")}})
	events, stop := b.eng.Events().Subscribe("")
	defer stop()
	r := b.advance(t, b.start(t, "lin", nil).ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	var started, finished []string
	for len(events) > 0 {
		ev := <-events
		require.Equal(t, r.ID, ev.RunID)
		switch ev.Type {
		case engine.EventStepStarted:
			started = append(started, ev.Step)
		case engine.EventStepFinished:
			finished = append(finished, ev.Step)
		}
	}
	require.Equal(t, []string{"a", "b"}, started)
	require.Equal(t, []string{"a", "b"}, finished)
}
