package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// How long links work: an invitation is sent and read at leisure; a reset
// link replaces a password, so it lives a day.
const (
	invitationTTL = 7 * 24 * time.Hour
	resetTTL      = 24 * time.Hour
)

// invitationKey names an invitation in a URL: the start of its token's
// hash, which says nothing about the token and is unique within a
// project's few pending invitations.
func invitationKey(tokenHash string) string {
	if len(tokenHash) > 16 {
		return tokenHash[:16]
	}
	return tokenHash
}

// mintInvitation stores inv under a new token and returns the token.
func (a *authenticator) mintInvitation(c echo.Context, inv store.Invitation, ttl time.Duration) (string, error) {
	prefix := "qi_"
	if inv.Kind == store.InvitationReset {
		prefix = "qr_"
	}
	token, err := access.NewToken(prefix)
	if err != nil {
		return "", err
	}
	now := a.now().UTC()
	inv.TokenHash, inv.CreatedAt, inv.ExpiresAt = access.HashToken(token), now, now.Add(ttl)
	if id := identityOf(c); id.account != nil {
		inv.CreatedBy = id.account.ID
	}
	if err := a.accounts.CreateInvitation(c.Request().Context(), inv); err != nil {
		return "", err
	}
	return token, nil
}

// CreateInvitation handles POST /projects/:project/invitations: a link
// that creates an account into the project with a role, shown once.
func (h *Teams) CreateInvitation(c echo.Context) error {
	project := projectOf(c)
	fe := fault.FieldErrors{}
	role, err := access.ParseRole(c.FormValue("role"))
	if err != nil {
		fe.Add("invite_role", fault.ErrorFields(err)["role"])
	}
	email := strings.TrimSpace(c.FormValue("email"))
	if email != "" {
		if email, err = access.NormalizeEmail(email); err != nil {
			fe.Add("invite_email", fault.ErrorMessage(err))
		}
	}
	if len(fe) > 0 {
		return h.renderProject(c, http.StatusUnprocessableEntity, views.ProjectData{Errors: fe})
	}
	token, err := h.a.mintInvitation(c, store.Invitation{Kind: store.InvitationInvite, ProjectID: project, Role: string(role), Email: email}, invitationTTL)
	if err != nil {
		return h.refused(c, err, views.ProjectData{})
	}
	h.a.audit(c, "invitation-create", project, invitationKey(access.HashToken(token)), strings.TrimSpace(email+" "+string(role)))
	return h.renderProject(c, http.StatusOK, views.ProjectData{NewLink: "/invite/" + token, NewLinkKind: "invitation"})
}

// RevokeInvitation handles POST /projects/:project/invitations/:invitation/revoke:
// only a pending invitation of this project can be named.
func (h *Teams) RevokeInvitation(c echo.Context) error {
	ctx := c.Request().Context()
	project, key := projectOf(c), c.Param("invitation")
	invs, err := h.a.accounts.Invitations(ctx, project)
	if err != nil {
		return err
	}
	for _, inv := range invs {
		if len(key) == 16 && invitationKey(inv.TokenHash) == key {
			if err := h.a.accounts.RevokeInvitation(ctx, inv.TokenHash); err != nil {
				return err
			}
			h.a.audit(c, "invitation-revoke", project, key, inv.Email)
			return c.Redirect(http.StatusSeeOther, "/projects/"+project)
		}
	}
	return fault.Errorf(fault.ENotFound, "no pending invitation %q in this project", key)
}

// invitation reads the link's invitation of kind; why it cannot be used
// is the returned problem (a page to show, not an error).
func (a *authenticator) invitation(c echo.Context, kind string) (store.Invitation, string, error) {
	inv, err := a.accounts.Invitation(c.Request().Context(), access.HashToken(c.Param("token")), a.now().UTC())
	switch {
	case (err == nil || fault.ErrorCode(err) == fault.EConflict) && inv.Kind != kind:
		return store.Invitation{}, "This link is not valid: check it was copied whole, or ask for a new one.", nil
	case err == nil:
		return inv, "", nil
	case fault.ErrorCode(err) == fault.ENotFound:
		return inv, "This link is unknown: check it was copied whole, or ask for a new one.", nil
	case fault.ErrorCode(err) == fault.EConflict:
		msg := fault.ErrorMessage(err)
		return inv, strings.ToUpper(msg[:1]) + msg[1:] + ".", nil
	}
	return inv, "", err
}

// problemStatus is the status of a link page that cannot be used.
func problemStatus(inv store.Invitation) int {
	if inv.TokenHash == "" {
		return http.StatusNotFound
	}
	return http.StatusGone
}

// ShowInvite handles GET /invite/:token: the sign-up form, or why the
// link cannot be used. A signed-in person is told to sign out first:
// accepting never switches accounts behind their back.
func (h *Teams) ShowInvite(c echo.Context) error {
	inv, problem, err := h.a.invitation(c, store.InvitationInvite)
	if err != nil {
		return err
	}
	d := views.InviteData{Page: h.a.people.page(c), Token: c.Param("token"), Problem: problem}
	if problem != "" {
		return render(c, problemStatus(inv), views.InvitePage(d))
	}
	if err := h.inviteData(c, inv, &d); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.InvitePage(d))
}

// inviteData adds the invitation's project, locked e-mail and the
// signed-in person to d.
func (h *Teams) inviteData(c echo.Context, inv store.Invitation, d *views.InviteData) error {
	if id := identityOf(c); id.account != nil {
		d.SignedInAs = id.account.Name + " (" + id.account.Email + ")"
	}
	if inv.Email != "" {
		d.Email, d.EmailLocked = inv.Email, true
	}
	if inv.ProjectID != "" {
		p, err := h.a.accounts.Project(c.Request().Context(), inv.ProjectID)
		if err != nil && fault.ErrorCode(err) != fault.ENotFound {
			return err
		}
		d.Project = p.Name
	}
	return nil
}

// AcceptInvite handles POST /invite/:token: it creates the account (every
// field error at once, values kept), signs it in and opens its project.
func (h *Teams) AcceptInvite(c echo.Context) error {
	inv, problem, err := h.a.invitation(c, store.InvitationInvite)
	if err != nil {
		return err
	}
	d := views.InviteData{Page: h.a.people.page(c), Token: c.Param("token"), Problem: problem,
		Email: strings.TrimSpace(c.FormValue("email")), Name: strings.TrimSpace(c.FormValue("name"))}
	if problem != "" {
		return render(c, problemStatus(inv), views.InvitePage(d))
	}
	if err := h.inviteData(c, inv, &d); err != nil {
		return err
	}
	if d.SignedInAs != "" {
		return render(c, http.StatusConflict, views.InvitePage(d))
	}
	fe := fault.FieldErrors{}
	email, err := access.NormalizeEmail(d.Email)
	addFieldErrors(fe, err)
	name, err := access.CheckDisplayName(d.Name)
	addFieldErrors(fe, err)
	password := c.FormValue("password")
	addFieldErrors(fe, access.CheckPassword(password))
	if len(fe) > 0 {
		d.Errors = fe
		return render(c, http.StatusUnprocessableEntity, views.InvitePage(d))
	}
	hash, err := h.a.hasher.Hash(password)
	if err != nil {
		return err
	}
	now := h.a.now().UTC()
	acct := store.Account{ID: engine.NewID(), Email: email, Name: name, PasswordHash: hash, Admin: inv.Admin, CreatedAt: now}
	if err := h.a.accounts.AcceptInvite(c.Request().Context(), inv.TokenHash, acct, now); err != nil {
		switch {
		case len(fault.ErrorFields(err)) > 0:
			d.Errors = fault.ErrorFields(err)
			return render(c, StatusForCode(fault.ErrorCode(err)), views.InvitePage(d))
		case fault.ErrorCode(err) == fault.EConflict || fault.ErrorCode(err) == fault.ENotFound:
			d.Problem = fault.ErrorMessage(err)
			return render(c, StatusForCode(fault.ErrorCode(err)), views.InvitePage(d))
		}
		return err
	}
	if err := h.a.signIn(c, acct); err != nil {
		return err
	}
	h.a.audit(c, "invitation-accept", inv.ProjectID, acct.ID, strings.TrimSpace(acct.Email+" "+inv.Role))
	if inv.ProjectID != "" {
		return c.Redirect(http.StatusSeeOther, "/projects/"+inv.ProjectID)
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

// ShowReset handles GET /reset/:token: the new-password form, or why the
// link cannot be used.
func (h *Teams) ShowReset(c echo.Context) error {
	inv, problem, err := h.a.invitation(c, store.InvitationReset)
	if err != nil {
		return err
	}
	d := views.ResetData{Page: h.a.people.page(c), Token: c.Param("token"), Problem: problem}
	if problem != "" {
		return render(c, problemStatus(inv), views.ResetPage(d))
	}
	return render(c, http.StatusOK, views.ResetPage(d))
}

// Reset handles POST /reset/:token: the new password replaces the old one
// and ends every session of the account; this browser is then signed in
// with it.
func (h *Teams) Reset(c echo.Context) error {
	inv, problem, err := h.a.invitation(c, store.InvitationReset)
	if err != nil {
		return err
	}
	d := views.ResetData{Page: h.a.people.page(c), Token: c.Param("token"), Problem: problem}
	if problem != "" {
		return render(c, problemStatus(inv), views.ResetPage(d))
	}
	password := c.FormValue("password")
	if err := access.CheckPassword(password); err != nil {
		d.Errors = fault.FieldErrors{}
		addFieldErrors(d.Errors, err)
		return render(c, http.StatusUnprocessableEntity, views.ResetPage(d))
	}
	hash, err := h.a.hasher.Hash(password)
	if err != nil {
		return err
	}
	acct, err := h.a.accounts.AcceptReset(c.Request().Context(), inv.TokenHash, hash, h.a.now().UTC())
	if err != nil {
		if code := fault.ErrorCode(err); code == fault.EConflict || code == fault.ENotFound {
			d.Problem = fault.ErrorMessage(err)
			return render(c, StatusForCode(code), views.ResetPage(d))
		}
		return err
	}
	if err := h.a.signIn(c, acct); err != nil {
		return err
	}
	h.a.audit(c, "password-reset", "", acct.ID, acct.Email)
	return c.Redirect(http.StatusSeeOther, "/")
}
