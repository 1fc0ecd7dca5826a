package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestAPITokens: a live token signs its account in and notes its use at
// most once a minute; only its account revokes it, and then it is dead.
func TestAPITokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	t0 := *now
	addAccount(t, st, "ada", false)
	addAccount(t, st, "bob", false)
	require.NoError(t, st.CreateAPIToken(ctx, store.APIToken{ID: "t1", AccountID: "ada", Name: "laptop", Prefix: "qt_1a"}, "hash1"))
	*now = t0.Add(time.Minute)
	require.NoError(t, st.CreateAPIToken(ctx, store.APIToken{ID: "t2", AccountID: "ada", Name: "ci", Prefix: "qt_2b"}, "hash2"))
	require.Equal(t, fault.EConflict, fault.ErrorCode(st.CreateAPIToken(ctx, store.APIToken{ID: "t3", AccountID: "ada", Name: "dup"}, "hash1")))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.CreateAPIToken(ctx, store.APIToken{ID: "t4", AccountID: "nobody", Name: "x"}, "hash4")))
	require.Equal(t, fault.EInvalid, fault.ErrorCode(st.CreateAPIToken(ctx, store.APIToken{ID: "t5", AccountID: "ada"}, "hash5")), "a name is required")

	tokens, err := st.APITokens(ctx, "ada")
	require.NoError(t, err)
	require.Equal(t, []store.APIToken{
		{ID: "t2", AccountID: "ada", Name: "ci", Prefix: "qt_2b", CreatedAt: t0.Add(time.Minute)},
		{ID: "t1", AccountID: "ada", Name: "laptop", Prefix: "qt_1a", CreatedAt: t0},
	}, tokens)

	a, err := st.APITokenAccount(ctx, "hash1", t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, "ada", a.ID)
	lastUsed := func() time.Time {
		t.Helper()
		tokens, err := st.APITokens(ctx, "ada")
		require.NoError(t, err)
		return tokens[1].LastUsedAt
	}
	require.Equal(t, t0.Add(time.Hour), lastUsed(), "the first use is noted")
	_, err = st.APITokenAccount(ctx, "hash1", t0.Add(time.Hour+40*time.Second))
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour), lastUsed(), "not again within the minute")
	_, err = st.APITokenAccount(ctx, "hash1", t0.Add(time.Hour+2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour+2*time.Minute), lastUsed())
	_, err = st.APITokenAccount(ctx, "unknown", t0)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))

	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.RevokeAPIToken(ctx, "bob", "t1")), "not bob's token")
	_, err = st.APITokenAccount(ctx, "hash1", t0)
	require.NoError(t, err, "still alive")
	*now = t0.Add(2 * time.Hour)
	require.NoError(t, st.RevokeAPIToken(ctx, "ada", "t1"))
	require.NoError(t, st.RevokeAPIToken(ctx, "ada", "t1"), "revoking twice is no error")
	_, err = st.APITokenAccount(ctx, "hash1", t0)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))
	require.Equal(t, *now, revokedAt(t, st, "ada", "t1"))
	_, err = st.APITokenAccount(ctx, "hash2", t0)
	require.NoError(t, err, "the other token lives on")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.RevokeAPIToken(ctx, "ada", "unknown")))
}

// revokedAt is when the account's token id was revoked.
func revokedAt(t *testing.T, st *store.Store, accountID, id string) time.Time {
	t.Helper()
	tokens, err := st.APITokens(context.Background(), accountID)
	require.NoError(t, err)
	for _, tk := range tokens {
		if tk.ID == id {
			return tk.RevokedAt
		}
	}
	t.Fatalf("no token %s", id)
	return time.Time{}
}
