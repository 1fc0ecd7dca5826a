package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
)

const timedYAML = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: timed}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: hold}, {label: Stop, next: complete}]
    timeout: 1s
    on_timeout: {default: Go}
  - id: hold
    type: gate
    options: [{label: Done, next: complete}]
    timeout: 2d
    on_timeout: {extend: 1d, max_extensions: 2, then: escalate}
`

// TestGateTimersOnThePageAndAPI: the first gate's 1 s timer fires by its
// job and takes the default; GET /api/runs/:id lists both timers (the
// fired one with what it did) and their notices, and the run page says
// the first gate timed out and took its default, and when the second
// extends.
func TestGateTimersOnThePageAndAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "timed.yaml"), []byte(timedYAML), 0o644))
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir})
	require.NoError(t, err)
	w := serveApp(t, a)
	created := w.startAPIRun(t, map[string]any{"workflow": "timed"})
	start := time.Now()
	var run = w.getRun(t, created.ID)
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "waiting" && len(run.GateTimers) == 2
	}, 20*time.Second, 20*time.Millisecond, "the first gate never timed out (last %q, %d timers)", run.Status, len(run.GateTimers))

	ask, hold := run.GateTimers[0], run.GateTimers[1]
	require.Equal(t, "ask", ask.Stage)
	require.Equal(t, engine.TimerFired, ask.Status)
	require.Equal(t, "default", ask.Outcome)
	require.Equal(t, "Go", ask.Default)
	require.NotNil(t, ask.FiredAt)
	require.Equal(t, "hold", hold.Stage)
	require.Equal(t, engine.TimerPending, hold.Status)
	require.Equal(t, [2]int{0, 2}, [2]int{hold.Extensions, hold.MaxExtensions})
	require.WithinDuration(t, start.Add(48*time.Hour), hold.Due, time.Minute)
	var events []string
	for _, n := range run.GateNotices {
		events = append(events, n.Stage+":"+string(n.Event)+":"+string(n.Status))
	}
	require.Equal(t, []string{"ask:entered:recorded", "ask:timed_out:recorded", "hold:entered:recorded"}, events)

	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, doc := w.get(t, c, "/runs/"+run.ID)
	timer := strings.Join(strings.Fields(doc.Find(`[data-testid="gate-timer"]`).Text()), " ")
	require.Contains(t, timer, "Extends at "+hold.Due.UTC().Format("2006-01-02 15:04 UTC")+" (extension 1 of 2)")
	require.Equal(t, "timed out; took default Go", doc.Find(`[data-testid="decision-timed-out"]`).Text())
	require.Equal(t, "timeout", doc.Find(`[data-testid="decision-by"]`).First().Text())
}
