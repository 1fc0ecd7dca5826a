package handlers

import (
	"bufio"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/store"
	"quarry/internal/views"
)

// LibraryStore is what the library pages need; *store.Store implements it.
type LibraryStore interface {
	LibraryCount(ctx context.Context) (int, error)
	EachLibraryPaper(ctx context.Context, fn func(store.LibraryPaper) error) error
	// BrowseLibrary, LibraryPaperByID and PaperRuns serve the list and a
	// paper's page (library_paper.go).
	BrowseLibrary(ctx context.Context, q store.LibraryQuery) (store.LibraryResults, error)
	LibraryPaperByID(ctx context.Context, id string) (store.LibraryEntry, error)
	PaperRuns(ctx context.Context, f store.PaperRunsFilter) ([]store.PaperRun, int, error)
	// The projects' library selections (library_selection.go).
	SelectPapers(ctx context.Context, project, by string, ids []string) (int, error)
	UnselectPapers(ctx context.Context, project string, ids []string) (int, error)
	SelectMatching(ctx context.Context, project, by, text string, max int) (added, matched int, err error)
	SelectionCount(ctx context.Context, project string) (int, error)
	SelectedIn(ctx context.Context, id string, projects []string) ([]string, error)
}

// Library serves the library page, file uploads into the library with
// their progress, and the library's export.
type Library struct {
	people *people
	store  LibraryStore
	jobs   *library.Jobs
	read   codecs.Options // the limits of reading a file
	// embedding reports the background embedding (nil: none).
	embedding func() *library.EmbeddingStatus
	// auth says whose runs a paper's page may list (their projects').
	auth *authenticator
}

// maxShownErrors bounds the skipped records listed on the import page.
const maxShownErrors = 200

// Show handles GET /library?q=&page=: the import form, and the library's
// papers (or a search's matches) a page at a time (see listPapers).
func (h *Library) Show(c echo.Context) error {
	return h.renderPage(c, http.StatusOK, views.ImportForm{})
}

func (h *Library) renderPage(c echo.Context, status int, form views.ImportForm) error {
	d := views.LibraryData{Page: h.people.page(c), Formats: biblio.Formats, ExportFormats: codecs.ExportFormats, Form: form}
	if err := h.selections(c, &d); err != nil {
		return err
	}
	if err := h.listPapers(c, &d); err != nil {
		return err
	}
	managed := map[string]bool{}
	for _, o := range d.ImportInto {
		managed[o.Value] = true
	}
	for _, j := range h.jobs.List() {
		// Administrators see every import; an owner, their projects'.
		if isAdmin(c) || (j.Project != "" && managed[j.Project]) {
			d.Jobs = append(d.Jobs, jobView(j))
		}
	}
	d.Embeddings = h.embeddingProgress()
	return render(c, status, views.LibraryPage(d))
}

// Embeddings handles GET /library/embeddings: the background embedding's
// progress, the fragment the library page polls while it runs (404
// without an embeddings provider).
func (h *Library) Embeddings(c echo.Context) error {
	e := h.embeddingProgress()
	if e == nil {
		return fault.Errorf(fault.ENotFound, "semantic search is not configured (QUARRY_EMBED_PROVIDER)")
	}
	return render(c, http.StatusOK, views.LibraryEmbeddings(*e))
}

func (h *Library) embeddingProgress() *views.EmbeddingProgress {
	if h.embedding == nil {
		return nil
	}
	s := h.embedding()
	if s == nil {
		return nil
	}
	return &views.EmbeddingProgress{Model: s.Model, Papers: s.Papers, Embedded: s.Embedded, Running: s.Running,
		Errors: s.Errors, LastError: s.LastError, LastErrorAt: s.LastErrorAt}
}

// Import handles POST /library/imports: it spools the uploaded file to
// disk, checks that Quarry can read it, starts the import in the
// background and redirects to its progress page. A file Quarry cannot read
// re-renders the form (422) with the reason and the choices kept.
func (h *Library) Import(c echo.Context) error {
	form := views.ImportForm{Format: strings.TrimSpace(c.FormValue("format")), Encoding: strings.TrimSpace(c.FormValue("encoding")), Columns: c.FormValue("columns"),
		Project: strings.TrimSpace(c.FormValue("project"))}
	// The library is the installation's: its administrators import into
	// it alone, a project's owners into it and their project's selection.
	if form.Project == "" && !isAdmin(c) {
		return fault.Errorf(fault.EUnauthorized, "only an administrator imports into the library alone; choose one of your projects")
	}
	if form.Project != "" {
		if err := h.auth.may(c, form.Project, access.Manage); err != nil {
			return err
		}
	}
	fail := func(msg string) error {
		form.Error = msg
		return h.renderPage(c, http.StatusUnprocessableEntity, form)
	}
	columns, err := parseColumns(form.Columns)
	if err != nil {
		return fail(err.Error())
	}
	fh, err := c.FormFile("file")
	if err != nil {
		return fail("Choose a file to import.")
	}
	path, err := h.spool(fh)
	if err != nil {
		return err
	}
	id, err := h.jobs.Start(path, fh.Filename, library.Importer{By: h.people.name(c), Project: form.Project}, codecs.Options{Format: form.Format, Encoding: form.Encoding, CSVColumns: columns, Limits: h.read.Limits, Gzip: h.read.Gzip}, true)
	if err != nil {
		if fault.ErrorCode(err) == fault.EInvalid {
			return fail(fault.ErrorMessage(err))
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/library/imports/"+id)
}

// ImportStatus handles GET /library/imports/:id: the progress page, or its
// status fragment when htmx polls it.
func (h *Library) ImportStatus(c echo.Context) error {
	st, err := h.jobs.Status(c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.mayWatch(c, st); err != nil {
		return err
	}
	if isHTMX(c) {
		return render(c, http.StatusOK, views.ImportJobStatus(jobView(st)))
	}
	return render(c, http.StatusOK, views.ImportJobPage(jobView(st)))
}

// mayWatch lets an import's progress be seen by administrators and by
// the owners of the project it fills; anyone else is told there is no
// such import.
func (h *Library) mayWatch(c echo.Context, st library.JobStatus) error {
	if isAdmin(c) {
		return nil
	}
	if st.Project != "" && h.auth.may(c, st.Project, access.Manage) == nil {
		return nil
	}
	return fault.Errorf(fault.ENotFound, "no import %q", st.ID)
}

// Export handles GET /library/export?format=: the whole library as one
// download, streamed paper by paper.
func (h *Library) Export(c echo.Context) error {
	format := c.QueryParam("format")
	w := c.Response()
	// The buffer holds anything a writer emits up front (CSL-JSON's "[")
	// until the headers are set.
	bw := bufio.NewWriter(w)
	out, err := codecs.NewWriter(bw, format)
	if err != nil {
		return err
	}
	w.Header().Set(echo.HeaderContentType, codecs.ContentType(format))
	w.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="quarry-library%s"`, codecs.Extension(format)))
	err = library.Export(c.Request().Context(), h.store, out)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil && !w.Committed {
		return err
	}
	// Once the status is sent, a failure can only cut the body short; the
	// error still reaches the log through the error handler.
	return err
}

// parseColumns reads the CSV override field: "field=Header" pairs
// separated by ';' or new lines.
func parseColumns(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		field, header, ok := strings.Cut(part, "=")
		field, header = strings.TrimSpace(field), strings.TrimSpace(header)
		if !ok || field == "" || header == "" {
			return nil, fmt.Errorf("CSV columns: write field=Header pairs separated by ';' (got %q)", strings.TrimSpace(part))
		}
		out[field] = header
	}
	return out, nil
}

// spool copies an upload to the import jobs' spool directory.
func (h *Library) spool(fh *multipart.FileHeader) (string, error) {
	src, err := fh.Open()
	if err != nil {
		return "", fault.Errorf(fault.EInvalid, "read the upload: %v", err)
	}
	defer src.Close()
	return h.jobs.Spool(src)
}

func jobView(s library.JobStatus) views.ImportJob {
	j := views.ImportJob{
		ID: s.ID, Name: s.Name, Format: s.Format, By: s.By, Started: s.Started, Finished: s.Finished,
		Done: s.Done, Indexing: s.Progress.Indexing, Read: s.Progress.Read, Inserted: s.Progress.Inserted,
		Updated: s.Progress.Updated, Unchanged: s.Progress.Unchanged, Skipped: s.Progress.Skipped, Reasons: s.Progress.ReasonSummary(), Err: s.Err,
	}
	for i, e := range s.Progress.Errors {
		if i == maxShownErrors {
			break
		}
		j.Errors = append(j.Errors, views.ImportError{Line: e.Line, Reason: e.Reason})
	}
	j.MoreErrors = len(s.Progress.Errors) - len(j.Errors)
	j.Warned = s.Progress.Warned
	for _, e := range s.Progress.Warnings[:min(len(s.Progress.Warnings), maxShownErrors)] {
		j.Warnings = append(j.Warnings, views.ImportError{Line: e.Line, Reason: e.Reason})
	}
	return j
}
