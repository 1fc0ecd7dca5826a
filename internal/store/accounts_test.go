package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// openTeam opens a fresh store whose clock reads *now (tests move it).
func openTeam(t *testing.T) (*store.Store, *time.Time) {
	t.Helper()
	st := openRuns(t)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return now }
	return st, &now
}

// addAccount creates an enabled account named after its ID.
func addAccount(t *testing.T, st *store.Store, id string, admin bool) store.Account {
	t.Helper()
	a := store.Account{ID: id, Email: id + "@example.org", Name: id, PasswordHash: "hash-" + id, Admin: admin}
	require.NoError(t, st.CreateAccount(context.Background(), a))
	got, err := st.Account(context.Background(), id)
	require.NoError(t, err)
	return got
}

// TestCreateFirstAdmin: the first account is an admin whatever it asked,
// owns the first project, and that project takes the runs from before
// accounts (not the runs of another project); a second first admin is
// refused.
func TestCreateFirstAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	seedRun(t, st, "old1", *now, engine.Params{"question": "a"}, engine.StatusCompleted, 1)
	seedRun(t, st, "old2", *now, engine.Params{"question": "b"}, engine.StatusWaiting, 1)
	require.NoError(t, st.CreateRun(ctx, engine.Run{ID: "theirs", Workflow: "search", Status: engine.StatusPending, Iteration: 1,
		CreatedAt: *now, UpdatedAt: *now, Project: "elsewhere"}))
	n, err := st.AccountCount(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	a := store.Account{ID: "ada", Email: "ada@example.org", Name: "Ada", PasswordHash: "h"}
	p := store.Project{ID: "p1", Name: "Sleep", CreatedBy: "ada"}
	require.NoError(t, st.CreateFirstAdmin(ctx, a, p))

	got, err := st.Account(ctx, "ada")
	require.NoError(t, err)
	require.True(t, got.Admin, "the first account is an admin")
	require.Equal(t, *now, got.CreatedAt)
	role, err := st.Role(ctx, "p1", "ada")
	require.NoError(t, err)
	require.Equal(t, store.RoleOwner, role)
	for id, want := range map[string]string{"old1": "p1", "old2": "p1", "theirs": "elsewhere"} {
		project, err := st.RunProject(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, project, id)
	}

	err = st.CreateFirstAdmin(ctx, store.Account{ID: "bob", Email: "bob@example.org", Name: "Bob"}, store.Project{ID: "p2", Name: "Other"})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	n, err = st.AccountCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = st.Project(ctx, "p2")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "the refused call left nothing behind")
}

// TestCreateFirstAdminRace: two first visits at once get one admin.
func TestCreateFirstAdminRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := openTeam(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, id := range []string{"ada", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.CreateFirstAdmin(ctx, store.Account{ID: id, Email: id + "@example.org", Name: id},
				store.Project{ID: "p-" + id, Name: id + "'s"})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
		}
	}
	require.Equal(t, 1, won)
	accounts, err := st.Accounts(ctx)
	require.NoError(t, err)
	require.Len(t, accounts, 1)
	projects, err := st.Projects(ctx)
	require.NoError(t, err)
	require.Len(t, projects, 1)
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "z", Email: "zoe@example.org", Name: "zoe", OIDCIssuer: "https://idp", OIDCSubject: "s-1"}))
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "a", Email: "ada@example.org", Name: "Ada", PasswordHash: "h"}))
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "m", Email: "max@example.org", Name: "Max", Disabled: true}))

	a, err := st.Account(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, store.Account{ID: "a", Email: "ada@example.org", Name: "Ada", PasswordHash: "h", CreatedAt: *now}, a)
	byEmail, err := st.AccountByEmail(ctx, "ada@example.org")
	require.NoError(t, err)
	require.Equal(t, a, byEmail)
	_, err = st.AccountByEmail(ctx, "ADA@example.org")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "emails are compared as given")
	z, err := st.AccountByOIDC(ctx, "https://idp", "s-1")
	require.NoError(t, err)
	require.Equal(t, "z", z.ID)
	_, err = st.AccountByOIDC(ctx, "https://other-idp", "s-1")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	_, err = st.AccountByOIDC(ctx, "", "")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "no identity matches the empty one")
	_, err = st.Account(ctx, "nobody")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	m, err := st.Account(ctx, "m")
	require.NoError(t, err)
	require.True(t, m.Disabled)

	all, err := st.Accounts(ctx)
	require.NoError(t, err)
	var names []string
	for _, a := range all {
		names = append(names, a.Name)
	}
	require.Equal(t, []string{"Ada", "Max", "zoe"}, names, "by name, ignoring case")

	err = st.CreateAccount(ctx, store.Account{ID: "a2", Email: "ada@example.org", Name: "Ada again"})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	require.Contains(t, fe.Fields, "email")
	err = st.CreateAccount(ctx, store.Account{ID: "z2", Email: "z2@example.org", Name: "Zed", OIDCIssuer: "https://idp", OIDCSubject: "s-1"})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "one account per single-sign-on identity: %v", err)
	err = st.CreateAccount(ctx, store.Account{ID: "a", Email: "other@example.org", Name: "Other"})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	err = st.CreateAccount(ctx, store.Account{ID: "e", Name: "No email"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
	// Two accounts without single sign-on do not clash on the empty identity.
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "b", Email: "bob@example.org", Name: "Bob"}))
}

// TestSetPasswordSignsOutEverywhere: a new password ends every session.
func TestSetPasswordSignsOutEverywhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	addAccount(t, st, "ada", false)
	addAccount(t, st, "bob", false)
	for _, h := range []string{"s1", "s2"} {
		require.NoError(t, st.CreateSession(ctx, h, store.Session{AccountID: "ada", ExpiresAt: now.Add(time.Hour)}))
	}
	require.NoError(t, st.CreateSession(ctx, "s3", store.Session{AccountID: "bob", ExpiresAt: now.Add(time.Hour)}))

	require.NoError(t, st.SetPassword(ctx, "ada", "new-hash"))
	a, err := st.Account(ctx, "ada")
	require.NoError(t, err)
	require.Equal(t, "new-hash", a.PasswordHash)
	for _, h := range []string{"s1", "s2"} {
		_, err := st.SessionAccount(ctx, h, *now)
		require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err), h)
	}
	_, err = st.SessionAccount(ctx, "s3", *now)
	require.NoError(t, err, "another account's session lives on")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.SetPassword(ctx, "nobody", "h")))
}

// TestSetAccountDisabled: disabling ends the account's sessions and
// revokes its tokens, for good; the last enabled admin cannot be
// disabled.
func TestSetAccountDisabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openTeam(t)
	addAccount(t, st, "ada", true)
	addAccount(t, st, "bob", false)
	require.NoError(t, st.CreateSession(ctx, "bob-session", store.Session{AccountID: "bob", ExpiresAt: now.Add(time.Hour)}))
	require.NoError(t, st.CreateAPIToken(ctx, store.APIToken{ID: "t1", AccountID: "bob", Name: "ci", Prefix: "qt_ab"}, "bob-token"))

	err := st.SetAccountDisabled(ctx, "ada", true)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "the last admin: %v", err)
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.SetAccountDisabled(ctx, "nobody", true)))

	require.NoError(t, st.SetAccountDisabled(ctx, "bob", true))
	bob, err := st.Account(ctx, "bob")
	require.NoError(t, err)
	require.True(t, bob.Disabled)
	_, err = st.SessionAccount(ctx, "bob-session", *now)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))
	sessions, err := st.Sessions(ctx, "bob")
	require.NoError(t, err)
	require.Empty(t, sessions, "disabling deleted the sessions")
	_, err = st.APITokenAccount(ctx, "bob-token", *now)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err))
	require.NoError(t, st.SetAccountDisabled(ctx, "bob", true), "disabling twice is no error")

	require.NoError(t, st.SetAccountDisabled(ctx, "bob", false))
	bob, err = st.Account(ctx, "bob")
	require.NoError(t, err)
	require.False(t, bob.Disabled)
	_, err = st.APITokenAccount(ctx, "bob-token", *now)
	require.Equal(t, fault.EUnauthenticated, fault.ErrorCode(err), "re-enabling brings no token back")
	tokens, err := st.APITokens(ctx, "bob")
	require.NoError(t, err)
	require.Equal(t, *now, tokens[0].RevokedAt)

	// With a second enabled admin, the first may be disabled.
	require.NoError(t, st.SetAdmin(ctx, "bob", true))
	require.NoError(t, st.SetAccountDisabled(ctx, "ada", true))
	err = st.SetAccountDisabled(ctx, "bob", true)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "a disabled admin does not count: %v", err)
}

// TestSetAdmin: the last enabled admin keeps the administration.
func TestSetAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := openTeam(t)
	addAccount(t, st, "ada", true)
	addAccount(t, st, "bob", false)
	addAccount(t, st, "cy", true)

	require.NoError(t, st.SetAccountDisabled(ctx, "cy", true))
	err := st.SetAdmin(ctx, "ada", false)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "cy is disabled, so ada is the last: %v", err)
	require.NoError(t, st.SetAdmin(ctx, "cy", false), "a disabled admin may lose the administration")

	require.NoError(t, st.SetAdmin(ctx, "bob", true))
	require.NoError(t, st.SetAdmin(ctx, "ada", false))
	ada, err := st.Account(ctx, "ada")
	require.NoError(t, err)
	require.False(t, ada.Admin)
	err = st.SetAdmin(ctx, "bob", false)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	require.NoError(t, st.SetAdmin(ctx, "bob", true), "granting twice is no error")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(st.SetAdmin(ctx, "nobody", true)))
}

// TestSetOIDC: linking an identity makes AccountByOIDC find the account;
// an identity linked elsewhere, half an identity and an unknown account
// are refused; relinking and unlinking work.
func TestSetOIDC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := openTeam(t)
	addAccount(t, st, "ada", false)
	addAccount(t, st, "bob", false)

	require.NoError(t, st.SetOIDC(ctx, "ada", "https://idp", "s-1"))
	got, err := st.AccountByOIDC(ctx, "https://idp", "s-1")
	require.NoError(t, err)
	require.Equal(t, "ada", got.ID)
	require.Equal(t, "hash-ada", got.PasswordHash, "linking keeps the password")

	err = st.SetOIDC(ctx, "bob", "https://idp", "s-1")
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	require.NoError(t, st.SetOIDC(ctx, "bob", "https://other-idp", "s-1"), "the same subject of another issuer is another identity")
	require.NoError(t, st.SetOIDC(ctx, "ada", "https://idp", "s-1"), "relinking one's own identity is no conflict")

	err = st.SetOIDC(ctx, "ada", "https://idp", "")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
	err = st.SetOIDC(ctx, "nobody", "https://idp", "s-2")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "%v", err)

	require.NoError(t, st.SetOIDC(ctx, "ada", "", ""))
	_, err = st.AccountByOIDC(ctx, "https://idp", "s-1")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err), "unlinked")
	require.NoError(t, st.SetOIDC(ctx, "bob", "https://idp", "s-1"), "a freed identity may be linked again")
}
