package handlers

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// Teams serves projects and their members, invitations, share links and
// audit log, and the installation's administration.
type Teams struct {
	a *authenticator
}

// accountsOnly guards the routes of accounts, projects and links: open
// mode has none of them, and must not create any (an invitation made
// there would be an account, perhaps an administrator, once the
// installation leaves open mode).
func (h *Teams) accountsOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.a.open {
			return fault.Errorf(fault.ENotFound, "this installation runs in open mode (QUARRY_OPEN_MODE): it has no accounts, projects or share links")
		}
		return next(c)
	}
}

// maxProjectName bounds a project's name, in runes.
const maxProjectName = 120

// ListProjects handles GET /projects: the person's projects with their
// role (every project for an administrator) and the form creating one.
func (h *Teams) ListProjects(c echo.Context) error {
	return h.renderProjects(c, http.StatusOK, "", nil)
}

func (h *Teams) renderProjects(c echo.Context, status int, name string, errs map[string]string) error {
	id := identityOf(c)
	d := views.ProjectsData{Page: h.a.people.page(c), Name: name, Errors: errs, Open: id.open}
	if id.account == nil {
		return render(c, status, views.ProjectsPage(d)) // open mode: no projects to list
	}
	ctx := c.Request().Context()
	mine, err := h.a.accounts.AccountProjects(ctx, id.account.ID)
	if err != nil {
		return err
	}
	roles := map[string]string{}
	for _, p := range mine {
		roles[p.ID] = p.Role
		d.Projects = append(d.Projects, views.ProjectRow{ID: p.ID, Name: p.Name, Role: p.Role, Created: stamp(p.CreatedAt)})
	}
	if id.account.Admin {
		d.Admin = true
		all, err := h.a.accounts.Projects(ctx)
		if err != nil {
			return err
		}
		d.Projects = d.Projects[:0]
		for _, p := range all {
			d.Projects = append(d.Projects, views.ProjectRow{ID: p.ID, Name: p.Name, Role: roles[p.ID], Created: stamp(p.CreatedAt)})
		}
	}
	return render(c, status, views.ProjectsPage(d))
}

// CreateProject handles POST /projects: a new project whose owner is its
// creator.
func (h *Teams) CreateProject(c echo.Context) error {
	id := identityOf(c)
	if id.account == nil {
		return fault.Errorf(fault.EUnauthorized, "open mode has no accounts, so no projects to create")
	}
	name := strings.TrimSpace(c.FormValue("name"))
	if n := utf8.RuneCountInString(name); n < 1 || n > maxProjectName {
		return h.renderProjects(c, http.StatusUnprocessableEntity, name,
			map[string]string{"name": "a project's name is 1 to 120 characters"})
	}
	p := store.Project{ID: engine.NewID(), Name: name, CreatedBy: id.account.ID, CreatedAt: h.a.now().UTC()}
	if err := h.a.accounts.CreateProject(c.Request().Context(), p, id.account.ID); err != nil {
		return err
	}
	h.a.audit(c, "project-create", p.ID, p.ID, name)
	return c.Redirect(http.StatusSeeOther, "/projects/"+p.ID)
}

// ShowProject handles GET /projects/:project: its members, and for those
// who manage it the forms changing them, its invitations and share links.
func (h *Teams) ShowProject(c echo.Context) error {
	if identityOf(c).guest != nil {
		// The rule lets a project-wide link's guest view the project; its
		// members' names and addresses are not what the link shares.
		return fault.Errorf(fault.EUnauthorized, "a share link opens the runs it shares, not the project's page")
	}
	return h.renderProject(c, http.StatusOK, views.ProjectData{})
}

// renderProject fills d (which carries what the request adds: a new link,
// a notice, a form's values and errors) with the project of the request.
func (h *Teams) renderProject(c echo.Context, status int, d views.ProjectData) error {
	ctx := c.Request().Context()
	id := identityOf(c)
	p, err := h.a.accounts.Project(ctx, projectOf(c))
	if err != nil {
		return err
	}
	d.Page, d.ID, d.Name = h.a.people.page(c), p.ID, p.Name
	if id.account != nil {
		if d.Role, err = h.a.accounts.Role(ctx, p.ID, id.account.ID); err != nil {
			return err
		}
		d.Manage = id.account.Admin || access.Role(d.Role).Can(access.Manage)
	}
	members, err := h.a.accounts.Members(ctx, p.ID)
	if err != nil {
		return err
	}
	for _, m := range members {
		d.Members = append(d.Members, views.MemberRow{ID: m.ID, Name: m.Name, Email: m.Email, Role: m.Role})
	}
	if d.Manage {
		invs, err := h.a.accounts.Invitations(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, inv := range invs {
			d.Invitations = append(d.Invitations, views.InvitationRow{Key: invitationKey(inv.TokenHash), Email: inv.Email, Role: inv.Role, Expires: stamp(inv.ExpiresAt)})
		}
		links, err := h.a.accounts.ShareLinks(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, l := range links {
			d.Links = append(d.Links, views.LinkRow{ID: l.ID, Capability: l.Capability, RunID: l.RunID, GuestName: l.GuestName,
				Created: stamp(l.CreatedAt), Revoked: !l.RevokedAt.IsZero()})
		}
	}
	return render(c, status, views.ProjectPage(d))
}

// refused shows a store's refusal of a change (the last owner, say) on the
// project's page, with its status; other errors go to the error handler.
func (h *Teams) refused(c echo.Context, err error, d views.ProjectData) error {
	switch fault.ErrorCode(err) {
	case fault.EConflict:
		d.Notice = fault.ErrorMessage(err)
		return h.renderProject(c, http.StatusConflict, d)
	case fault.EInvalid:
		if fields := fault.ErrorFields(err); len(fields) > 0 {
			d.Errors = fields
		} else {
			d.Notice = fault.ErrorMessage(err)
		}
		return h.renderProject(c, http.StatusUnprocessableEntity, d)
	}
	return err
}

// member returns the project's member :account, or fault.ENotFound.
func (h *Teams) member(c echo.Context) (store.Member, error) {
	members, err := h.a.accounts.Members(c.Request().Context(), projectOf(c))
	if err != nil {
		return store.Member{}, err
	}
	for _, m := range members {
		if m.ID == c.Param("account") {
			return m, nil
		}
	}
	return store.Member{}, fault.Errorf(fault.ENotFound, "no such member of this project")
}

// AddMember handles POST /projects/:project/members: an existing account,
// found by e-mail, joins the project with a role.
func (h *Teams) AddMember(c echo.Context) error {
	ctx := c.Request().Context()
	project := projectOf(c)
	d := views.ProjectData{AddEmail: strings.TrimSpace(c.FormValue("email")), AddRole: c.FormValue("role")}
	fe := fault.FieldErrors{}
	role, err := access.ParseRole(d.AddRole)
	addFieldErrors(fe, err)
	email, err := access.NormalizeEmail(d.AddEmail)
	addFieldErrors(fe, err)
	var acct store.Account
	if err == nil {
		acct, err = h.a.accounts.AccountByEmail(ctx, email)
		switch {
		case fault.ErrorCode(err) == fault.ENotFound:
			fe.Add("email", "no account has this e-mail: send an invitation link instead")
		case err != nil:
			return err
		}
	}
	if len(fe) > 0 {
		d.Errors = fe
		return h.renderProject(c, http.StatusUnprocessableEntity, d)
	}
	before, err := h.a.accounts.Role(ctx, project, acct.ID)
	if err != nil {
		return err
	}
	if before != "" {
		d.Errors = map[string]string{"email": acct.Email + " is a member already (" + before + "): change their role in the list"}
		return h.renderProject(c, http.StatusConflict, d)
	}
	if err := h.a.accounts.SetMember(ctx, project, acct.ID, string(role)); err != nil {
		return h.refused(c, err, d)
	}
	h.a.audit(c, "member-add", project, acct.ID, string(role))
	return c.Redirect(http.StatusSeeOther, "/projects/"+project)
}

// ChangeRole handles POST /projects/:project/members/:account/role.
func (h *Teams) ChangeRole(c echo.Context) error {
	project := projectOf(c)
	m, err := h.member(c)
	if err != nil {
		return err
	}
	role, err := access.ParseRole(c.FormValue("role"))
	if err != nil {
		return h.refused(c, err, views.ProjectData{})
	}
	if string(role) == m.Role {
		return c.Redirect(http.StatusSeeOther, "/projects/"+project)
	}
	if err := h.a.accounts.SetMember(c.Request().Context(), project, m.ID, string(role)); err != nil {
		return h.refused(c, err, views.ProjectData{})
	}
	h.a.audit(c, "member-role", project, m.ID, m.Role+"→"+string(role))
	return c.Redirect(http.StatusSeeOther, "/projects/"+project)
}

// RemoveMember handles POST /projects/:project/members/:account/remove.
func (h *Teams) RemoveMember(c echo.Context) error {
	project := projectOf(c)
	m, err := h.member(c)
	if err != nil {
		return err
	}
	if err := h.a.accounts.RemoveMember(c.Request().Context(), project, m.ID); err != nil {
		return h.refused(c, err, views.ProjectData{})
	}
	h.a.audit(c, "member-remove", project, m.ID, m.Role)
	return c.Redirect(http.StatusSeeOther, "/projects/"+project)
}

// startProjects are the projects where the request's person may start
// runs, for the start forms' project field: nil in open mode (and for a
// guest, who starts nothing).
func (a *authenticator) startProjects(c echo.Context) ([]views.Option, error) {
	return a.projectsWhere(c, access.Start)
}

// projectsWhere are the projects where the request's person has perm
// (every project for an administrator): nil in open mode and for a guest.
func (a *authenticator) projectsWhere(c echo.Context, perm access.Permission) ([]views.Option, error) {
	id := identityOf(c)
	if id.account == nil {
		return nil, nil
	}
	ctx := c.Request().Context()
	var out []views.Option
	if id.account.Admin {
		all, err := a.accounts.Projects(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range all {
			out = append(out, views.Option{Value: p.ID, Label: p.Name})
		}
		return out, nil
	}
	mine, err := a.accounts.AccountProjects(ctx, id.account.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range mine {
		if access.Role(p.Role).Can(perm) {
			out = append(out, views.Option{Value: p.ID, Label: p.Name})
		}
	}
	return out, nil
}
