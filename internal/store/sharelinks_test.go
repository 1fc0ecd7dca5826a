package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestShareLinks: a link shares a project or one of its runs until it is
// revoked, by its own project only.
func TestShareLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	t0 := *now
	addAccount(t, st, "ada", false)
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p1", Name: "Sleep"}, "ada"))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p2", Name: "Raft"}, "ada"))
	for id, project := range map[string]string{"r1": "p1", "r2": "p2"} {
		require.NoError(t, st.CreateRun(ctx, engine.Run{ID: id, Workflow: "search", Status: engine.StatusPending, Iteration: 1,
			CreatedAt: t0, UpdatedAt: t0, Project: project}))
	}
	whole := store.ShareLink{ID: "l1", ProjectID: "p1", Capability: store.ShareView, CreatedBy: "ada"}
	require.NoError(t, st.CreateShareLink(ctx, whole, "tok1"))
	*now = t0.Add(time.Minute)
	one := store.ShareLink{ID: "l2", ProjectID: "p1", RunID: "r1", Capability: store.ShareDecide, GuestName: "Prof. X", CreatedBy: "ada"}
	require.NoError(t, st.CreateShareLink(ctx, one, "tok2"))

	err := st.CreateShareLink(ctx, store.ShareLink{ID: "l3", ProjectID: "p1", RunID: "r2", Capability: store.ShareView, CreatedBy: "ada"}, "tok3")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "r2 is another project's run: %v", err)
	err = st.CreateShareLink(ctx, store.ShareLink{ID: "l4", ProjectID: "p1", RunID: "nope", Capability: store.ShareView, CreatedBy: "ada"}, "tok4")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	err = st.CreateShareLink(ctx, store.ShareLink{ID: "l5", ProjectID: "nowhere", Capability: store.ShareView, CreatedBy: "ada"}, "tok5")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	err = st.CreateShareLink(ctx, store.ShareLink{ID: "l6", ProjectID: "p1", Capability: "edit", CreatedBy: "ada"}, "tok6")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	err = st.CreateShareLink(ctx, store.ShareLink{ID: "l7", ProjectID: "p1", Capability: store.ShareView, CreatedBy: "ada"}, "tok1")
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))

	got, err := st.ShareLinkByToken(ctx, "tok2")
	require.NoError(t, err)
	one.CreatedAt = t0.Add(time.Minute)
	require.Equal(t, one, got)
	_, err = st.ShareLinkByToken(ctx, "unknown")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	links, err := st.ShareLinks(ctx, "p1")
	require.NoError(t, err)
	require.Len(t, links, 2)
	require.Equal(t, "l2", links[0].ID, "newest first")
	links, err = st.ShareLinks(ctx, "p2")
	require.NoError(t, err)
	require.Empty(t, links)

	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.RevokeShareLink(ctx, "p2", "l1")), "another project's link")
	_, err = st.ShareLinkByToken(ctx, "tok1")
	require.NoError(t, err)
	*now = t0.Add(time.Hour)
	require.NoError(t, st.RevokeShareLink(ctx, "p1", "l1"))
	require.NoError(t, st.RevokeShareLink(ctx, "p1", "l1"), "revoking twice is no error")
	_, err = st.ShareLinkByToken(ctx, "tok1")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "revoked")
	l, err := st.ShareLink(ctx, "l1")
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour), l.RevokedAt)
	require.Equal(t, t0, l.CreatedAt)
	_, err = st.ShareLink(ctx, "nope")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
}
