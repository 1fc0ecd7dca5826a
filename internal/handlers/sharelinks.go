package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// CreateLink handles POST /projects/:project/links: a share link (a
// capability to view, or also decide, one run of the project or all of
// them) whose token is shown once.
func (h *Teams) CreateLink(c echo.Context) error {
	ctx := c.Request().Context()
	project := projectOf(c)
	l := store.ShareLink{ID: engine.NewID(), ProjectID: project, Capability: c.FormValue("capability"),
		RunID: strings.TrimSpace(c.FormValue("run")), CreatedAt: h.a.now().UTC()}
	if id := identityOf(c); id.account != nil {
		l.CreatedBy = id.account.ID
	}
	fe := fault.FieldErrors{}
	if l.Capability != store.ShareView && l.Capability != store.ShareDecide {
		fe.Add("capability", "choose view or decide")
	}
	if l.RunID != "" {
		p, err := h.a.accounts.RunProject(ctx, l.RunID)
		switch {
		case fault.ErrorCode(err) == fault.ENotFound || (err == nil && p != project):
			fe.Add("run", "no run "+l.RunID+" in this project")
		case err != nil:
			return err
		}
	}
	if g := strings.TrimSpace(c.FormValue("guest_name")); g != "" {
		name, err := access.CheckDisplayName(g)
		if err != nil {
			fe.Add("guest_name", fault.ErrorMessage(err))
		}
		l.GuestName = name
	}
	if len(fe) > 0 {
		return h.renderProject(c, http.StatusUnprocessableEntity, views.ProjectData{Errors: fe})
	}
	token, err := access.NewToken("ql_")
	if err != nil {
		return err
	}
	if err := h.a.accounts.CreateShareLink(ctx, l, access.HashToken(token)); err != nil {
		return h.refused(c, err, views.ProjectData{})
	}
	h.a.audit(c, "share-link-create", project, l.ID, strings.TrimSpace(l.Capability+" "+l.RunID))
	return h.renderProject(c, http.StatusOK, views.ProjectData{NewLink: "/s/" + token, NewLinkKind: "share"})
}

// RevokeLink handles POST /projects/:project/links/:link/revoke: the link
// stops working at once, for guests who opened it already too.
func (h *Teams) RevokeLink(c echo.Context) error {
	project := projectOf(c)
	if err := h.a.accounts.RevokeShareLink(c.Request().Context(), project, c.Param("link")); err != nil {
		return err
	}
	h.a.audit(c, "share-link-revoke", project, c.Param("link"), "")
	return c.Redirect(http.StatusSeeOther, "/projects/"+project)
}

// OpenLink handles GET /s/:token: a browser signed in as no one becomes
// the link's guest (the authenticate middleware reads the link from the
// session on every request, so revoking it ends the guest's access); a
// signed-in person keeps their own account and is just sent to the run,
// which their membership decides whether they may see.
func (h *Teams) OpenLink(c echo.Context) error {
	link, err := h.a.accounts.ShareLinkByToken(c.Request().Context(), access.HashToken(c.Param("token")))
	if err != nil {
		if fault.ErrorCode(err) == fault.ENotFound {
			return fault.Errorf(fault.ENotFound, "this share link was revoked or is wrong: ask whoever sent it for a new one")
		}
		return err
	}
	to := "/runs"
	if link.RunID != "" {
		to = "/runs/" + link.RunID
	}
	if id := identityOf(c); id.account != nil || id.open {
		return c.Redirect(http.StatusSeeOther, to)
	}
	s := h.a.people.session(c)
	s.Values[keyGuest] = link.ID
	if err := h.a.people.save(c, s); err != nil {
		return err
	}
	name := link.GuestName
	if name == "" {
		name = h.a.people.typedName(c)
	}
	c.Set(identityKey, identity{guest: &link, name: name})
	h.a.audit(c, "share-link-open", link.ProjectID, link.ID, link.Capability)
	return c.Redirect(http.StatusSeeOther, to)
}
