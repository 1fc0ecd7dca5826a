package access

import (
	"slices"
	"time"
)

// Throttle is the login-throttling policy: too many recent failures for
// one account, or from one network address, lock further attempts until
// enough of them age out. Per account stops guessing one password; per
// address stops one client spraying a common password over many accounts.
// A limit of zero or less switches that side off.
type Throttle struct {
	Window     time.Duration // how long a failure counts
	PerAccount int           // failures per account within Window that lock it
	PerAddress int           // failures per client address within Window that lock it
}

// DefaultThrottle allows 5 failures per account and 50 per address in 15
// minutes: a person who mistypes is not stopped, a guesser gets 20 tries
// an hour.
func DefaultThrottle() Throttle {
	return Throttle{Window: 15 * time.Minute, PerAccount: 5, PerAddress: 50}
}

// Check decides whether a login attempt at now is locked out, given the
// recorded failure times for the account and for the client's address (in
// any order; the store supplies them, Check keeps no state). A failure
// counts while it is less than Window old: one exactly Window old has left.
// retryAfter is how long until enough failures leave the window to unlock
// both sides, rounded up to whole seconds (at least 1 s when locked, 0 when
// not), for a Retry-After header. A failure stamped after now (a clock
// step) counts as made at now, so it cannot lock for longer than Window.
func (t Throttle) Check(accountFailures, addressFailures []time.Time, now time.Time) (locked bool, retryAfter time.Duration) {
	var until time.Time
	for _, side := range []struct {
		failures []time.Time
		limit    int
	}{{accountFailures, t.PerAccount}, {addressFailures, t.PerAddress}} {
		if u, ok := t.lockedUntil(side.failures, side.limit, now); ok {
			locked = true
			if u.After(until) {
				until = u
			}
		}
	}
	if !locked {
		return false, 0
	}
	wait := until.Sub(now)
	wait = (wait + time.Second - 1).Truncate(time.Second)
	return true, max(wait, time.Second)
}

// lockedUntil reports whether limit or more failures lie in the window at
// now and, if so, when the oldest failure that keeps the count at the limit
// leaves the window.
func (t Throttle) lockedUntil(failures []time.Time, limit int, now time.Time) (time.Time, bool) {
	if limit <= 0 || t.Window <= 0 {
		return time.Time{}, false
	}
	start := now.Add(-t.Window)
	var in []time.Time
	for _, f := range failures {
		if f.After(now) {
			f = now
		}
		if f.After(start) {
			in = append(in, f)
		}
	}
	if len(in) < limit {
		return time.Time{}, false
	}
	slices.SortFunc(in, time.Time.Compare)
	// Oldest first: the lock lifts once only limit-1 remain, that is when
	// in[len-limit] leaves the window.
	return in[len(in)-limit].Add(t.Window), true
}
