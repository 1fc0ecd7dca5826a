package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// ShowAccounts handles GET /admin/accounts: every account of the
// installation, with what an administrator may do to it.
func (h *Teams) ShowAccounts(c echo.Context) error {
	return h.renderAdmin(c, http.StatusOK, views.AdminData{})
}

func (h *Teams) renderAdmin(c echo.Context, status int, d views.AdminData) error {
	ctx := c.Request().Context()
	d.Page = h.a.people.page(c)
	accounts, err := h.a.accounts.Accounts(ctx)
	if err != nil {
		return err
	}
	for _, a := range accounts {
		d.Accounts = append(d.Accounts, views.AccountRow{ID: a.ID, Email: a.Email, Name: a.Name, Created: stamp(a.CreatedAt),
			Admin: a.Admin, Disabled: a.Disabled})
	}
	projects, err := h.a.accounts.Projects(ctx)
	if err != nil {
		return err
	}
	for _, p := range projects {
		d.Projects = append(d.Projects, views.Option{Value: p.ID, Label: p.Name})
	}
	pending, err := h.a.accounts.Invitations(ctx, "")
	if err != nil {
		return err
	}
	emails := map[string]string{}
	for _, a := range accounts {
		emails[a.ID] = a.Email
	}
	for _, inv := range pending {
		row := views.PendingRow{Key: invitationKey(inv.TokenHash), What: "invitation", For: inv.Email, Expires: stamp(inv.ExpiresAt)}
		switch {
		case inv.Kind == store.InvitationReset:
			row.What, row.For = "password reset", emails[inv.AccountID]
		case inv.Admin:
			row.What = "invitation as administrator"
		}
		if row.For == "" {
			row.For = "anyone with the link"
		}
		d.Pending = append(d.Pending, row)
	}
	return render(c, status, views.AdminAccountsPage(d))
}

// RevokeInstallationInvitation handles POST /admin/invitations/:invitation/revoke:
// an installation's pending invitation or reset link stops working.
func (h *Teams) RevokeInstallationInvitation(c echo.Context) error {
	ctx := c.Request().Context()
	key := c.Param("invitation")
	pending, err := h.a.accounts.Invitations(ctx, "")
	if err != nil {
		return err
	}
	for _, inv := range pending {
		if len(key) == 16 && invitationKey(inv.TokenHash) == key {
			if err := h.a.accounts.RevokeInvitation(ctx, inv.TokenHash); err != nil {
				return err
			}
			h.a.audit(c, "invitation-revoke", "", key, inv.Kind)
			return c.Redirect(http.StatusSeeOther, "/admin/accounts")
		}
	}
	return fault.Errorf(fault.ENotFound, "no pending link %q of the installation", key)
}

// adminRefused shows a store's refusal (the last administrator, say) on
// the administration page.
func (h *Teams) adminRefused(c echo.Context, err error) error {
	switch code := fault.ErrorCode(err); code {
	case fault.EConflict, fault.EInvalid:
		d := views.AdminData{Notice: fault.ErrorMessage(err), Errors: fault.ErrorFields(err)}
		return h.renderAdmin(c, StatusForCode(code), d)
	}
	return err
}

// Invite handles POST /admin/invitations: an invitation to the
// installation, optionally as an administrator and into a project.
func (h *Teams) Invite(c echo.Context) error {
	ctx := c.Request().Context()
	inv := store.Invitation{Kind: store.InvitationInvite, Admin: c.FormValue("admin") == "true",
		ProjectID: strings.TrimSpace(c.FormValue("project"))}
	fe := fault.FieldErrors{}
	if email := strings.TrimSpace(c.FormValue("email")); email != "" {
		e, err := access.NormalizeEmail(email)
		addFieldErrors(fe, err)
		inv.Email = e
	}
	if inv.ProjectID != "" {
		if _, err := h.a.accounts.Project(ctx, inv.ProjectID); err != nil {
			if fault.ErrorCode(err) != fault.ENotFound {
				return err
			}
			fe.Add("project", "no such project")
		}
		role, err := access.ParseRole(c.FormValue("role"))
		addFieldErrors(fe, err)
		inv.Role = string(role)
	}
	if len(fe) > 0 {
		return h.renderAdmin(c, http.StatusUnprocessableEntity, views.AdminData{Errors: fe})
	}
	token, err := h.a.mintInvitation(c, inv, invitationTTL)
	if err != nil {
		return h.adminRefused(c, err)
	}
	detail := strings.TrimSpace(inv.Email + " " + inv.Role)
	if inv.Admin {
		detail = strings.TrimSpace(detail + " administrator")
	}
	h.a.audit(c, "invitation-create", inv.ProjectID, invitationKey(access.HashToken(token)), detail)
	return h.renderAdmin(c, http.StatusOK, views.AdminData{NewLink: "/invite/" + token, NewLinkKind: "invitation"})
}

// account returns the account :account, or fault.ENotFound.
func (h *Teams) account(c echo.Context) (store.Account, error) {
	return h.a.accounts.Account(c.Request().Context(), c.Param("account"))
}

// ResetLink handles POST /admin/accounts/:account/reset: a password reset
// link for the account, shown once, working for a day.
func (h *Teams) ResetLink(c echo.Context) error {
	acct, err := h.account(c)
	if err != nil {
		return err
	}
	token, err := h.a.mintInvitation(c, store.Invitation{Kind: store.InvitationReset, AccountID: acct.ID}, resetTTL)
	if err != nil {
		return h.adminRefused(c, err)
	}
	h.a.audit(c, "password-reset-link", "", acct.ID, acct.Email)
	return h.renderAdmin(c, http.StatusOK, views.AdminData{NewLink: "/reset/" + token, NewLinkKind: "reset", NewLinkFor: acct.Email})
}

// Disable handles POST /admin/accounts/:account/disable: its sessions end
// and its API tokens are revoked; the last administrator cannot be.
func (h *Teams) Disable(c echo.Context) error { return h.setDisabled(c, true) }

// Enable handles POST /admin/accounts/:account/enable.
func (h *Teams) Enable(c echo.Context) error { return h.setDisabled(c, false) }

func (h *Teams) setDisabled(c echo.Context, disabled bool) error {
	acct, err := h.account(c)
	if err != nil {
		return err
	}
	if err := h.a.accounts.SetAccountDisabled(c.Request().Context(), acct.ID, disabled); err != nil {
		return h.adminRefused(c, err)
	}
	action := "account-enable"
	if disabled {
		action = "account-disable"
	}
	h.a.audit(c, action, "", acct.ID, acct.Email)
	return c.Redirect(http.StatusSeeOther, "/admin/accounts")
}

// SetAdmin handles POST /admin/accounts/:account/admin (admin=true|false):
// grants or removes administration; the last administrator keeps it.
func (h *Teams) SetAdmin(c echo.Context) error {
	var admin bool
	switch c.FormValue("admin") {
	case "true":
		admin = true
	case "false":
	default:
		return h.renderAdmin(c, http.StatusUnprocessableEntity, views.AdminData{Notice: "admin must be true or false"})
	}
	acct, err := h.account(c)
	if err != nil {
		return err
	}
	if err := h.a.accounts.SetAdmin(c.Request().Context(), acct.ID, admin); err != nil {
		return h.adminRefused(c, err)
	}
	action := "admin-revoke"
	if admin {
		action = "admin-grant"
	}
	h.a.audit(c, action, "", acct.ID, acct.Email)
	return c.Redirect(http.StatusSeeOther, "/admin/accounts")
}
