package access_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/access"
)

func TestDefaultThrottle(t *testing.T) {
	t.Parallel()
	require.Equal(t, access.Throttle{Window: 15 * time.Minute, PerAccount: 5, PerAddress: 50}, access.DefaultThrottle())
}

func TestThrottleCheck(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(ds ...time.Duration) []time.Time {
		ts := make([]time.Time, len(ds))
		for i, d := range ds {
			ts[i] = now.Add(-d)
		}
		return ts
	}
	repeat := func(n int, d time.Duration) []time.Time {
		ts := make([]time.Time, n)
		for i := range ts {
			ts[i] = now.Add(-d)
		}
		return ts
	}
	const m, s = time.Minute, time.Second
	th := access.Throttle{Window: 15 * m, PerAccount: 3, PerAddress: 5}
	tests := []struct {
		name             string
		th               access.Throttle
		account, address []time.Time
		locked           bool
		retry            time.Duration
	}{
		{"None", th, nil, nil, false, 0},
		{"BelowAccountLimit", th, ago(1*m, 2*m), nil, false, 0},
		// Three in the window: locked until the oldest of them (10 min
		// ago) leaves, in 5 minutes.
		{"AtAccountLimit", th, ago(1*m, 2*m, 10*m), nil, true, 5 * m},
		{"Unordered", th, ago(10*m, 1*m, 2*m), nil, true, 5 * m},
		// Five in the window, limit three: the lock lifts when only two
		// remain, so when the third newest (3 min ago) leaves.
		{"OverAccountLimit", th, ago(14*m, 12*m, 3*m, 2*m, 1*m), nil, true, 12 * m},
		{"OldFailuresIgnored", th, ago(1*m, 2*m, 15*m, 20*m, 60*m), nil, false, 0},
		// Exactly Window old has left the window; a nanosecond younger counts.
		{"ExactlyAtEdge", th, ago(1*m, 2*m, 15*m), nil, false, 0},
		{"JustInsideEdge", th, ago(1*m, 2*m, 15*m-time.Nanosecond), nil, true, 1 * s},
		{"RoundsUp", th, ago(1*m, 2*m, 10*m+500*time.Millisecond), nil, true, 5 * m},
		{"RoundsUpPartSecond", th, ago(1*m, 2*m, 10*m-300*time.Millisecond), nil, true, 5*m + 1*s},
		{"AllAtNow", th, repeat(3, 0), nil, true, 15 * m},
		{"FutureClampedToNow", th, ago(-time.Hour, 1*m, 2*m), nil, true, 13 * m},
		{"BelowAddressLimit", th, nil, repeat(4, 1*m), false, 0},
		{"AtAddressLimit", th, nil, ago(1*m, 2*m, 3*m, 4*m, 9*m), true, 6 * m},
		// Both locked: wait for the later unlock.
		{"BothAddressLater", th, ago(1*m, 2*m, 13*m), ago(1*m, 2*m, 3*m, 4*m, 9*m), true, 6 * m},
		{"BothAccountLater", th, ago(1*m, 2*m, 5*m), ago(1*m, 2*m, 3*m, 4*m, 9*m), true, 10 * m},
		// Address failures do not count toward the account limit.
		{"SidesSeparate", th, ago(1*m, 2*m), ago(1*m, 2*m, 3*m, 4*m), false, 0},
		{"AccountLimitOff", access.Throttle{Window: 15 * m, PerAddress: 5}, repeat(100, 1*m), nil, false, 0},
		{"NoWindow", access.Throttle{PerAccount: 1, PerAddress: 1}, repeat(10, 0), repeat(10, 0), false, 0},
		{"DefaultFifth", access.DefaultThrottle(), ago(1*m, 2*m, 3*m, 4*m, 14*m+59*s), nil, true, 1 * s},
		{"DefaultFourth", access.DefaultThrottle(), ago(1*m, 2*m, 3*m, 4*m), nil, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			locked, retry := tt.th.Check(tt.account, tt.address, now)
			require.Equal(t, tt.locked, locked)
			require.Equal(t, tt.retry, retry)
		})
	}
}

// TestThrottleRetryAfterUnlocks checks retryAfter is the moment the lock
// lifts: locked a nanosecond before, unlocked at it.
func TestThrottleRetryAfterUnlocks(t *testing.T) {
	t.Parallel()
	th := access.DefaultThrottle()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var fails []time.Time
	for i := range 9 {
		fails = append(fails, now.Add(-time.Duration(i*97)*time.Second))
	}
	locked, retry := th.Check(fails, nil, now)
	require.True(t, locked)
	later := now.Add(retry)
	locked, _ = th.Check(fails, nil, later.Add(-time.Nanosecond))
	require.True(t, locked)
	locked, after := th.Check(fails, nil, later)
	require.False(t, locked)
	require.Zero(t, after)
}
