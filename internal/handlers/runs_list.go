package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// RunLister lists the server's runs; *store.Store implements it.
type RunLister interface {
	ListRuns(ctx context.Context, f store.RunFilter) (store.RunList, error)
}

// RunIndex serves GET /runs, every run on the server.
type RunIndex struct {
	people *people
	runs   RunLister
	auth   *authenticator
}

// runsPerPage is a page of /runs.
const runsPerPage = 25

// runStatuses are the statuses /runs filters by, in the order a run
// passes through them, with what each means to a person.
func runStatuses() []views.Option {
	return []views.Option{
		{Value: string(engine.StatusPending), Label: "pending (not started yet)"},
		{Value: string(engine.StatusRunning), Label: "running"},
		{Value: string(engine.StatusWaiting), Label: "waiting at a checkpoint"},
		{Value: string(engine.StatusEscalated), Label: "escalated (needs help)"},
		{Value: string(engine.StatusCompleted), Label: "completed"},
		{Value: string(engine.StatusFailed), Label: "failed"},
		{Value: string(engine.StatusCanceled), Label: "canceled"},
	}
}

// Show handles GET /runs?status=&q=&page=: the runs of the person's
// projects (all of them for administrators and in open mode) newest first,
// 25 a page, filtered by status and by a piece of the question. An unknown
// status or a page that is not a positive number is a 422 naming the
// field; a page past the end is an empty page that says how many there are.
func (h *RunIndex) Show(c echo.Context) error {
	if g := identityOf(c).guest; g != nil && g.RunID != "" {
		// A link to one run shares that run, not the list of its project's.
		return c.Redirect(http.StatusSeeOther, "/runs/"+g.RunID)
	}
	status := strings.TrimSpace(c.QueryParam("status"))
	q := strings.TrimSpace(c.QueryParam("q"))
	fe := fault.FieldErrors{}
	statuses := runStatuses()
	if status != "" && !slices.ContainsFunc(statuses, func(o views.Option) bool { return o.Value == status }) {
		fe.Add("status", "unknown status "+strconv.Quote(status))
	}
	page, err := pageParam(c)
	if err != nil {
		fe.Add("page", err.Error())
	}
	if len(q) > 2000 {
		fe.Add("q", "a question is at most 2,000 characters long")
	}
	if err := fe.Err("invalid run list"); err != nil {
		return err
	}
	offset := (page - 1) * runsPerPage
	projects, err := h.auth.visibleProjects(c)
	if err != nil {
		return err
	}
	list, err := h.runs.ListRuns(c.Request().Context(), store.RunFilter{
		Status: engine.Status(status), TextParam: paramQuestion, Text: q, Offset: offset, Limit: runsPerPage, Projects: projects,
	})
	if err != nil {
		return err
	}
	d := views.RunsData{Page: h.people.page(c), Status: status, Query: q, Statuses: statuses}
	for _, r := range list.Runs {
		d.Runs = append(d.Runs, views.RunRow{ID: r.ID, Question: r.Text, Workflow: r.Workflow, Status: string(r.Status),
			Iteration: r.Iteration, CreatedAt: r.CreatedAt, Papers: r.Papers})
	}
	keep := url.Values{}
	if status != "" {
		keep.Set("status", status)
	}
	if q != "" {
		keep.Set("q", q)
	}
	d.Pager = pager("runs", "/runs", keep, page, runsPerPage, len(list.Runs), list.Total, true)
	d.Pager.TestName = "runs-pager"
	return render(c, http.StatusOK, views.RunsPage(d))
}

// maxPage bounds ?page=: past it the offset would be absurd, whatever the
// list holds.
const maxPage = 1_000_000

// pageParam reads ?page= (1-based; absent means 1).
func pageParam(c echo.Context) (int, error) {
	s := strings.TrimSpace(c.QueryParam("page"))
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPage {
		return 1, fmt.Errorf("page must be a whole number from 1 to %d", maxPage)
	}
	return n, nil
}

// pager places a page of n items (of total; exact or a lower bound) in a
// list at path whose other query parameters are keep.
func pager(noun, path string, keep url.Values, page, perPage, n, total int, exact bool) views.Pager {
	p := views.Pager{Noun: noun, Total: total, Exact: exact}
	if n > 0 {
		p.From = (page-1)*perPage + 1
		p.To = p.From + n - 1
	}
	at := func(page int) string {
		v := url.Values{}
		for k, vs := range keep {
			v[k] = vs
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if page > 1 {
		prev := page - 1
		if n == 0 {
			// Past the end, "previous" leads to the last page there is.
			prev = min(prev, max(1, (total+perPage-1)/perPage))
		}
		p.Prev = at(prev)
	}
	if n == perPage && (p.To < total || !exact) {
		p.Next = at(page + 1)
	}
	return p
}
