package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
)

// flakyWorkflow's only step fails while down is set, so its run escalates.
func flakyWorkflow(down *atomic.Bool, skippable bool) *engine.Workflow {
	next := engine.Next{engine.OK: engine.End}
	if skippable {
		next[engine.Skip] = engine.End
	}
	return &engine.Workflow{Name: "flaky", Entry: "fetch", Steps: []engine.StepDef{{
		ID: "fetch", Retry: engine.RetryPolicy{MaxAttempts: 2}, Next: next,
		Handler: func(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
			if down.Load() {
				return "", nil, errors.New("source unreachable")
			}
			return engine.OK, nil, nil
		},
	}}}
}

func TestEscalationFormRetriesSkipsOrAborts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		action    string
		skippable bool
		fixed     bool // the outage is over before the person decides
		want      engine.Status
	}{
		{"approve", false, true, engine.StatusCompleted}, // retry
		{"edit", true, false, engine.StatusCompleted},    // skip
		{"reject", true, false, engine.StatusCanceled},   // abort
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			t.Parallel()
			var down atomic.Bool
			down.Store(true)
			reg, err := engine.NewRegistry(flakyWorkflow(&down, tt.skippable))
			require.NoError(t, err)
			a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")},
				app.WithWorkflows(reg), app.WithoutDemoLibrary())
			require.NoError(t, err)
			w := serveApp(t, a)
			w.signIn(t, w.client, "Ops")
			run, err := a.Engine().Start(context.Background(), "flaky", nil)
			require.NoError(t, err)
			w.waitFor(t, run.ID, string(engine.StatusEscalated))

			res, doc := w.get(t, w.client, "/runs/"+run.ID)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Contains(t, doc.Find(`[data-testid="escalation-error"]`).Text(), "source unreachable")
			require.Equal(t, tt.skippable, doc.Find(`button[value="edit"]`).Length() == 1, "skip offered only when the step can be skipped")
			action, ok := doc.Find(`[data-testid="escalation-form"]`).Attr("action")
			require.True(t, ok)

			down.Store(!tt.fixed)
			res, _ = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "action": {tt.action}, "note": {"checked the proxy"}})
			require.Equal(t, http.StatusOK, res.StatusCode)
			w.waitFor(t, run.ID, string(tt.want))

			// A second submit of the same form is a conflict naming who decided.
			res, doc = w.post(t, w.client, action, url.Values{"_csrf": {csrf(doc)}, "action": {tt.action}})
			require.Equal(t, http.StatusConflict, res.StatusCode)
			require.Contains(t, doc.Find(`[data-testid="conflict-message"]`).Text(), "Ops")
		})
	}
}
