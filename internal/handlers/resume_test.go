package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
)

// A server stopped while a step waits out its backoff, whose policy asks
// a person to resume, comes back with the run waiting for that word: the
// run page shows the step, its last error and a Resume button, the API
// shows the escalation with reason "resume"; resuming runs the retry.
func TestResumeOnAPersonsWordAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls atomic.Int32
	wf := &engine.Workflow{Name: "patient", Entry: "fetch", Steps: []engine.StepDef{{
		ID: "fetch", Retry: engine.RetryPolicy{MaxAttempts: 3, Backoff: time.Hour, AskToResume: true}, Next: engine.Next{engine.OK: engine.End},
		Handler: func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
			if calls.Add(1) == 1 {
				return "", nil, errors.New("source unreachable")
			}
			return engine.OK, nil, nil
		},
	}}}
	reg, err := engine.NewRegistry(wf)
	require.NoError(t, err)
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}
	first, err := newApp(t, ctx, cfg, app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	run, err := first.Engine().Start(ctx, "patient", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := first.Store().Run(ctx, run.ID)
		return err == nil && r.Attempt == 1 && r.Status == engine.StatusRunning
	}, 10*time.Second, 10*time.Millisecond, "the first attempt never failed")
	require.NoError(t, first.Close()) // stopped during the hour's backoff

	second, err := newApp(t, ctx, cfg, app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	w := serveApp(t, second)
	w.signIn(t, w.client, "Ops")
	got := w.waitFor(t, run.ID, string(engine.StatusEscalated))
	require.NotNil(t, got.Checkpoint)
	require.Equal(t, string(engine.KindEscalation), got.Checkpoint.Kind)
	require.JSONEq(t, `{"step":"fetch","error":"source unreachable","attempts":1,"reason":"resume","max_attempts":3}`, string(got.Checkpoint.Payload))
	require.EqualValues(t, 1, calls.Load(), "not retried by the restart")

	res, doc := w.get(t, w.client, "/runs/"+run.ID)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="resume-heading"]`).Text(), "fetch")
	require.Contains(t, doc.Find(`[data-testid="escalation-error"]`).Text(), "source unreachable")
	require.Contains(t, doc.Find(`[data-testid="resume-hint"]`).Text(), "attempt 1 of 3")
	require.Equal(t, 1, doc.Find(`[data-testid="resume"]`).Length())
	action, ok := doc.Find(`[data-testid="escalation-form"]`).Attr("action")
	require.True(t, ok)
	res, _ = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	w.waitFor(t, run.ID, string(engine.StatusCompleted))
	require.EqualValues(t, 2, calls.Load())
}
