package flow_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
)

// clock is an injectable engine clock that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const pauseDef = head + `metadata: {name: pause}
stages:
  - {id: before, type: skill, skill: echo}
  - {id: pause, type: delay, duration: 1h}
  - {id: after, type: skill, skill: echo}
`

func TestDelayFiresOnceAfterItsTimeEvenAcrossARestart(t *testing.T) {
	t.Parallel()
	c := &counter{}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "delay.db")
	first := setupClock(t, path, nil, clk.now, compile(t, pauseDef, flow.Skills{"echo": echo(c)}))
	r := first.run(t, "pause", nil)
	require.Equal(t, engine.StatusWaiting, r.Status, r.Error)
	require.Equal(t, "pause", r.Step)
	require.Empty(t, r.CheckpointID, "a timer, not a question")

	// Woken early (a duplicate job, say): it waits on for the same moment.
	clk.add(30 * time.Minute)
	r = first.advance(t, r.ID)
	require.Equal(t, engine.StatusWaiting, r.Status)
	require.Zero(t, c.get("after"))
	require.NoError(t, first.store.Close())

	// A new process after the due time: the delay fires, once.
	clk.add(31 * time.Minute)
	second := setupClock(t, path, nil, clk.now, compile(t, pauseDef, flow.Skills{"echo": echo(c)}))
	r = second.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	r = second.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status)
	require.Equal(t, 1, c.get("before"))
	require.Equal(t, 1, c.get("after"))
	require.Equal(t, []string{"before:ok", "pause:waiting", "pause:waiting", "pause:ok", "after:ok"}, second.steps(t, r.ID))
}

func TestDelayUntilAndPoll(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
	wf := compile(t, head+`metadata: {name: until}
params: [{name: at, type: string, required: true}]
context: {stop: false}
stages:
  - id: wait
    type: delay
    until: "{{ params.at }}"
    poll: {interval: 1h, condition: "context.stop == true"}
`, flow.Skills{})
	b := setupClock(t, "", nil, clk.now, wf)
	r := b.run(t, "until", map[string]any{"at": "2026-01-05T12:00:00Z"})
	require.Equal(t, engine.StatusWaiting, r.Status, r.Error)
	clk.add(2 * time.Hour) // a poll wake-up: the condition does not hold
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusWaiting, r.Status)
	clk.add(time.Hour) // 12:00
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
}

// TestDelayIsAScheduledJob runs a short delay through River's workers on
// the real clock: nothing sleeps in a goroutine, the job scheduled in the
// waiting commit wakes the run, even in a process started after it.
func TestDelayIsAScheduledJob(t *testing.T) {
	t.Parallel()
	c := &counter{}
	src := head + `metadata: {name: short}
stages:
  - {id: pause, type: delay, duration: 1s}
  - {id: after, type: skill, skill: echo}
`
	path := filepath.Join(t.TempDir(), "timer.db")
	first := setup(t, path, nil, compile(t, src, flow.Skills{"echo": echo(c)}))
	r := first.run(t, "short", nil)
	require.Equal(t, engine.StatusWaiting, r.Status, r.Error)
	require.NoError(t, first.store.Close())

	second := setup(t, path, nil, compile(t, src, flow.Skills{"echo": echo(c)}))
	require.NoError(t, second.store.StartWorkers(context.Background(), second.eng, store.QueueOptions{}))
	require.Eventually(t, func() bool {
		got, err := second.store.Run(context.Background(), r.ID)
		require.NoError(t, err)
		return got.Status == engine.StatusCompleted
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, c.get("after"))
}

func TestDelayInALoopWaitsAnewEachRound(t *testing.T) {
	t.Parallel()
	c := &counter{}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
	wf := compile(t, head+`metadata: {name: rounds}
stages:
  - id: tick
    type: set
    set: {n: (context.n ?? 0) + 1}
  - id: pause
    type: delay
    duration: 1h
    max_iterations: 2
    on_error: {then: {goto: finish}}
    on_complete: tick
  - {id: finish, type: skill, skill: echo}
`, flow.Skills{"echo": echo(c)})
	b := setupClock(t, "", nil, clk.now, wf)
	r := b.run(t, "rounds", nil)
	for range 2 {
		require.Equal(t, engine.StatusWaiting, r.Status, r.Error)
		clk.add(time.Hour)
		r = b.advance(t, r.ID)
	}
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, float64(3), contextOf(t, r)["n"])
	require.Equal(t, []string{"tick:ok", "pause:waiting", "pause:ok", "tick:ok", "pause:waiting", "pause:ok", "tick:ok", "pause:goto:finish", "finish:ok"}, b.steps(t, r.ID))
}
