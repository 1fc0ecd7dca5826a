package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestAuditLog: entries come newest first, by project, the installation's
// own ("") or all, in pages that follow on by seq.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	t0 := *now
	for i, e := range []store.AuditEntry{
		{ActorID: "ada", Actor: "Ada", Action: "account.create", Target: "bob", Address: "192.0.2.1"},
		{ActorID: "ada", Actor: "Ada", Action: "project.create", ProjectID: "p1", Target: "p1"},
		{ActorID: "bob", Actor: "Bob", Action: "run.start", ProjectID: "p1", Target: "r1", Detail: `{"workflow":"search"}`},
		{ActorID: "bob", Actor: "Bob", Action: "run.start", ProjectID: "p2", Target: "r2"},
		{ActorID: "ada", Actor: "Ada", Action: "sign_in.fail", At: t0.Add(-time.Hour)},
	} {
		*now = t0.Add(time.Duration(i) * time.Second)
		require.NoError(t, st.Audit(ctx, e))
	}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(st.Audit(ctx, store.AuditEntry{ActorID: "ada"})), "an action is required")

	actions := func(f store.AuditFilter) ([]string, []int64) {
		t.Helper()
		entries, err := st.AuditLog(ctx, f)
		require.NoError(t, err)
		var as []string
		var seqs []int64
		for _, e := range entries {
			as = append(as, e.Action+"@"+e.ProjectID)
			seqs = append(seqs, e.Seq)
		}
		return as, seqs
	}
	got, _ := actions(store.AuditFilter{ProjectID: "p1", Limit: 10})
	require.Equal(t, []string{"run.start@p1", "project.create@p1"}, got)
	got, _ = actions(store.AuditFilter{Limit: 10})
	require.Equal(t, []string{"sign_in.fail@", "account.create@"}, got, `"" is the installation's own entries`)
	got, seqs := actions(store.AuditFilter{All: true, ProjectID: "p1", Limit: 2})
	require.Equal(t, []string{"sign_in.fail@", "run.start@p2"}, got)
	got, _ = actions(store.AuditFilter{All: true, Before: seqs[1], Limit: 10})
	require.Equal(t, []string{"run.start@p1", "project.create@p1", "account.create@"}, got)

	entries, err := st.AuditLog(ctx, store.AuditFilter{ProjectID: "p1", Limit: 1})
	require.NoError(t, err)
	require.Equal(t, store.AuditEntry{Seq: entries[0].Seq, At: t0.Add(2 * time.Second), ActorID: "bob", Actor: "Bob", Action: "run.start",
		ProjectID: "p1", Target: "r1", Detail: `{"workflow":"search"}`}, entries[0])
	entries, err = st.AuditLog(ctx, store.AuditFilter{All: true, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, t0.Add(-time.Hour), entries[0].At, "a given time is kept")

	for _, limit := range []int{0, 1001} {
		_, err := st.AuditLog(ctx, store.AuditFilter{All: true, Limit: limit})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), limit)
	}
}
