package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
	"quarry/internal/views"
)

// papersPerPage is a page of the library's list.
const papersPerPage = 50

// paperRunsShown bounds the runs a paper's page lists.
const paperRunsShown = 100

// listPapers fills the library page's list from ?q= and ?page=. Without a
// search it counts the library exactly (count(*) of 75,000 papers takes
// about 10 ms); a search counts its matches exactly too.
func (h *Library) listPapers(c echo.Context, d *views.LibraryData) error {
	q := strings.TrimSpace(c.QueryParam("q"))
	fe := fault.FieldErrors{}
	page, err := pageParam(c)
	if err != nil {
		fe.Add("page", err.Error())
	}
	if len(q) > 2000 {
		fe.Add("q", "a search is at most 2,000 characters long")
	}
	if err := fe.Err("invalid library search"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	sel := d.Selection.Value
	res, err := h.store.BrowseLibrary(ctx, store.LibraryQuery{Text: q, Offset: (page - 1) * papersPerPage, Limit: papersPerPage, Selection: sel})
	if err != nil {
		return err
	}
	d.Query = q
	if q == "" && sel == "" {
		d.Count = res.Total
	} else if d.Count, err = h.store.LibraryCount(ctx); err != nil {
		return err
	}
	if sel != "" {
		if d.SelectionCount, err = h.store.SelectionCount(ctx, sel); err != nil {
			return err
		}
	}
	d.Changed = -1
	if n, err := strconv.Atoi(c.QueryParam("changed")); err == nil && n >= 0 {
		d.Changed = n
	}
	for _, p := range res.Papers {
		d.Papers = append(d.Papers, views.LibraryRow{ID: p.ID, Title: p.Title, Authors: p.Authors, Year: p.Year, Venue: p.Venue})
	}
	keep := url.Values{}
	if q != "" {
		keep.Set("q", q)
	}
	if sel != "" {
		keep.Set("project", sel)
	}
	d.Pager = pager("papers", "/library", keep, page, papersPerPage, len(res.Papers), res.Total, res.Exact)
	d.Pager.TestName = "library-pager"
	return nil
}

// Paper handles GET /library/papers/:id (the ID escaped as one path
// segment, as DOIs hold slashes; an unescaped one works too): the paper's
// metadata and the runs that showed it, with its mark in each. 404 with
// the error page for a paper the library does not have.
func (h *Library) Paper(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := paperParam(c)
	if err != nil {
		return err
	}
	p, err := h.store.LibraryPaperByID(ctx, id)
	if err != nil {
		return err
	}
	projects, err := h.auth.visibleProjects(c)
	if err != nil {
		return err
	}
	runs, total, err := h.store.PaperRuns(ctx, store.PaperRunsFilter{PaperID: id, TextParam: paramQuestion, Limit: paperRunsShown,
		Projects: projects, BlindParam: pipeline.ParamScreeners})
	if err != nil {
		return err
	}
	rec := library.ToBiblio(p.RawPaper, p.Extra)
	d := views.PaperData{
		Page: h.people.page(c), ID: p.ID, Title: p.Title, Authors: p.Authors, Year: p.Year, Venue: p.Venue,
		Volume: p.Volume, Issue: p.Issue, Pages: p.Pages, Abstract: p.Abstract, DOI: p.DOI, ArxivID: p.ArxivID,
		PMID: p.PMID, URL: p.URL, Type: rec.Type, Keywords: rec.Keywords, Source: p.Source, ImportedAt: p.ImportedAt,
		RunsTotal: total,
	}
	if d.Selections, err = h.paperSelections(c, id); err != nil {
		return err
	}
	d.CSRF = d.Page.CSRF
	for _, r := range runs {
		row := views.PaperRunRow{
			RunRow: views.RunRow{ID: r.ID, Question: r.Text, Workflow: r.Workflow, Status: string(r.Status),
				Iteration: r.Iteration, CreatedAt: r.CreatedAt, Papers: r.Papers},
			FirstIteration: r.FirstIteration,
		}
		if m := r.Mark; m != nil {
			row.Mark, row.Note, row.Reason, row.MarkedBy, row.MarkedAt, row.MarkIteration = m.Mark, m.Note, m.Reason, m.By, m.At, m.Iteration
		}
		d.Runs = append(d.Runs, row)
	}
	return render(c, http.StatusOK, views.PaperPage(d))
}
