package handlers_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// send posts form (with a fresh CSRF token of c's session) without
// following a redirect, and parses the answer.
func (tm *team) send(t *testing.T, c *http.Client, path string, form url.Values) (*http.Response, *goquery.Document) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", tm.token(t, c))
	res, err := c.PostForm(tm.w.srv.URL+path, form)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// fetch GETs path as c without following a redirect.
func (tm *team) fetch(t *testing.T, c *http.Client, path string) (*http.Response, *goquery.Document) {
	t.Helper()
	return tm.w.get(t, c, path)
}

// roleIn is the account's role in the project ("" for none).
func (tm *team) roleIn(t *testing.T, project, account string) string {
	t.Helper()
	role, err := tm.st.Role(context.Background(), project, account)
	require.NoError(t, err)
	return role
}

// newLink is the link a page shows once after creating it.
func newLink(t *testing.T, doc *goquery.Document) string {
	t.Helper()
	link := doc.Find(`[data-testid="new-link"] code`).Text()
	require.NotEmpty(t, link, "the page shows the new link")
	return link
}

// TestProjectMembers: a signed-in person creates a project and owns it;
// its owner adds an existing account, changes its role and removes it,
// every change audited; the last owner can be neither demoted nor removed
// (409 with the reason).
func TestProjectMembers(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	c := tm.clients["viewer"]
	res, doc := tm.send(t, c, "/projects", url.Values{"name": {""}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-testid="field-error"][data-field="name"]`).Length())
	res, _ = tm.send(t, c, "/projects", url.Values{"name": {strings.Repeat("é", 121)}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)

	res, _ = tm.send(t, c, "/projects", url.Values{"name": {"Viewer's own review"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	page := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(page, "/projects/"), page)
	project := strings.TrimPrefix(page, "/projects/")
	require.Equal(t, "owner", tm.roleIn(t, project, "viewer"), "the creator owns it")
	_, doc = tm.fetch(t, c, "/projects")
	require.Equal(t, "owner", strings.TrimSpace(doc.Find(`[data-project-id="`+project+`"] [data-testid="project-role"]`).Text()))
	require.Equal(t, "viewer", strings.TrimSpace(doc.Find(`[data-project-id="pa"] [data-testid="project-role"]`).Text()))
	require.Zero(t, doc.Find(`[data-project-id="pb"]`).Length(), "not another team's project")
	_, doc = tm.fetch(t, tm.clients["admin"], "/projects")
	require.Equal(t, 1, doc.Find(`[data-project-id="pb"]`).Length(), "an administrator sees every project")

	res, doc = tm.send(t, c, page+"/members", url.Values{"email": {"nobody@example.org"}, "role": {"boss"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-field="email"]`).Length(), "no such account")
	require.Equal(t, 1, doc.Find(`[data-field="role"]`).Length(), "no such role")
	require.Equal(t, "nobody@example.org", doc.Find(`#member_email`).AttrOr("value", ""), "values kept")

	res, _ = tm.send(t, c, page+"/members", url.Values{"email": {"Reviewer@Example.org"}, "role": {"viewer"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "viewer", tm.roleIn(t, project, "reviewer"))
	_, doc = tm.fetch(t, tm.clients["reviewer"], page)
	require.Equal(t, "viewer", doc.Find(`[data-testid="my-role"]`).Text())
	require.Zero(t, doc.Find(`[data-testid="add-member-form"]`).Length(), "a viewer does not manage")
	res, _ = tm.send(t, tm.clients["reviewer"], page+"/members/viewer/remove", nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res, _ = tm.send(t, tm.clients["outsider"], page+"/members/viewer/remove", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode)

	res, _ = tm.send(t, c, page+"/members/reviewer/role", url.Values{"role": {"owner"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "owner", tm.roleIn(t, project, "reviewer"))
	res, _ = tm.send(t, c, page+"/members/reviewer/remove", nil)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Empty(t, tm.roleIn(t, project, "reviewer"))

	// The last owner stays.
	res, doc = tm.send(t, c, page+"/members/viewer/role", url.Values{"role": {"reviewer"}})
	require.Equal(t, http.StatusConflict, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="notice"]`).Text(), "last owner")
	res, doc = tm.send(t, c, page+"/members/viewer/remove", nil)
	require.Equal(t, http.StatusConflict, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="notice"]`).Text(), "last owner")
	require.Equal(t, "owner", tm.roleIn(t, project, "viewer"))

	log, err := tm.st.AuditLog(context.Background(), store.AuditFilter{ProjectID: project, Limit: 100})
	require.NoError(t, err)
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action+" "+e.Target+" "+e.Detail)
	}
	require.Equal(t, []string{"member-remove reviewer owner", "member-role reviewer viewer→owner", "member-add reviewer viewer",
		"project-create " + project + " Viewer's own review"}, actions)
}

// TestInvitationSignUp: an owner's invitation link creates an account that
// joins the project with the invitation's role and can open its runs;
// fields are checked all at once, a link works once, an expired or
// unknown one is refused, and a signed-in person is not switched.
func TestInvitationSignUp(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	res, _ := tm.send(t, tm.clients["reviewer"], "/projects/pa/invitations", url.Values{"role": {"reviewer"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, "only owners invite")
	res, doc := tm.send(t, tm.clients["owner"], "/projects/pa/invitations", url.Values{"role": {"reviewer"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	link := newLink(t, doc)
	require.True(t, strings.HasPrefix(link, "/invite/qi_"), link)
	key := doc.Find(`[data-testid="invitation"]`).AttrOr("data-invitation", "")
	require.Len(t, key, 16)

	// Signed in: told to sign out, not switched.
	res, doc = tm.fetch(t, tm.clients["viewer"], link)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="invite-signed-in"]`).Text(), "Viewer")
	res, _ = tm.send(t, tm.clients["viewer"], link, url.Values{"email": {"new@example.org"}, "name": {"New"}, "password": {teamPassword}})
	require.Equal(t, http.StatusConflict, res.StatusCode)

	c := noRedirectClient(t)
	res, doc = tm.fetch(t, c, link)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "Project A", doc.Find(`[data-testid="invite-project"]`).Text())
	res, doc = tm.send(t, c, link, url.Values{"email": {"not an address"}, "name": {"Nia"}, "password": {"short"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	for _, f := range []string{"email", "password"} {
		require.Equal(t, 1, doc.Find(`[data-testid="field-error"][data-field="`+f+`"]`).Length(), f)
	}
	require.Equal(t, "Nia", doc.Find(`#name`).AttrOr("value", ""), "values kept")
	res, doc = tm.send(t, c, link, url.Values{"email": {"owner@example.org"}, "name": {"Nia"}, "password": {teamPassword}})
	require.Equal(t, http.StatusConflict, res.StatusCode, "an e-mail with an account")
	require.Equal(t, 1, doc.Find(`[data-field="email"]`).Length())

	res, _ = tm.send(t, c, link, url.Values{"email": {"Nia@example.org"}, "name": {"Nia"}, "password": {teamPassword}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/projects/pa", res.Header.Get("Location"))
	acct, err := tm.st.AccountByEmail(context.Background(), "nia@example.org")
	require.NoError(t, err)
	require.Equal(t, "reviewer", tm.roleIn(t, "pa", acct.ID))
	res, _ = tm.fetch(t, c, "/runs/"+tm.runID)
	require.Equal(t, http.StatusOK, res.StatusCode, "the new member opens the project's run")

	// Once only.
	again := noRedirectClient(t)
	res, doc = tm.fetch(t, again, link)
	require.Equal(t, http.StatusGone, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="invite-problem"]`).Text(), "already used")
	res, _ = tm.send(t, again, link, url.Values{"email": {"second@example.org"}, "name": {"Second"}, "password": {teamPassword}})
	require.Equal(t, http.StatusGone, res.StatusCode)
	_, err = tm.st.AccountByEmail(context.Background(), "second@example.org")
	require.Error(t, err)

	// Expired, unknown.
	token, err := access.NewToken("qi_")
	require.NoError(t, err)
	require.NoError(t, tm.st.CreateInvitation(context.Background(), store.Invitation{TokenHash: access.HashToken(token), Kind: store.InvitationInvite,
		ProjectID: "pa", Role: "viewer", CreatedAt: time.Now().Add(-8 * 24 * time.Hour), ExpiresAt: time.Now().Add(-time.Hour)}))
	res, doc = tm.fetch(t, again, "/invite/"+token)
	require.Equal(t, http.StatusGone, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="invite-problem"]`).Text(), "expired")
	res, doc = tm.fetch(t, again, "/invite/qi_nope")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="invite-problem"]`).Text(), "unknown")

	// A pending invitation is revoked by its key, in its own project only.
	_, doc = tm.send(t, tm.clients["owner"], "/projects/pa/invitations", url.Values{"role": {"viewer"}, "email": {"pat@example.org"}})
	link = newLink(t, doc)
	key = doc.Find(`[data-testid="invitation"]`).First().AttrOr("data-invitation", "")
	_, doc = tm.fetch(t, noRedirectClient(t), link)
	require.Equal(t, "pat@example.org", doc.Find(`#email`).AttrOr("value", ""))
	require.True(t, doc.Find(`#email`).Is("[readonly]"), "the invitation's e-mail is locked")
	res, _ = tm.send(t, tm.clients["outsider"], "/projects/pb/invitations/"+key+"/revoke", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "not project B's invitation")
	res, _ = tm.send(t, tm.clients["owner"], "/projects/pa/invitations/"+key+"/revoke", nil)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, _ = tm.fetch(t, noRedirectClient(t), link)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "revoked")
}

// TestPasswordReset: an administrator's reset link sets a new password,
// which then signs in while the old one does not, and ends the account's
// other sessions.
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	res, _ := tm.send(t, tm.clients["owner"], "/admin/accounts/viewer/reset", nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res, doc := tm.send(t, tm.clients["admin"], "/admin/accounts/viewer/reset", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	link := newLink(t, doc)
	require.True(t, strings.HasPrefix(link, "/reset/qr_"), link)
	res, _ = tm.fetch(t, noRedirectClient(t), strings.Replace(link, "/reset/", "/invite/", 1))
	require.Equal(t, http.StatusNotFound, res.StatusCode, "a reset link is no invitation")

	c := noRedirectClient(t)
	res, _ = tm.fetch(t, c, link)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, doc = tm.send(t, c, link, url.Values{"password": {"short"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-field="password"]`).Length())
	const newPassword = "a much better passphrase"
	res, _ = tm.send(t, c, link, url.Values{"password": {newPassword}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/", res.Header.Get("Location"))
	res, _ = tm.fetch(t, c, "/account")
	require.Equal(t, http.StatusOK, res.StatusCode, "signed in with the new password")

	res, _ = tm.fetch(t, tm.clients["viewer"], "/account")
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "the other session ended")
	require.Equal(t, http.StatusUnauthorized, tm.login(t, noRedirectClient(t), "viewer@example.org", teamPassword).StatusCode)
	require.Equal(t, http.StatusSeeOther, tm.login(t, noRedirectClient(t), "viewer@example.org", newPassword).StatusCode)
	res, _ = tm.fetch(t, noRedirectClient(t), link)
	require.Equal(t, http.StatusGone, res.StatusCode, "used")

	// A pending reset link is listed and can be revoked.
	_, doc = tm.send(t, tm.clients["admin"], "/admin/accounts/owner/reset", nil)
	link = newLink(t, doc)
	row := doc.Find(`[data-testid="pending-link"]`)
	require.Equal(t, 1, row.Length())
	require.Contains(t, row.Text(), "owner@example.org")
	res, _ = tm.send(t, tm.clients["admin"], "/admin/invitations/"+row.AttrOr("data-invitation", "")+"/revoke", nil)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, _ = tm.fetch(t, noRedirectClient(t), link)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "revoked")
}

// TestDisableAccount: disabling an account ends its sessions and its API
// tokens; the last administrator cannot be disabled nor lose the role.
func TestDisableAccount(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	_, doc := tm.send(t, tm.clients["reviewer"], "/account/tokens", url.Values{"name": {"script"}})
	token := doc.Find(`[data-testid="new-token"] code`).Text()
	require.NotEmpty(t, token)
	api := func() int {
		req, err := http.NewRequest(http.MethodGet, tm.w.srv.URL+"/api/runs/"+tm.runID, nil)
		require.NoError(t, err)
		req.Header.Set(echo.HeaderAuthorization, "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusOK, api())

	res, doc := tm.fetch(t, tm.clients["admin"], "/admin/accounts")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 5, doc.Find(`[data-testid="account"]`).Length())
	res, _ = tm.send(t, tm.clients["admin"], "/admin/accounts/reviewer/disable", nil)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, _ = tm.fetch(t, tm.clients["reviewer"], "/account")
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "signed out")
	require.Equal(t, http.StatusUnauthorized, api(), "its token stopped working")
	require.Equal(t, http.StatusUnauthorized, tm.login(t, noRedirectClient(t), "reviewer@example.org", teamPassword).StatusCode)
	_, doc = tm.fetch(t, tm.clients["admin"], "/admin/accounts")
	require.Equal(t, "yes", doc.Find(`[data-account-id="reviewer"] [data-testid="account-disabled"]`).Text())
	res, _ = tm.send(t, tm.clients["admin"], "/admin/accounts/reviewer/enable", nil)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, http.StatusSeeOther, tm.login(t, noRedirectClient(t), "reviewer@example.org", teamPassword).StatusCode)

	res, doc = tm.send(t, tm.clients["admin"], "/admin/accounts/admin/disable", nil)
	require.Equal(t, http.StatusConflict, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="notice"]`).Text(), "last administrator")
	res, _ = tm.send(t, tm.clients["admin"], "/admin/accounts/admin/admin", url.Values{"admin": {"false"}})
	require.Equal(t, http.StatusConflict, res.StatusCode)
	res, _ = tm.send(t, tm.clients["admin"], "/admin/accounts/owner/admin", url.Values{"admin": {"maybe"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	res, _ = tm.send(t, tm.clients["admin"], "/admin/accounts/owner/admin", url.Values{"admin": {"true"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, _ = tm.fetch(t, tm.clients["owner"], "/admin/accounts")
	require.Equal(t, http.StatusOK, res.StatusCode, "the new administrator")
	_, doc = tm.fetch(t, tm.clients["owner"], "/account")
	require.Equal(t, 1, doc.Find(`[data-testid="nav-admin"]`).Length())

	// An installation-wide invitation can make an administrator.
	res, doc = tm.send(t, tm.clients["admin"], "/admin/invitations", url.Values{"admin": {"true"}, "project": {"pb"}, "role": {"viewer"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	link := newLink(t, doc)
	c := noRedirectClient(t)
	res, _ = tm.send(t, c, link, url.Values{"email": {"ada@example.org"}, "name": {"Ada"}, "password": {teamPassword}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	acct, err := tm.st.AccountByEmail(context.Background(), "ada@example.org")
	require.NoError(t, err)
	require.True(t, acct.Admin)
	require.Equal(t, "viewer", tm.roleIn(t, "pb", acct.ID))
}

// reviewRun starts a run of project A that waits at its review and returns
// it with the IDs of the papers under review.
func (tm *team) reviewRun(t *testing.T) (string, []string) {
	t.Helper()
	run, err := tm.w.app.Engine().StartAs(context.Background(), engine.Starter{Project: "pa", By: "Owner"}, "search", map[string]any{"question": "sleep and memory consolidation",
		"max_iterations": 2, "strategy_checkpoint": false, "sources": testapp.Sources})
	require.NoError(t, err)
	var papers []string
	require.Eventually(t, func() bool {
		r, err := tm.st.Run(context.Background(), run.ID)
		return err == nil && r.Status == engine.StatusWaiting
	}, 10*time.Second, 20*time.Millisecond)
	_, doc := tm.fetch(t, tm.clients["admin"], "/runs/"+run.ID)
	doc.Find(`[data-testid="paper"]`).Each(func(_ int, s *goquery.Selection) { papers = append(papers, s.AttrOr("data-paper-id", "")) })
	require.NotEmpty(t, papers)
	return run.ID, papers
}

// mark PUTs a mark as c (a browser's session, not a token) and returns the status.
func (tm *team) mark(t *testing.T, c *http.Client, runID, paper string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, tm.w.srv.URL+markPath(runID, paper), strings.NewReader(`{"mark":"relevant"}`))
	require.NoError(t, err)
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	res, err := c.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// TestShareLinks: a view link's guest reads the run but may not decide;
// revoking the link ends it (the link answers 404, the guest is signed in
// as no one). A decide link's guest gives a name and marks papers.
func TestShareLinks(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	runID, papers := tm.reviewRun(t)
	res, doc := tm.send(t, tm.clients["owner"], "/projects/pa/links", url.Values{"capability": {"view"}, "run": {"no-such-run"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-field="run"]`).Length())
	res, doc = tm.send(t, tm.clients["owner"], "/projects/pa/links", url.Values{"capability": {"view"}, "run": {runID}, "guest_name": {"Vic"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	view := newLink(t, doc)
	require.True(t, strings.HasPrefix(view, "/s/ql_"), view)
	linkID := doc.Find(`[data-testid="link"]`).AttrOr("data-link-id", "")

	guest := noRedirectClient(t)
	res, _ = tm.fetch(t, guest, view)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/runs/"+runID, res.Header.Get("Location"))
	res, _ = tm.fetch(t, guest, "/runs/"+runID)
	require.Equal(t, http.StatusOK, res.StatusCode, "the guest reads the run")
	require.Equal(t, http.StatusForbidden, tm.mark(t, guest, runID, papers[0]), "a view link does not decide")
	res, _ = tm.fetch(t, guest, "/runs/"+tm.runID)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "another run of the project is not shared")
	res, _ = tm.fetch(t, guest, "/runs")
	require.Equal(t, "/runs/"+runID, res.Header.Get("Location"), "nor the project's run list")
	res, _ = tm.fetch(t, guest, "/projects/pa")
	require.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, res.StatusCode, "nor the project's members")
	res, _ = tm.fetch(t, guest, "/account")
	require.Equal(t, http.StatusForbidden, res.StatusCode)

	res, _ = tm.send(t, tm.clients["owner"], "/projects/pa/links/"+linkID+"/revoke", nil)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, doc = tm.fetch(t, noRedirectClient(t), view)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="error-message"]`).Text(), "revoked")
	res, _ = tm.fetch(t, guest, "/runs/"+runID)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "the guest who opened it is out too")
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/login"))

	// A signed-in member following a link keeps their account.
	_, doc = tm.send(t, tm.clients["owner"], "/projects/pa/links", url.Values{"capability": {"decide"}})
	decide := newLink(t, doc)
	res, _ = tm.fetch(t, tm.clients["viewer"], decide)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, http.StatusForbidden, tm.mark(t, tm.clients["viewer"], runID, papers[0]), "still a viewer")

	guest = noRedirectClient(t)
	res, _ = tm.fetch(t, guest, decide)
	require.Equal(t, "/runs", res.Header.Get("Location"), "a project-wide link opens the run list")
	res, _ = tm.fetch(t, guest, "/runs/"+runID)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/name"), "a guest without a name gives one first")
	res, _ = tm.send(t, guest, "/name", url.Values{"name": {"Gail"}, "next": {"/runs/" + runID}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, doc = tm.fetch(t, guest, "/runs")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-run-id="`+runID+`"]`).Length(), "the run list shows the project's runs")
	require.Equal(t, http.StatusOK, tm.mark(t, guest, runID, papers[0]))
	marks, err := tm.st.Marks(context.Background(), runID)
	require.NoError(t, err)
	require.Len(t, marks, 1)
	for _, m := range marks {
		require.Equal(t, "Gail (guest)", m.By, "a guest's name is marked as a guest's: it cannot pass for a member's")
	}
}

// TestAuditCSV: the audit log records sign-ins, member changes and run
// starts; a project's owner downloads its log, a reviewer may not, and the
// download itself is recorded.
func TestAuditCSV(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	res, _ := tm.send(t, tm.clients["owner"], "/projects/pa/members/viewer/role", url.Values{"role": {"reviewer"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, _ = tm.send(t, tm.clients["owner"], "/runs", url.Values{"question": {"naps and memory"}, "sources": testapp.Sources, "project": {"pa"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)

	rows := func(c *http.Client, path string) [][]string {
		res, err := c.Get(tm.w.srv.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		require.Contains(t, res.Header.Get(echo.HeaderContentType), "text/csv")
		all, err := csv.NewReader(res.Body).ReadAll()
		require.NoError(t, err)
		require.Equal(t, []string{"seq", "at", "actor", "actor_id", "action", "target", "address", "detail"}, all[0])
		return all[1:]
	}
	has := func(rows [][]string, action, actor, detail string) bool {
		for _, r := range rows {
			_, err := time.Parse(time.RFC3339, r[1])
			require.NoError(t, err)
			if r[4] == action && r[3] == actor && (detail == "" || r[7] == detail) {
				return true
			}
		}
		return false
	}
	project := rows(tm.clients["owner"], "/projects/pa/audit.csv")
	require.True(t, has(project, "member-role", "owner", "viewer→reviewer"), "%v", project)
	require.True(t, has(project, "run-start", "owner", ""), "%v", project)
	require.False(t, has(project, "sign-in", "owner", ""), "sign-ins are the installation's, not the project's")

	all := rows(tm.clients["admin"], "/admin/audit.csv")
	require.True(t, has(all, "sign-in", "owner", ""))
	require.True(t, has(all, "member-role", "owner", "viewer→reviewer"))
	require.True(t, has(all, "run-start", "owner", ""))
	require.True(t, has(all, "project-audit-export", "owner", ""), "the export is audited")

	res, _ = tm.fetch(t, tm.clients["reviewer"], "/projects/pa/audit.csv")
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res, doc := tm.fetch(t, tm.clients["owner"], "/projects/pa/audit")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.GreaterOrEqual(t, doc.Find(`[data-testid="audit-entry"]`).Length(), 2)
	require.Equal(t, "project-audit-export", doc.Find(`[data-testid="audit-entry"]`).First().AttrOr("data-action", ""), "newest first")
}

// TestStartFormProjects: a member of two projects where they may start
// runs chooses the project on the start form, and the run lands there;
// with one project the form carries it hidden.
func TestStartFormProjects(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	_, doc := tm.fetch(t, tm.clients["owner"], "/")
	require.Zero(t, doc.Find(`[data-testid="project-select"]`).Length())
	require.Equal(t, "pa", doc.Find(`[data-testid="project-hidden"]`).AttrOr("value", ""))

	require.NoError(t, tm.st.SetMember(context.Background(), "pb", "reviewer", "reviewer"))
	c := tm.clients["reviewer"]
	_, doc = tm.fetch(t, c, "/")
	sel := doc.Find(`select[name="project"]`)
	require.Equal(t, 1, sel.Length())
	require.Equal(t, []string{"pa", "pb"}, sel.Find("option").Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") }))
	require.Equal(t, "Project", strings.TrimSpace(doc.Find(`label[for="project"]`).Text()))
	_, doc = tm.fetch(t, c, "/workflows")
	forms := doc.Find(`form[data-testid="start-workflow"]`)
	require.Positive(t, forms.Length())
	forms.Each(func(_ int, f *goquery.Selection) {
		require.Equal(t, 2, f.Find(`select[name="project"] option`).Length(), "every workflow's start form offers both projects")
	})

	res, doc := tm.send(t, c, "/runs", url.Values{"question": {"no"}, "sources": testapp.Sources, "project": {"pb"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, "pb", doc.Find(`select[name="project"] option[selected]`).AttrOr("value", ""), "the choice is kept")
	res, _ = tm.send(t, c, "/runs", url.Values{"question": {"naps and memory"}, "sources": testapp.Sources, "project": {"pb"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	runID := strings.TrimPrefix(res.Header.Get("Location"), "/runs/")
	project, err := tm.st.RunProject(context.Background(), runID)
	require.NoError(t, err)
	require.Equal(t, "pb", project)
	res, _ = tm.fetch(t, tm.clients["owner"], "/runs/"+runID)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "project A's owner does not see project B's run")
}

// TestOpenModeHasNoTeams: open mode lists no projects and refuses to
// create accounts, invitations or links, which would outlive it.
func TestOpenModeHasNoTeams(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	res, doc := w.get(t, w.client, "/projects")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-testid="open-mode"]`).Length())
	_, home := w.get(t, w.client, "/")
	require.Zero(t, home.Find(`[name="project"]`).Length(), "no project field")
	for _, path := range []string{"/admin/invitations", "/projects", "/projects/default/links"} {
		res, _ := w.post(t, w.client, path, url.Values{"_csrf": {csrf(home)}, "admin": {"true"}, "name": {"x"}, "capability": {"view"}})
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
}
