package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestSessions: a live session signs its account in until it expires;
// seen_at moves at most once a minute; the account lists its live
// sessions by a prefix of their hash; signing out ends one or all.
func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	addAccount(t, st, "ada", false)
	t0 := *now
	require.NoError(t, st.CreateSession(ctx, "0123456789abcdef", store.Session{AccountID: "ada", ExpiresAt: t0.Add(time.Hour),
		Address: "192.0.2.1", Agent: "Firefox"}))
	require.NoError(t, st.CreateSession(ctx, "fedcba9876543210", store.Session{AccountID: "ada", CreatedAt: t0.Add(-2 * time.Hour),
		ExpiresAt: t0.Add(-time.Minute)}))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.CreateSession(ctx, "x", store.Session{AccountID: "nobody", ExpiresAt: t0.Add(time.Hour)})))
	require.Equal(t, fault.EInvalid, fault.ErrorCode(st.CreateSession(ctx, "y", store.Session{AccountID: "ada"})), "an expiry is required")

	a, err := st.SessionAccount(ctx, "0123456789abcdef", t0)
	require.NoError(t, err)
	require.Equal(t, "ada", a.ID)
	_, err = st.SessionAccount(ctx, "fedcba9876543210", t0)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err), "expired")
	_, err = st.SessionAccount(ctx, "0123456789abcdef", t0.Add(time.Hour))
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err), "expired at its expiry")
	_, err = st.SessionAccount(ctx, "unknown", t0)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))

	seen := func() time.Time {
		t.Helper()
		list, err := st.Sessions(ctx, "ada")
		require.NoError(t, err)
		require.Len(t, list, 1, "the expired session is not listed")
		require.Equal(t, "01234567", list[0].IDHashPrefix)
		require.Equal(t, "192.0.2.1", list[0].Address)
		require.Equal(t, "Firefox", list[0].Agent)
		require.Equal(t, t0, list[0].CreatedAt)
		return list[0].SeenAt
	}
	require.Equal(t, t0, seen())
	_, err = st.SessionAccount(ctx, "0123456789abcdef", t0.Add(30*time.Second))
	require.NoError(t, err)
	require.Equal(t, t0, seen(), "seen half a minute ago: not written")
	_, err = st.SessionAccount(ctx, "0123456789abcdef", t0.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, t0.Add(2*time.Minute), seen())
	_, err = st.SessionAccount(ctx, "0123456789abcdef", t0.Add(2*time.Minute+50*time.Second))
	require.NoError(t, err)
	require.Equal(t, t0.Add(2*time.Minute), seen())

	require.NoError(t, st.DeleteSession(ctx, "0123456789abcdef"))
	require.NoError(t, st.DeleteSession(ctx, "0123456789abcdef"), "signing out twice is harmless")
	_, err = st.SessionAccount(ctx, "0123456789abcdef", t0)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))

	for _, h := range []string{"s1", "s2"} {
		require.NoError(t, st.CreateSession(ctx, h, store.Session{AccountID: "ada", ExpiresAt: t0.Add(time.Hour)}))
	}
	n, err := st.DeleteSessions(ctx, "ada")
	require.NoError(t, err)
	require.Equal(t, 3, n, "the two live ones and the expired one")
}

// TestSessionOfDisabledAccount: a session stops working when its account
// is disabled, even if it was not deleted (a session created after).
func TestSessionOfDisabledAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	addAccount(t, st, "admin", true)
	addAccount(t, st, "bob", false)
	require.NoError(t, st.SetAccountDisabled(ctx, "bob", true))
	require.NoError(t, st.CreateSession(ctx, "late", store.Session{AccountID: "bob", ExpiresAt: now.Add(time.Hour)}))
	_, err := st.SessionAccount(ctx, "late", *now)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))
}

// TestLoginFailures: failures are counted per key since a time, to the
// sub-second, pruned after a day, and cleared per key.
func TestLoginFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	t0 := *now
	keys := []string{"email:ada@example.org", "ip:192.0.2.1"}
	require.NoError(t, st.RecordLoginFailure(ctx, keys, t0))
	require.NoError(t, st.RecordLoginFailure(ctx, keys, t0.Add(500*time.Millisecond)))
	require.NoError(t, st.RecordLoginFailure(ctx, keys[1:], t0.Add(time.Minute)))

	got, err := st.LoginFailures(ctx, keys, t0)
	require.NoError(t, err)
	require.Equal(t, map[string][]time.Time{
		keys[0]: {t0, t0.Add(500 * time.Millisecond)},
		keys[1]: {t0, t0.Add(500 * time.Millisecond), t0.Add(time.Minute)},
	}, got)
	got, err = st.LoginFailures(ctx, keys, t0.Add(500*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, []time.Time{t0.Add(500 * time.Millisecond)}, got[keys[0]], "the boundary is inclusive")
	got, err = st.LoginFailures(ctx, keys, t0.Add(600*time.Millisecond))
	require.NoError(t, err)
	require.NotContains(t, got, keys[0])
	require.Equal(t, []time.Time{t0.Add(time.Minute)}, got[keys[1]])
	got, err = st.LoginFailures(ctx, []string{"other"}, time.Time{})
	require.NoError(t, err)
	require.Empty(t, got)

	require.NoError(t, st.ClearLoginFailures(ctx, keys[0]))
	got, err = st.LoginFailures(ctx, keys, time.Time{})
	require.NoError(t, err)
	require.NotContains(t, got, keys[0])
	require.Len(t, got[keys[1]], 3, "other keys keep theirs")

	// A failure a day and more later prunes the old ones.
	late := t0.Add(25 * time.Hour)
	require.NoError(t, st.RecordLoginFailure(ctx, keys[1:], late))
	got, err = st.LoginFailures(ctx, keys, time.Time{})
	require.NoError(t, err)
	require.Equal(t, []time.Time{late}, got[keys[1]])
}
