package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/store/storetest"
)

const resumeSrc = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: flaky}
stages:
  - id: fetch
    type: skill
    skill: fetch
    on_error: {retry: 2, backoff: 1h, resume: RESUME, then: fail}
`

// flaky fails its first call and succeeds after.
func flaky(c *counter) flow.Skills {
	return flow.Skills{"fetch": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		if c.inc(in.Stage) == 1 {
			return nil, errors.New("source unreachable")
		}
		return map[string]any{"ok": true}, nil
	}}
}

// crashInBackoff starts the run on an engine whose process "dies" while
// the failed attempt's backoff runs (its context ends in Sleep), closes
// the store, and returns the database's path.
func crashInBackoff(t *testing.T, wf *engine.Workflow) (path, runID string) {
	t.Helper()
	b := setup(t, "", nil, wf)
	reg, err := engine.NewRegistry(wf)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	eng, err := engine.New(engine.Config{Store: b.store, Registry: reg, Sleep: func(c context.Context, d time.Duration) error {
		require.Equal(t, time.Hour, d)
		cancel() // the process dies while it waits to retry
		return context.Canceled
	}})
	require.NoError(t, err)
	r, err := eng.Start(context.Background(), wf.Name, nil)
	require.NoError(t, err)
	require.ErrorIs(t, eng.Advance(ctx, r.ID), context.Canceled)
	got, err := b.store.Run(context.Background(), r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusRunning, got.Status)
	require.Equal(t, 1, got.Attempt)
	require.NoError(t, b.store.Close())
	return b.path, r.ID
}

// restart opens the database again with a new engine, as a restarted
// server does, and recovers.
func restart(t *testing.T, path string, wf *engine.Workflow) *bundle {
	t.Helper()
	b := setup(t, path, nil, wf)
	n, err := b.eng.Recover(context.Background())
	require.NoError(t, err)
	want := 1
	if storetest.OnPostgres() {
		// River still holds the run's job (queued: no worker ran here), so
		// recovery leaves the run to River (Store.ResumableRuns).
		want = 0
	}
	require.Equal(t, want, n)
	return b
}

// A stage whose on_error says resume: ask, found after a restart waiting
// to retry, is not retried: the run shows the stage and its last error
// and waits until a person says resume; then the retry runs (attempt 2).
func TestResumeAskWaitsForAPersonAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls counter
	wf := compile(t, replaceResume(resumeSrc, "ask"), flaky(&calls))
	path, id := crashInBackoff(t, wf)
	require.Equal(t, 1, calls.get("fetch"))

	b := restart(t, path, wf)
	r := b.advance(t, id)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Equal(t, 1, calls.get("fetch"), "not retried without a person's word")
	cp, dec, err := b.store.Checkpoint(ctx, r.CheckpointID)
	require.NoError(t, err)
	require.Nil(t, dec)
	require.Equal(t, engine.KindEscalation, cp.Kind)
	p, err := engine.PayloadAs[engine.EscalationPayload](cp)
	require.NoError(t, err)
	require.Equal(t, engine.EscalationPayload{Step: "fetch", Error: "source unreachable", Attempts: 1,
		Reason: engine.EscalationResume, MaxAttempts: 3}, p)
	// Advancing again (a duplicate job) changes nothing.
	r = b.advance(t, id)
	require.Equal(t, engine.StatusEscalated, r.Status)

	// Another restart while it waits: still waiting, at the same checkpoint.
	require.NoError(t, b.store.Close())
	b = setup(t, path, nil, wf)
	_, err = b.eng.Recover(ctx)
	require.NoError(t, err)
	r = b.advance(t, id)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Equal(t, cp.ID, r.CheckpointID)

	require.NoError(t, b.eng.Decide(ctx, id, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ada"}))
	r = b.advance(t, id)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 2, calls.get("fetch"))
	recs, err := b.store.StepRuns(ctx, id)
	require.NoError(t, err)
	var trail []string
	for _, rec := range recs {
		trail = append(trail, rec.Step+":"+rec.Outcome)
	}
	require.Equal(t, []string{"fetch:error", "fetch:escalated", "fetch:resumed", "fetch:ok"}, trail)
	require.Equal(t, 2, recs[len(recs)-1].Attempt, "the resumed retry is the second attempt")
}

// Cancel at the resume question cancels the run; the stage never runs again.
func TestResumeAskCanceledByAPerson(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls counter
	wf := compile(t, replaceResume(resumeSrc, "ask"), flaky(&calls))
	path, id := crashInBackoff(t, wf)
	b := restart(t, path, wf)
	r := b.advance(t, id)
	require.NoError(t, b.eng.Decide(ctx, id, r.CheckpointID, engine.Decision{Action: engine.Reject, DecidedBy: "ada"}))
	r = b.advance(t, id)
	require.Equal(t, engine.StatusCanceled, r.Status)
	require.Equal(t, 1, calls.get("fetch"))
}

// Without resume: ask (auto), a restart retries at once, as before; and
// with it, a retry without a restart proceeds after its backoff.
func TestResumeAutoAndNoRestart(t *testing.T) {
	t.Parallel()
	var calls counter
	wf := compile(t, replaceResume(resumeSrc, "auto"), flaky(&calls))
	path, id := crashInBackoff(t, wf)
	b := restart(t, path, wf)
	r := b.advance(t, id)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 2, calls.get("fetch"))

	var calls2 counter
	b2 := setup(t, "", nil, compile(t, replaceResume(resumeSrc, "ask"), flaky(&calls2)))
	r = b2.run(t, "flaky", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 2, calls2.get("fetch"))
	require.Equal(t, []string{"fetch:error", "fetch:ok"}, b2.steps(t, r.ID))
}

func replaceResume(src, v string) string { return strings.ReplaceAll(src, "RESUME", v) }
