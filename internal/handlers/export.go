package handlers

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/biblio/codecs"
	"quarry/internal/skills/pipeline"
)

// Export serves a run's papers as a file for a reference manager.
type Export struct {
	runs RunStore
}

// Run handles GET /api/runs/:id/export?format=bibtex|ris|csljson|medline|
// csv|jsonl&set=relevant|not_screened|irrelevant|final|accumulated|review
// (set defaults to relevant, the papers marked relevant: never papers
// nobody screened): the papers with the researcher's current marks and
// notes, as a download. The file is built in memory
// first, so a failure is a clean error response rather than half a file.
// A missing or unknown format is refused naming biblio.Formats, the list
// codecs.NewWriter accepts, so the message cannot fall behind the code.
func (h *Export) Run(c echo.Context) error {
	ctx := c.Request().Context()
	format := strings.ToLower(c.QueryParam("format"))
	if format == "" {
		return codecs.UnknownFormat("")
	}
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	rs, err := pipeline.StateOf(run)
	if err != nil {
		return err
	}
	set := c.QueryParam("set")
	if set == "" {
		set = pipeline.ExportRelevant
	}
	marks, err := marksAs(ctx, h.runs, run, "")
	if err != nil {
		return err
	}
	records, err := pipeline.ExportRecords(rs, marks, set)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := codecs.WriteAll(&buf, format, records); err != nil {
		return err
	}
	name := fmt.Sprintf("quarry-%s-%s%s", run.ID, set, codecs.Extension(format))
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, name))
	return c.Blob(http.StatusOK, codecs.ContentType(format), buf.Bytes())
}
