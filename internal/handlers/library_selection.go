package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/fault"
	"quarry/internal/views"
)

// maxSelectBySearch bounds the papers one "add the matches" adds to a
// project's library selection: a selection is built from searches a
// person looked at, not by taking the whole library.
const maxSelectBySearch = 10000

// selections fills the library page's project choices: the selections the
// person may list (their projects'), the one ?project= shows (a project
// they are not in is 404, as for its runs), and the projects they may
// import into and add papers to (those they own; every project for an
// administrator).
func (h *Library) selections(c echo.Context, d *views.LibraryData) error {
	viewable, err := h.auth.projectsWhere(c, access.View)
	if err != nil {
		return err
	}
	if d.ImportInto, err = h.auth.projectsWhere(c, access.Manage); err != nil {
		return err
	}
	d.Selections, d.ImportAlone = viewable, isAdmin(c)
	project := strings.TrimSpace(c.QueryParam("project"))
	if project == "" {
		return nil
	}
	if err := h.auth.may(c, project, access.View); err != nil {
		return err
	}
	d.Selection = views.Option{Value: project, Label: project}
	for _, o := range viewable {
		if o.Value == project {
			d.Selection.Label = o.Label
		}
	}
	for _, o := range d.ImportInto {
		d.SelectionManaged = d.SelectionManaged || o.Value == project
	}
	return nil
}

// Select handles POST /projects/:project/selection: an owner of the project
// adds papers to its library selection (action=add) or removes them
// (action=remove): the papers named (paper, repeated), or, to add, every
// library paper matching q (at most maxSelectBySearch). It returns to
// next, a library page.
func (h *Library) Select(c echo.Context) error {
	ctx := c.Request().Context()
	project := projectOf(c)
	if project == "" { // open mode has no projects
		return fault.Errorf(fault.EInvalid, "choose a project")
	}
	form, err := c.FormParams()
	if err != nil {
		return fault.Errorf(fault.EInvalid, "read the form: %v", err)
	}
	ids := form["paper"]
	q := strings.TrimSpace(form.Get("q"))
	by := h.people.name(c)
	var changed int
	switch action := form.Get("action"); {
	case action == "add" && len(ids) > 0:
		changed, err = h.store.SelectPapers(ctx, project, by, ids)
	case action == "add" && q != "":
		changed, _, err = h.store.SelectMatching(ctx, project, by, q, maxSelectBySearch)
	case action == "remove" && len(ids) > 0:
		changed, err = h.store.UnselectPapers(ctx, project, ids)
	case action != "add" && action != "remove":
		return &fault.Error{Code: fault.EInvalid, Message: "invalid request", Fields: map[string]string{"action": "is add or remove"}}
	default:
		return &fault.Error{Code: fault.EInvalid, Message: "invalid request", Fields: map[string]string{"paper": "name the papers (or, to add, a search q)"}}
	}
	if err != nil {
		return err
	}
	next := form.Get("next")
	if !strings.HasPrefix(next, "/library") || strings.HasPrefix(next, "//") {
		next = "/library?project=" + url.QueryEscape(project)
	}
	sep := "?"
	if strings.Contains(next, "?") {
		sep = "&"
	}
	return c.Redirect(http.StatusSeeOther, next+sep+"changed="+strconv.Itoa(changed))
}

// paperSelections says, for each of the person's projects, whether the
// paper id is in its library selection and whether they may change that.
func (h *Library) paperSelections(c echo.Context, id string) ([]views.PaperSelection, error) {
	viewable, err := h.auth.projectsWhere(c, access.View)
	if err != nil || len(viewable) == 0 {
		return nil, err
	}
	managed, err := h.auth.projectsWhere(c, access.Manage)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(viewable))
	for i, o := range viewable {
		ids[i] = o.Value
	}
	in, err := h.store.SelectedIn(c.Request().Context(), id, ids)
	if err != nil {
		return nil, err
	}
	out := make([]views.PaperSelection, len(viewable))
	for i, o := range viewable {
		out[i] = views.PaperSelection{Project: o, In: slices.Contains(in, o.Value), Managed: slices.ContainsFunc(managed, func(m views.Option) bool { return m.Value == o.Value })}
	}
	return out, nil
}
