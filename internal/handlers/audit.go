package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/biblio/csvfile"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// auditPage is how many entries a page of the audit log shows.
const auditPage = 100

// ProjectAudit handles GET /projects/:project/audit: the project's log,
// newest first, a page at a time (?before=<seq>).
func (h *Teams) ProjectAudit(c echo.Context) error {
	p, err := h.a.accounts.Project(c.Request().Context(), projectOf(c))
	if err != nil {
		return err
	}
	return h.auditPage(c, store.AuditFilter{ProjectID: p.ID}, "Audit log · "+p.Name, "/projects/"+p.ID+"/audit")
}

// InstallationAudit handles GET /admin/audit: every project's log and the
// installation's own (accounts, sign-ins).
func (h *Teams) InstallationAudit(c echo.Context) error {
	return h.auditPage(c, store.AuditFilter{All: true}, "Audit log", "/admin/audit")
}

func (h *Teams) auditPage(c echo.Context, f store.AuditFilter, title, base string) error {
	if b := c.QueryParam("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return fault.Errorf(fault.EInvalid, "before must be an entry's number")
		}
		f.Before = n
	}
	f.Limit = auditPage
	entries, err := h.a.accounts.AuditLog(c.Request().Context(), f)
	if err != nil {
		return err
	}
	d := views.AuditData{Page: h.a.people.page(c), Title: title, Base: base}
	for _, e := range entries {
		d.Entries = append(d.Entries, views.AuditRow{Seq: e.Seq, At: e.At.UTC().Format(time.DateTime), Actor: e.Actor, ActorID: e.ActorID,
			Action: e.Action, Project: e.ProjectID, Target: e.Target, Addr: e.Address, Detail: e.Detail})
	}
	if len(entries) == auditPage {
		d.Before = entries[len(entries)-1].Seq
	}
	return render(c, http.StatusOK, views.AuditPage(d))
}

// ProjectAuditCSV handles GET /projects/:project/audit.csv: the project's
// whole log. Its route's name makes auditWrites record the export.
func (h *Teams) ProjectAuditCSV(c echo.Context) error {
	return h.auditCSV(c, store.AuditFilter{ProjectID: projectOf(c)}, "audit-"+projectOf(c)+".csv")
}

// InstallationAuditCSV handles GET /admin/audit.csv: the whole log.
func (h *Teams) InstallationAuditCSV(c echo.Context) error {
	return h.auditCSV(c, store.AuditFilter{All: true}, "audit.csv")
}

// auditCSV writes every entry f keeps, newest first, a store page at a
// time so a long log is never held whole.
func (h *Teams) auditCSV(c echo.Context, f store.AuditFilter, filename string) error {
	ctx := c.Request().Context()
	f.Limit = store.MaxAuditLimit
	entries, err := h.a.accounts.AuditLog(ctx, f) // the first page before any byte is sent, so an error is a clean page
	if err != nil {
		return err
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+filename+`"`)
	res.WriteHeader(http.StatusOK)
	w := csvfile.NewSheetWriter(res) // names and details are people's: a spreadsheet must not run them as formulas
	if err := w.Write([]string{"seq", "at", "actor", "actor_id", "action", "target", "address", "detail"}); err != nil {
		return err
	}
	for {
		for _, e := range entries {
			if err := w.Write([]string{strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(time.RFC3339), e.Actor, e.ActorID,
				e.Action, e.Target, e.Address, e.Detail}); err != nil {
				return err
			}
		}
		if len(entries) < f.Limit {
			break
		}
		f.Before = entries[len(entries)-1].Seq
		if entries, err = h.a.accounts.AuditLog(ctx, f); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
