package handlers

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/report"
	"quarry/internal/skills/pipeline"
)

// ReportMarkdown handles GET /runs/:id/report.md: the run's PRISMA-S
// search-strategy report as a Markdown download, for a review's appendix.
func (h *Runs) ReportMarkdown(c echo.Context) error {
	return h.report(c, "md", "text/markdown; charset=utf-8", func(w io.Writer, run engine.Run, rs pipeline.RunState) error {
		info := report.RunInfo{ID: run.ID, Question: run.Params.String(paramQuestion), StartedBy: run.Params.String(pipeline.ParamStartedBy),
			StartedAt: run.CreatedAt, Status: string(run.Status)}
		return report.SearchStrategyMarkdown(w, info, rs)
	})
}

// ReportCSV handles GET /runs/:id/report.csv: the same report as one row
// per search made, for spreadsheets and review tools.
func (h *Runs) ReportCSV(c echo.Context) error {
	return h.report(c, "csv", "text/csv; charset=utf-8", func(w io.Writer, _ engine.Run, rs pipeline.RunState) error {
		return report.SearchStrategyCSV(w, rs)
	})
}

// report renders a search run's report into memory (so a failure is a
// clean error response) and sends it as an attachment named after the run.
func (h *Runs) report(c echo.Context, ext, contentType string, write func(io.Writer, engine.Run, pipeline.RunState) error) error {
	run, err := h.runs.Run(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	rs, err := pipeline.StateOf(run)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := write(&buf, run, rs); err != nil {
		return err
	}
	name := "quarry-run-" + run.ID + "-search-strategy." + ext
	c.Response().Header().Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	return c.Blob(http.StatusOK, contentType, buf.Bytes())
}
