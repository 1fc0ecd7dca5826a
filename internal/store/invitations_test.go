package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestAcceptInvite: an invitation creates its account once, with the
// membership and administration it grants; a used or expired one says
// which, and an email with an account already leaves it unused.
func TestAcceptInvite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	t0 := *now
	addAccount(t, st, "ada", true)
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p1", Name: "Sleep"}, "ada"))
	inv := store.Invitation{TokenHash: "inv1", Kind: store.InvitationInvite, Email: "bob@example.org", ProjectID: "p1",
		Role: store.RoleReviewer, CreatedBy: "ada", ExpiresAt: t0.Add(48 * time.Hour)}
	require.NoError(t, st.CreateInvitation(ctx, inv))
	require.NoError(t, st.CreateInvitation(ctx, store.Invitation{TokenHash: "inv-admin", Kind: store.InvitationInvite, Admin: true,
		CreatedBy: "ada", ExpiresAt: t0.Add(time.Hour)}))
	require.Equal(t, fault.EConflict, fault.ErrorCode(st.CreateInvitation(ctx, inv)))

	got, err := st.Invitation(ctx, "inv1", t0)
	require.NoError(t, err)
	inv.CreatedAt = t0
	require.Equal(t, inv, got)
	_, err = st.Invitation(ctx, "unknown", t0)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))

	pending, err := st.Invitations(ctx, "p1")
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, "inv1", pending[0].TokenHash)
	wide, err := st.Invitations(ctx, "")
	require.NoError(t, err)
	require.Len(t, wide, 1)
	require.Equal(t, "inv-admin", wide[0].TokenHash)

	// Taken email: refused on the field, the invitation still usable.
	err = st.AcceptInvite(ctx, "inv1", store.Account{ID: "b0", Email: "ada@example.org", Name: "Bob"}, t0)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	require.Contains(t, fe.Fields, "email")
	_, err = st.Invitation(ctx, "inv1", t0)
	require.NoError(t, err)

	accept := t0.Add(time.Hour)
	require.NoError(t, st.AcceptInvite(ctx, "inv1", store.Account{ID: "bob", Name: "Bob", PasswordHash: "h"}, accept))
	bob, err := st.Account(ctx, "bob")
	require.NoError(t, err)
	require.Equal(t, "bob@example.org", bob.Email, "the invitation's email when the account names none")
	require.False(t, bob.Admin)
	role, err := st.Role(ctx, "p1", "bob")
	require.NoError(t, err)
	require.Equal(t, store.RoleReviewer, role)
	pending, err = st.Invitations(ctx, "p1")
	require.NoError(t, err)
	require.Empty(t, pending)

	_, err = st.Invitation(ctx, "inv1", accept)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorMessage(err), "used")
	err = st.AcceptInvite(ctx, "inv1", store.Account{ID: "bob2", Email: "bob2@example.org", Name: "Bob"}, accept)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	_, err = st.Account(ctx, "bob2")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))

	// Expired: refused, saying so.
	late := t0.Add(time.Hour)
	_, err = st.Invitation(ctx, "inv-admin", late)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorMessage(err), "expired")
	err = st.AcceptInvite(ctx, "inv-admin", store.Account{ID: "cy", Email: "cy@example.org", Name: "Cy"}, late)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	*now = late
	wide, err = st.Invitations(ctx, "")
	require.NoError(t, err)
	require.Empty(t, wide, "an expired invitation is not pending")

	// An admin invitation makes an admin.
	require.NoError(t, st.AcceptInvite(ctx, "inv-admin", store.Account{ID: "cy", Email: "cy@example.org", Name: "Cy"}, late.Add(-time.Second)))
	cy, err := st.Account(ctx, "cy")
	require.NoError(t, err)
	require.True(t, cy.Admin)
	projects, err := st.AccountProjects(ctx, "cy")
	require.NoError(t, err)
	require.Empty(t, projects)
}

func TestCreateInvitationRefusesIncompleteOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	exp := now.Add(time.Hour)
	for name, inv := range map[string]store.Invitation{
		"kind":          {TokenHash: "a", Kind: "party", ExpiresAt: exp},
		"role":          {TokenHash: "b", Kind: store.InvitationInvite, ProjectID: "p1", Role: "admin", ExpiresAt: exp},
		"no project":    {TokenHash: "c", Kind: store.InvitationInvite, Role: store.RoleViewer, ExpiresAt: exp},
		"reset account": {TokenHash: "d", Kind: store.InvitationReset, ExpiresAt: exp},
		"expiry":        {TokenHash: "e", Kind: store.InvitationInvite},
		"token":         {Kind: store.InvitationInvite, ExpiresAt: exp},
	} {
		require.Equal(t, fault.EInvalid, fault.ErrorCode(st.CreateInvitation(ctx, inv)), name)
	}
}

// TestAcceptReset: a reset link sets the password once and signs the
// account out everywhere; an invitation's token is no reset link, nor the
// reverse; a revoked link is unknown.
func TestAcceptReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	t0 := *now
	addAccount(t, st, "admin", true)
	addAccount(t, st, "ada", false)
	require.NoError(t, st.CreateSession(ctx, "s1", store.Session{AccountID: "ada", ExpiresAt: t0.Add(time.Hour)}))
	require.NoError(t, st.CreateInvitation(ctx, store.Invitation{TokenHash: "r1", Kind: store.InvitationReset, AccountID: "ada",
		CreatedBy: "admin", ExpiresAt: t0.Add(time.Hour)}))
	require.NoError(t, st.CreateInvitation(ctx, store.Invitation{TokenHash: "i1", Kind: store.InvitationInvite,
		CreatedBy: "admin", ExpiresAt: t0.Add(time.Hour)}))

	err := st.AcceptInvite(ctx, "r1", store.Account{ID: "x", Email: "x@example.org", Name: "X"}, t0)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "a reset link creates no account")
	_, err = st.AcceptReset(ctx, "i1", "h", t0)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "an invitation resets no password")

	a, err := st.AcceptReset(ctx, "r1", "new-hash", t0)
	require.NoError(t, err)
	require.Equal(t, "ada", a.ID)
	require.Equal(t, "new-hash", a.PasswordHash)
	stored, err := st.Account(ctx, "ada")
	require.NoError(t, err)
	require.Equal(t, "new-hash", stored.PasswordHash)
	_, err = st.SessionAccount(ctx, "s1", t0)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err), "the reset signed out everywhere")
	_, err = st.AcceptReset(ctx, "r1", "again", t0)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "used")
	_, err = st.Invitation(ctx, "r1", t0)
	require.Contains(t, fault.ErrorMessage(err), "already used")

	// Expired, and for a disabled account.
	require.NoError(t, st.CreateInvitation(ctx, store.Invitation{TokenHash: "r2", Kind: store.InvitationReset, AccountID: "ada",
		CreatedBy: "admin", ExpiresAt: t0.Add(time.Hour)}))
	_, err = st.AcceptReset(ctx, "r2", "h", t0.Add(2*time.Hour))
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorMessage(err), "expired")
	require.NoError(t, st.SetAccountDisabled(ctx, "ada", true))
	_, err = st.AcceptReset(ctx, "r2", "h", t0)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "a reset does not bring a disabled account back")

	require.NoError(t, st.RevokeInvitation(ctx, "r2"))
	_, err = st.Invitation(ctx, "r2", t0)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.RevokeInvitation(ctx, "r2")))
}
