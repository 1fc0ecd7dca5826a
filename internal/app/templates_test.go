package app_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

// templateApp is an app on a fresh SQLite database, its library seeded
// with the offline demo papers and searched through the local source (the
// default), so the built-in templates run end to end without a network.
func templateApp(t *testing.T) *app.App {
	t.Helper()
	a, err := newApp(t, t.Context(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

// waitRun polls the stored run until ok holds.
func waitTemplateRun(t *testing.T, a *app.App, id string, within time.Duration, ok func(engine.Run) bool) engine.Run {
	t.Helper()
	var run engine.Run
	if !assert.Eventually(t, func() bool {
		var err error
		run, err = a.Store().Run(context.Background(), id)
		require.NoError(t, err)
		return ok(run)
	}, within, 20*time.Millisecond) {
		t.Fatalf("run %s is %s at %q (%s)", id, run.Status, run.Step, run.Error) // as last read
	}
	return run
}

// templateWait bounds each wait for a template run's next state: an upper
// bound for a loaded 2-core machine under -race (where a demo-library
// search takes seconds), not a speed goal.
const templateWait = 90 * time.Second

// atGate reports whether the run waits for a person at a gate.

// value reads a key of the run's state (context.x, outputs.stage).
func value[T any](t *testing.T, r engine.Run, key string) T {
	t.Helper()
	v, ok, err := engine.Get[T](r.State, key)
	require.NoError(t, err)
	require.True(t, ok, "the run has %s", key)
	return v
}

// number reads a paper summary's score from the run's state: a whole
// score is kept as an integer, and a zero one is left out (omitempty).
func number(t *testing.T, v any) float64 {
	t.Helper()
	switch n := v.(type) {
	case nil:
		return 0
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case uint64:
		return float64(n)
	}
	t.Fatalf("%v (%T) is not a number", v, v)
	return 0
}

// decide picks a gate option as a person would.
func decide(t *testing.T, a *app.App, r engine.Run, option, input string) {
	t.Helper()
	require.NoError(t, a.Engine().Decide(context.Background(), r.ID, r.CheckpointID, flow.Choose(option, input, "Ada")))
}

// TestLivingReviewTemplateRuns: the living review searches the demo
// library, shows the new papers at its review gate, waits its interval
// (a durable delay) and searches again, finding nothing new the next
// rounds, so it goes straight on to the next wait, until max_iterations
// searches have run and the run completes.
func TestLivingReviewTemplateRuns(t *testing.T) {
	t.Parallel()
	a := templateApp(t)
	run, err := a.Engine().Start(t.Context(), "living-review", map[string]any{
		"question": "How does SQLite WAL mode affect crash recovery?", "interval": "1s", "max_iterations": 3})
	require.NoError(t, err)
	run = waitTemplateRun(t, a, run.ID, templateWait, atGate)
	require.Equal(t, "review", run.Step)
	require.EqualValues(t, 1, value[int](t, run, "context.round"))
	fresh := value[[]map[string]any](t, run, "context.new_papers")
	require.NotEmpty(t, fresh, "the first round finds papers, all new")
	require.EqualValues(t, len(fresh), value[int](t, run, "context.new_count"))
	require.Len(t, value[[]string](t, run, "context.seen"), len(fresh))
	for i := 1; i < len(fresh); i++ {
		require.GreaterOrEqual(t, number(t, fresh[i-1]["score"]), number(t, fresh[i]["score"]), "best first")
	}

	decided := time.Now()
	decide(t, a, run, "Keep watching", "")
	run = waitTemplateRun(t, a, run.ID, templateWait, func(r engine.Run) bool { return r.Status == engine.StatusCompleted })
	require.GreaterOrEqual(t, time.Since(decided), 2*time.Second, "two 1 s waits before the second and third searches")
	require.EqualValues(t, 3, value[int](t, run, "context.round"), "max_iterations searches")
	require.EqualValues(t, 0, value[int](t, run, "context.new_count"), "later rounds found only papers seen before")
	require.Len(t, value[[]string](t, run, "context.seen"), len(fresh))
}

// TestLivingReviewTemplateStops: an end date in the past stops the review
// after the round under way, and "Stop the review" ends it at once.
func TestLivingReviewTemplateStops(t *testing.T) {
	t.Parallel()
	a := templateApp(t)
	for _, tc := range []struct{ option, endDate string }{{"Keep watching", "2000-01-01"}, {"Stop the review", ""}} {
		run, err := a.Engine().Start(t.Context(), "living-review", map[string]any{
			"question": "How does SQLite WAL mode affect crash recovery?", "interval": "1h", "end_date": tc.endDate})
		require.NoError(t, err)
		run = waitTemplateRun(t, a, run.ID, templateWait, atGate)
		decide(t, a, run, tc.option, "")
		run = waitTemplateRun(t, a, run.ID, templateWait, func(r engine.Run) bool { return r.Status == engine.StatusCompleted })
		require.EqualValues(t, 1, value[int](t, run, "context.round"), tc.option)
	}
}

// TestLivingReviewTemplateChecksItsParams: an interval or end date that
// does not parse fails the run at its first stage, saying which check
// did not pass, instead of at the first wait.
func TestLivingReviewTemplateChecksItsParams(t *testing.T) {
	t.Parallel()
	a := templateApp(t)
	for _, params := range []map[string]any{{"interval": "soon"}, {"interval": "0s"}, {"end_date": "next year"}} {
		params["question"] = "How does SQLite WAL mode affect crash recovery?"
		run, err := a.Engine().Start(t.Context(), "living-review", params)
		require.NoError(t, err)
		run = waitTemplateRun(t, a, run.ID, templateWait, func(r engine.Run) bool { return r.Status == engine.StatusFailed })
		require.Contains(t, run.Error, "check", "%v", params)
		require.NotContains(t, run.State, "outputs.parse", "nothing after the check ran")
	}
}

// TestScreeningTemplateRuns: the screening workflow searches the demo
// library with its high caps, merges duplicates, then shows the ranked
// papers two at a time: all of one batch kept, one paper of the next by
// position, none of the third, then the researcher stops and the kept
// papers are exported as RIS. No paper is shown twice.
func TestScreeningTemplateRuns(t *testing.T) {
	t.Parallel()
	a := templateApp(t)
	run, err := a.Engine().Start(t.Context(), "screening", map[string]any{
		"question": "How does SQLite WAL mode affect crash recovery?", "batch_size": 2})
	require.NoError(t, err)
	shown := map[string]bool{}
	batchAt := func(n int) []map[string]any {
		t.Helper()
		run = waitTemplateRun(t, a, run.ID, templateWait, func(r engine.Run) bool {
			if !atGate(r) {
				return false
			}
			got, _, _ := engine.Get[int](r.State, "context.batch_number")
			return got == n
		})
		require.Equal(t, "screen", run.Step)
		batch := value[[]map[string]any](t, run, "context.batch")
		require.Len(t, batch, 2)
		for _, p := range batch {
			id := p["id"].(string)
			require.False(t, shown[id], "paper %s shown twice", id)
			shown[id] = true
		}
		return batch
	}
	first := batchAt(1)
	require.Greater(t, value[int](t, run, "context.found"), 6, "the demo library has more than three batches")
	decide(t, a, run, "Keep all of this batch", "")
	second := batchAt(2)
	require.EqualValues(t, 2, value[int](t, run, "context.kept_count"))
	decide(t, a, run, "Keep only these (positions or ids)", "2")
	batchAt(3)
	require.EqualValues(t, 3, value[int](t, run, "context.kept_count"))
	decide(t, a, run, "Keep none of this batch", "")
	batchAt(4)
	require.EqualValues(t, 3, value[int](t, run, "context.kept_count"))
	decide(t, a, run, "Stop screening and export", "")
	run = waitTemplateRun(t, a, run.ID, templateWait, func(r engine.Run) bool { return r.Status == engine.StatusCompleted })

	kept := value[[]map[string]any](t, run, "context.kept")
	require.Equal(t, []any{first[0]["id"], first[1]["id"], second[1]["id"]}, []any{kept[0]["id"], kept[1]["id"], kept[2]["id"]})
	out := value[map[string]any](t, run, "outputs.export")
	require.Equal(t, "ris", out["format"])
	require.EqualValues(t, 3, out["count"])
	require.Contains(t, out["text"], "TY  - ")
	require.Contains(t, out["text"], first[0]["title"])
	b, err := json.Marshal(run.State)
	require.NoError(t, err)
	require.Less(t, len(b), 1<<20, "the run's state stays small")
}
