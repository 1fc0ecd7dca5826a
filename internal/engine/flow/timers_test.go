package flow_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// notifier is a fake flow.Notifier: it keeps every notice and fails the
// calls whose number (1-based) is in fail.
type notifier struct {
	mu   sync.Mutex
	got  []flow.Notice
	fail map[int]bool
}

func (n *notifier) Notify(_ context.Context, x flow.Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, x)
	if n.fail[len(n.got)] {
		return errors.New("hooks.example.org answered 503")
	}
	return nil
}

func (n *notifier) events() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.got {
		out = append(out, string(x.Event))
	}
	return out
}

// compileTimed compiles src with the webhook host of its notices allowed
// and the notifier given (nil: notices are only recorded).
func compileTimed(t *testing.T, src string, skills flow.Skills, n flow.Notifier) *engine.Workflow {
	t.Helper()
	d, err := def.Load("timed.yaml", []byte(src), def.Options{Skills: skills.Names(), WebhookHosts: []string{"hooks.example.org"}})
	require.NoError(t, err)
	wf, err := flow.CompileWith(d, flow.Options{Skills: skills, Notifier: n})
	require.NoError(t, err)
	return wf
}

const defaultDef = head + `metadata: {name: timed}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: work}, {label: Stop, next: complete}]
    timeout: 2h
    on_timeout: {default: Go}
  - {id: work, type: skill, skill: echo}
`

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func timerOf(t *testing.T, b *bundle, cp string) engine.GateTimer {
	t.Helper()
	tm, err := b.store.GateTimer(context.Background(), cp)
	require.NoError(t, err)
	return tm
}

// decisions counts the recorded decisions of the run's checkpoints.
func decisions(t *testing.T, b *bundle, runID string) []*engine.DecisionRecord {
	t.Helper()
	cps, err := b.store.Checkpoints(context.Background(), runID)
	require.NoError(t, err)
	var out []*engine.DecisionRecord
	for _, cd := range cps {
		if cd.Decision != nil {
			out = append(out, cd.Decision)
		}
	}
	return out
}

func TestGateTimeoutTakesTheDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &counter{}
	clk := &clock{t: t0}
	b := setupClock(t, "", engine.Pending(), clk.now, compileTimed(t, defaultDef, flow.Skills{"echo": echo(c)}, nil))
	r := b.run(t, "timed", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	tm := timerOf(t, b, cp.ID)
	require.Equal(t, engine.TimerPending, tm.Status)
	require.Equal(t, t0.Add(2*time.Hour), tm.Due, "due is the engine's clock + timeout")
	require.Equal(t, "Go", tm.Default)

	// Early: nothing is due, and a job that runs early waits again.
	clk.add(time.Hour)
	n, err := b.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, b.eng.FireTimer(ctx, r.ID, cp.ID))
	r, err = b.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, r.Status)
	require.Equal(t, engine.TimerPending, timerOf(t, b, cp.ID).Status)

	// Past due: the gate takes its default, once.
	clk.add(time.Hour + time.Second)
	n, err = b.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	r, err = b.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusRunning, r.Status, r.Error)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 1, c.get("work"))
	require.Equal(t, []string{"ask:checkpoint", "ask:goto:work", "work:ok"}, b.steps(t, r.ID))

	decs := decisions(t, b, r.ID)
	require.Len(t, decs, 1)
	require.Equal(t, engine.TimeoutBy, decs[0].DecidedBy)
	require.Equal(t, `{"option":"Go"}`, string(decs[0].RevisedData))
	require.Contains(t, decs[0].Note, `took its default "Go"`)
	require.Equal(t, map[string]any{"option": "Go", "input": "", "decided_by": "timeout"}, outputsOf(t, r)["ask"])

	tm = timerOf(t, b, cp.ID)
	require.Equal(t, engine.TimerFired, tm.Status)
	require.Equal(t, "default", tm.Outcome)
	require.NotNil(t, tm.FiredAt)
	require.Equal(t, t0.Add(2*time.Hour+time.Second), *tm.FiredAt)

	// Fired once: again, and a late job, change nothing; a person
	// deciding now is told the timer did.
	n, err = b.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, b.eng.FireTimer(ctx, r.ID, cp.ID))
	err = b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Stop", "", "ana"))
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "decided by timeout")
	require.Equal(t, []string{"ask:checkpoint", "ask:goto:work", "work:ok"}, b.steps(t, r.ID))
	require.Len(t, decisions(t, b, r.ID), 1)

	// Without notify, the timer's events are recorded, not sent.
	notices, err := b.store.GateNotices(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, notices, 2)
	require.Equal(t, engine.NoticeEntered, notices[0].Event)
	require.Equal(t, engine.NoticeTimedOut, notices[1].Event)
	require.Equal(t, `took the default "Go"`, notices[1].Outcome)
	for _, x := range notices {
		require.Equal(t, engine.NoticeRecorded, x.Status)
	}
}

const extendDef = head + `metadata: {name: chase}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: complete}]
    timeout: 1h
    on_timeout: {extend: 30m, max_extensions: 3, then: escalate}
    notify: [{webhook: "https://hooks.example.org/n"}, {email: lead@example.org}]
`

func TestGateTimeoutExtendsThreeTimesThenEscalates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: t0}
	note := &notifier{fail: map[int]bool{3: true}} // the second extension's notice fails
	b := setupClock(t, "", engine.Pending(), clk.now, compileTimed(t, extendDef, flow.Skills{}, note))
	r := b.run(t, "chase", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	require.Equal(t, []string{"entered"}, note.events())
	require.Equal(t, "chase", note.got[0].Workflow)
	require.Equal(t, "ask", note.got[0].Stage)
	require.Equal(t, r.ID, note.got[0].RunID)
	require.Equal(t, t0.Add(time.Hour), note.got[0].Due)
	require.Equal(t, []flow.NoticeTarget{{Webhook: "https://hooks.example.org/n"}, {Email: "lead@example.org"}}, note.got[0].Targets)

	due := t0.Add(time.Hour)
	for i := 1; i <= 3; i++ {
		clk.t = due.Add(time.Minute)
		n, err := b.eng.FireTimers(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		r, err = b.store.Run(ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, engine.StatusWaiting, r.Status, "extension %d", i)
		require.Equal(t, cp.ID, r.CheckpointID, "the same question, with more time")
		tm := timerOf(t, b, cp.ID)
		require.Equal(t, engine.TimerPending, tm.Status)
		require.Equal(t, i, tm.Extensions)
		due = clk.now().Add(30 * time.Minute)
		require.Equal(t, due, tm.Due)
		require.Len(t, note.got, 1+i)
		require.Equal(t, engine.NoticeExtended, note.got[i].Event)
		require.Equal(t, due, note.got[i].Due)
		require.Equal(t, i, note.got[i].Extensions)
		// Not due again until the new time.
		clk.t = due.Add(-time.Second)
		n, err = b.eng.FireTimers(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	}
	clk.t = due.Add(time.Minute)
	n, err := b.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	r, err = b.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.NotEqual(t, cp.ID, r.CheckpointID)
	esc, _, err := b.store.Checkpoint(ctx, r.CheckpointID)
	require.NoError(t, err)
	require.Equal(t, engine.KindEscalation, esc.Kind)
	gate, _, err := b.store.Checkpoint(ctx, cp.ID)
	require.NoError(t, err)
	require.Equal(t, engine.CheckpointExpired, gate.Status)
	require.Contains(t, r.Error, `gate "ask" timed out`)
	require.Contains(t, r.Error, "after 3 extension(s)")
	tm := timerOf(t, b, cp.ID)
	require.Equal(t, engine.TimerFired, tm.Status)
	require.Equal(t, "escalate", tm.Outcome)
	require.Equal(t, 3, tm.Extensions)
	require.Equal(t, []string{"ask:checkpoint", "ask:escalated"}, b.steps(t, r.ID))
	require.Empty(t, decisions(t, b, r.ID), "nobody decided the gate")

	require.Equal(t, []string{"entered", "extended", "extended", "extended", "timed_out"}, note.events())
	notices, err := b.store.GateNotices(ctx, r.ID)
	require.NoError(t, err)
	var got []string
	for _, x := range notices {
		got = append(got, string(x.Event)+":"+string(x.Status)+":"+x.Error)
	}
	require.Equal(t, []string{"entered:sent:", "extended:sent:", "extended:failed:hooks.example.org answered 503", "extended:sent:", "timed_out:sent:"}, got)
	require.Equal(t, "escalate", notices[4].Outcome)

	// Fired for good: more firings change nothing.
	require.NoError(t, b.eng.FireTimer(ctx, r.ID, cp.ID))
	require.Equal(t, []string{"ask:checkpoint", "ask:escalated"}, b.steps(t, r.ID))
	require.Len(t, note.got, 5)

	// The person retries at the escalation: the gate asks again, with a
	// new timer.
	require.NoError(t, b.eng.Decide(ctx, r.ID, r.CheckpointID, engine.Decision{Action: engine.Approve, DecidedBy: "lead"}))
	r = b.advance(t, r.ID)
	again, _ := pendingCheckpoint(t, b, r)
	require.NotEqual(t, cp.ID, again.ID)
	tm = timerOf(t, b, again.ID)
	require.Equal(t, engine.TimerPending, tm.Status)
	require.Zero(t, tm.Extensions)
	require.Equal(t, clk.now().Add(time.Hour), tm.Due)
}

const onceDef = head + `metadata: {name: once}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: work}, {label: Stop, next: complete}]
    timeout: 1h
    on_timeout: {default: Stop}
  - {id: work, type: skill, skill: echo}
`

// TestGateTimerFiresOnceAcrossARestart: the timer is stored with the
// checkpoint; a new process on the same file, its clock past due, fires
// it once however many firings race (goroutines of one engine, and a
// second engine on the same file) with a person deciding at once.
func TestGateTimerFiresOnceAcrossARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &counter{}
	clk := &clock{t: t0}
	path := filepath.Join(t.TempDir(), "timers.db")
	wf := func() *engine.Workflow { return compileTimed(t, onceDef, flow.Skills{"echo": echo(c)}, nil) }
	first := setupClock(t, path, engine.Pending(), clk.now, wf())
	r := first.run(t, "once", nil)
	cp, _ := pendingCheckpoint(t, first, r)
	require.NoError(t, first.store.Close())

	clk.add(time.Hour + time.Minute)
	second := setupClock(t, path, engine.Pending(), clk.now, wf())
	third := setupClock(t, path, engine.Pending(), clk.now, wf())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 16 {
		b := second
		if i%2 == 1 {
			b = third
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%4 == 0 {
				_, err := b.eng.FireTimers(ctx)
				errs <- err
				return
			}
			errs <- b.eng.FireTimer(ctx, r.ID, cp.ID)
		}()
	}
	wg.Add(1)
	var personErr error
	go func() {
		defer wg.Done()
		personErr = second.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Go", "", "ana"))
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	r = second.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)

	decs := decisions(t, second, r.ID)
	require.Len(t, decs, 1, "exactly one transition")
	steps := second.steps(t, r.ID)
	if decs[0].DecidedBy == engine.TimeoutBy {
		require.Equal(t, fault.EConflict, fault.ErrorCode(personErr), "the timer won: the person is told (%v)", personErr)
		require.Equal(t, []string{"ask:checkpoint", "ask:goto:_end"}, steps)
		require.Equal(t, engine.TimerFired, timerOf(t, second, cp.ID).Status)
		require.Zero(t, c.get("work"))
	} else {
		require.NoError(t, personErr)
		require.Equal(t, "ana", decs[0].DecidedBy)
		require.Equal(t, []string{"ask:checkpoint", "ask:goto:work", "work:ok"}, steps)
		require.Equal(t, engine.TimerCanceled, timerOf(t, second, cp.ID).Status)
		require.Equal(t, 1, c.get("work"))
	}
	notices, err := second.store.GateNotices(ctx, r.ID)
	require.NoError(t, err)
	timedOut := 0
	for _, x := range notices {
		if x.Event == engine.NoticeTimedOut {
			timedOut++
		}
	}
	require.LessOrEqual(t, timedOut, 1)
}

// TestGateTimerFiresOnceWithoutAPerson: the restart and the racing
// firings alone (no person), so the timer always wins: one decision, by
// timeout, one transition.
func TestGateTimerFiresOnceWithoutAPerson(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &counter{}
	clk := &clock{t: t0}
	path := filepath.Join(t.TempDir(), "timers.db")
	wf := func() *engine.Workflow { return compileTimed(t, onceDef, flow.Skills{"echo": echo(c)}, nil) }
	first := setupClock(t, path, engine.Pending(), clk.now, wf())
	r := first.run(t, "once", nil)
	cp, _ := pendingCheckpoint(t, first, r)
	require.NoError(t, first.store.Close())

	clk.add(2 * time.Hour)
	second := setupClock(t, path, engine.Pending(), clk.now, wf())
	third := setupClock(t, path, engine.Pending(), clk.now, wf())
	var wg sync.WaitGroup
	for i := range 12 {
		b := second
		if i%2 == 1 {
			b = third
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, b.eng.FireTimer(ctx, r.ID, cp.ID))
		}()
	}
	wg.Wait()
	// Twice more, after the race: still nothing.
	require.NoError(t, second.eng.FireTimer(ctx, r.ID, cp.ID))
	n, err := third.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	r, err = second.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	decs := decisions(t, second, r.ID)
	require.Len(t, decs, 1)
	require.Equal(t, engine.TimeoutBy, decs[0].DecidedBy)
	require.Equal(t, []string{"ask:checkpoint", "ask:goto:_end"}, second.steps(t, r.ID))
	notices, err := second.store.GateNotices(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, notices, 2, "entered, then timed out once")
}

func TestAPersonDecidingFirstMakesTheTimerANoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &counter{}
	clk := &clock{t: t0}
	b := setupClock(t, "", engine.Pending(), clk.now, compileTimed(t, onceDef, flow.Skills{"echo": echo(c)}, nil))
	r := b.run(t, "once", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	clk.add(30 * time.Minute)
	require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Go", "", "ana")))
	require.Equal(t, engine.TimerCanceled, timerOf(t, b, cp.ID).Status)

	// The timer's job runs at its time, after the decision but before the
	// run resumed, and again after: nothing happens.
	clk.add(time.Hour)
	require.NoError(t, b.eng.FireTimer(ctx, r.ID, cp.ID))
	n, err := b.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.NoError(t, b.eng.FireTimer(ctx, r.ID, cp.ID))
	require.Equal(t, []string{"ask:checkpoint", "ask:goto:work", "work:ok"}, b.steps(t, r.ID))
	decs := decisions(t, b, r.ID)
	require.Len(t, decs, 1)
	require.Equal(t, "ana", decs[0].DecidedBy)
	require.Equal(t, engine.TimerCanceled, timerOf(t, b, cp.ID).Status)
	require.Equal(t, 1, c.get("work"))
}

func TestGateTimeoutThenGotoAndFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct{ then, status, steps string }{
		{"{goto: other}", "completed", "ask:checkpoint ask:goto:other other:ok"},
		{"fail", "failed", "ask:checkpoint ask:failed"},
	} {
		t.Run(tt.then, func(t *testing.T) {
			t.Parallel()
			c := &counter{}
			clk := &clock{t: t0}
			src := head + `metadata: {name: th}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: other}]
    timeout: 1h
    on_timeout: {extend: 1h, max_extensions: 1, then: ` + tt.then + `}
  - {id: other, type: skill, skill: echo}
`
			b := setupClock(t, "", engine.Pending(), clk.now, compileTimed(t, src, flow.Skills{"echo": echo(c)}, nil))
			r := b.run(t, "th", nil)
			cp, _ := pendingCheckpoint(t, b, r)
			for range 2 {
				clk.add(time.Hour + time.Second)
				_, err := b.eng.FireTimers(ctx)
				require.NoError(t, err)
			}
			r = b.advance(t, r.ID)
			require.Equal(t, engine.Status(tt.status), r.Status, r.Error)
			var got string
			for i, s := range b.steps(t, r.ID) {
				if i > 0 {
					got += " "
				}
				got += s
			}
			require.Equal(t, tt.steps, got)
			gate, _, err := b.store.Checkpoint(ctx, cp.ID)
			require.NoError(t, err)
			require.Equal(t, engine.CheckpointExpired, gate.Status)
		})
	}
}

// TestGateTimerIsAScheduledJob runs a 1 s timeout through River's
// workers on the real clock, in a process started after the gate asked:
// the job the asking commit scheduled fires the timer.
func TestGateTimerIsAScheduledJob(t *testing.T) {
	t.Parallel()
	c := &counter{}
	src := head + `metadata: {name: quick}
stages:
  - id: ask
    type: gate
    options: [{label: Go, next: work}, {label: Stop, next: complete}]
    timeout: 1s
    on_timeout: {default: Go}
  - {id: work, type: skill, skill: echo}
`
	path := filepath.Join(t.TempDir(), "job.db")
	first := setup(t, path, engine.Pending(), compileTimed(t, src, flow.Skills{"echo": echo(c)}, nil))
	r := first.run(t, "quick", nil)
	require.Equal(t, engine.StatusWaiting, r.Status, r.Error)
	require.NoError(t, first.store.Close())

	second := setup(t, path, engine.Pending(), compileTimed(t, src, flow.Skills{"echo": echo(c)}, nil))
	require.NoError(t, second.store.StartWorkers(context.Background(), second.eng, store.QueueOptions{}))
	t.Cleanup(func() { _ = second.store.StopWorkers(context.Background()) })
	require.Eventually(t, func() bool {
		got, err := second.store.Run(context.Background(), r.ID)
		require.NoError(t, err)
		return got.Status == engine.StatusCompleted
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, c.get("work"))
	decs := decisions(t, second, r.ID)
	require.Len(t, decs, 1)
	require.Equal(t, engine.TimeoutBy, decs[0].DecidedBy)
}

// TestGateTimeoutAtAGateSeveralPeopleDecide: one vote of the two needed,
// then the time runs out: the gate takes its default, and a vote after
// it is kept as late and refused.
func TestGateTimeoutAtAGateSeveralPeopleDecide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: t0}
	src := head + `metadata: {name: panel}
stages:
  - id: ask
    type: gate
    options: [{label: Approve, next: complete}, {label: Reject, next: complete}]
    approval: {count: 2, options: [Approve]}
    timeout: 1h
    on_timeout: {default: Reject}
`
	b := setupClock(t, "", engine.Pending(), clk.now, compileTimed(t, src, flow.Skills{}, nil))
	r := b.run(t, "panel", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	ballot, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "ana"))
	require.NoError(t, err)
	require.False(t, ballot.Resolved())
	require.Equal(t, engine.TimerPending, timerOf(t, b, cp.ID).Status, "a vote that does not decide leaves the timer running")

	clk.add(time.Hour)
	n, err := b.eng.FireTimers(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	r, err = b.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusCompleted, r.Status, "Reject ends the run, in the timer's commit")
	decs := decisions(t, b, r.ID)
	require.Len(t, decs, 1)
	require.Equal(t, engine.TimeoutBy, decs[0].DecidedBy)
	require.Equal(t, `{"option":"Reject"}`, string(decs[0].RevisedData))

	_, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "bo"))
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	votes, err := b.store.Votes(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, votes, 2)
	require.True(t, votes[1].Late)
	require.Equal(t, map[string]any{"option": "Reject", "input": "", "decided_by": "timeout"}, outputsOf(t, r)["ask"])
}

// TestDueTimersWithinOneSecond: a timer due on a whole second is due half
// a second later, though its stored time sorts after that moment's.
func TestDueTimersWithinOneSecond(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: t0}
	b := setupClock(t, "", engine.Pending(), clk.now, compileTimed(t, onceDef, flow.Skills{"echo": echo(&counter{})}, nil))
	r := b.run(t, "once", nil)
	pendingCheckpoint(t, b, r)
	clk.add(time.Hour - 500*time.Millisecond)
	due, err := b.store.DueGateTimers(ctx, clk.now())
	require.NoError(t, err)
	require.Empty(t, due)
	clk.add(time.Second)
	due, err = b.store.DueGateTimers(ctx, clk.now())
	require.NoError(t, err)
	require.Len(t, due, 1)
}

// stopper is a Notifier that stops the process as it sends: it cancels
// the context the engine works under, so the notice's outcome cannot be
// recorded, as when the server stops mid-send.
type stopper struct{ stop context.CancelFunc }

func (s stopper) Notify(ctx context.Context, _ flow.Notice) error {
	s.stop()
	return ctx.Err()
}

// TestANoticeACrashLeftUnsentIsSentAtStartUp: the entered notice is
// committed with the checkpoint; the process stops while sending it, so
// it stays pending; the next process's Recover sends it, once.
func TestANoticeACrashLeftUnsentIsSentAtStartUp(t *testing.T) {
	t.Parallel()
	clk := &clock{t: t0}
	path := filepath.Join(t.TempDir(), "notices.db")
	ctx, stop := context.WithCancel(context.Background())
	first := setupClock(t, path, engine.Pending(), clk.now, compileTimed(t, extendDef, flow.Skills{}, stopper{stop}))
	r, err := first.eng.Start(context.Background(), "chase", nil)
	require.NoError(t, err)
	_ = first.eng.Advance(ctx, r.ID)
	notices, err := first.store.GateNotices(context.Background(), r.ID)
	require.NoError(t, err)
	require.Len(t, notices, 1)
	require.Equal(t, engine.NoticePending, notices[0].Status)
	require.NoError(t, first.store.Close())

	note := &notifier{}
	second := setupClock(t, path, engine.Pending(), clk.now, compileTimed(t, extendDef, flow.Skills{}, note))
	_, err = second.eng.Recover(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"entered"}, note.events())
	require.Equal(t, notices[0].ID, note.got[0].ID)
	notices, err = second.store.GateNotices(context.Background(), r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.NoticeSent, notices[0].Status)
	_, err = second.eng.Recover(context.Background())
	require.NoError(t, err)
	require.Len(t, note.got, 1, "sent once")
}

// TestGateTimerExtendsAcrossRestarts: extend ×3 → escalate with every
// firing done by a new process on the same file (the last one's store
// closed first), two firings racing in each: each extension happens once,
// the fourth timeout escalates once, and the notices say so in order.
func TestGateTimerExtendsAcrossRestarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: t0}
	note := &notifier{}
	path := filepath.Join(t.TempDir(), "extend.db")
	wf := func() *engine.Workflow { return compileTimed(t, extendDef, flow.Skills{}, note) }
	b := setupClock(t, path, engine.Pending(), clk.now, wf())
	r := b.run(t, "chase", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	due := t0.Add(time.Hour)
	for i := 1; i <= 4; i++ {
		require.NoError(t, b.store.Close())
		clk.t = due.Add(time.Minute)
		b = setupClock(t, path, engine.Pending(), clk.now, wf())
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := b.eng.FireTimers(ctx)
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		require.Len(t, note.events(), 1+i, "firing %d happened once", i)
		if i < 4 {
			tm := timerOf(t, b, cp.ID)
			require.Equal(t, i, tm.Extensions)
			due = tm.Due
		}
	}
	r, err := b.store.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Equal(t, []string{"ask:checkpoint", "ask:escalated"}, b.steps(t, r.ID))
	require.Equal(t, []string{"entered", "extended", "extended", "extended", "timed_out"}, note.events())
	tm := timerOf(t, b, cp.ID)
	require.Equal(t, [3]any{engine.TimerFired, "escalate", 3}, [3]any{tm.Status, tm.Outcome, tm.Extensions})
}
