package sources

import (
	"context"
	"sync"
	"time"
)

// callClockKey finds a call's clock in its context.
type callClockKey struct{}

// callClock is a source call's timeout that can pause: it runs while the
// call talks to its API and stops while the call waits its turn in its
// own client's queue, so it measures the remote service, not how many
// queries are queued before this one. A context deadline cannot do this
// (it never moves), hence a timer that cancels the call when the time
// not spent waiting reaches the timeout.
type callClock struct {
	mu     sync.Mutex
	left   time.Duration // time the call still has, as of since
	since  time.Time     // when the clock last started running
	waits  int           // turns being waited for; the clock runs only at 0
	waited bool          // a wait for a turn began
	turned bool          // a wait ended while the call was live: a request may have left
	timer  *time.Timer   // nil while paused
	over   bool          // fired or stopped: never runs again
	expire func()
}

func startCallClock(d time.Duration, expire func()) *callClock {
	c := &callClock{left: d, since: time.Now(), expire: expire}
	c.timer = time.AfterFunc(d, c.fire)
	return c
}

func (c *callClock) fire() {
	c.mu.Lock()
	if c.over {
		c.mu.Unlock()
		return
	}
	c.over = true
	c.mu.Unlock()
	c.expire()
}

// pause stops the clock for a wait; a timer that already fired still
// expires the call.
func (c *callClock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits++
	c.waited = true
	if c.waits > 1 || c.over || c.timer == nil {
		return
	}
	if c.timer.Stop() {
		c.left -= time.Since(c.since)
	}
	c.timer = nil
}

// resume restarts the clock when the last wait ends; live says the
// call's context was not done then, so the turn can be used.
func (c *callClock) resume(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits--
	if c.waits > 0 {
		return
	}
	if live {
		c.turned = true
	}
	if c.over {
		return
	}
	c.since = time.Now()
	c.timer = time.AfterFunc(max(c.left, 0), c.fire)
}

func (c *callClock) timeLeft() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.over:
		return 0
	case c.timer == nil:
		return max(c.left, 0)
	}
	return max(c.left-time.Since(c.since), 0)
}

// sentNothing reports whether the call waited for a turn and has not had
// one it could use: it is still waiting, or its wait ended with its
// context done. A source that waits for turns sends nothing before its
// first, and nothing with a done context, so such a call reached no API.
func (c *callClock) sentNothing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waited && !c.turned
}

// stop ends the clock when the call returns, so a source that outlives its
// call cannot restart it.
func (c *callClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.over = true
	if c.timer != nil {
		c.timer.Stop()
	}
}

// WaitingForTurn tells the searcher that the calling source now waits its
// turn in a queue of its own: its API client holding requests back to keep
// to the API's documented rate or concurrency limit. The call's timeout
// (SearcherOptions.Timeout) stops until the returned function is called,
// which the source must do when the turn comes or the wait is abandoned;
// calling it again does nothing. Without this, queries queued behind a
// strict limit (arXiv: one request every 3 s, one at a time) would fail
// for their place in the queue although the API answers each one quickly.
// The wait stays bounded by ctx's cancellation and any deadline of the
// search itself, and by whatever bound the source's client puts on its
// own queue. Outside a searcher call it does nothing.
func WaitingForTurn(ctx context.Context) (turnCame func()) {
	c, ok := ctx.Value(callClockKey{}).(*callClock)
	if !ok {
		return func() {}
	}
	c.pause()
	return sync.OnceFunc(func() { c.resume(ctx.Err() == nil) })
}

// CallTimeLeft is how much of its timeout the searcher call running under
// ctx has left (not counting waits for turns, which do not use it), so a
// source can give up at once on a wait it could not finish, such as a
// retry the server asks to come after that. ok is false outside a
// searcher call.
func CallTimeLeft(ctx context.Context) (left time.Duration, ok bool) {
	c, ok := ctx.Value(callClockKey{}).(*callClock)
	if !ok {
		return 0, false
	}
	return c.timeLeft(), true
}

// Call is a running source call's clock, as the searcher holds it.
type Call struct{ c *callClock }

// StartCall starts the clock of a source call that may run for d (not
// counting waits for turns) and returns the context to call the source with;
// expire runs once when the time is up.
func StartCall(ctx context.Context, d time.Duration, expire func()) (context.Context, *Call) {
	c := startCallClock(d, expire)
	return context.WithValue(ctx, callClockKey{}, c), &Call{c: c}
}

// Stop ends the clock when the call returns, so a source that outlives its
// call cannot restart it.
func (c *Call) Stop() { c.c.stop() }

// SentNothing reports whether the call waited for a turn and has not had
// one it could use, so it reached no API.
func (c *Call) SentNothing() bool { return c.c.sentNothing() }
