package handlers

import (
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/report/wfgraph"
)

// GraphSVG handles GET /runs/:id/graph.svg: the run's workflow drawn with
// each stage coloured by its state in the current iteration and the
// current stage outlined (engine.Progress, as GET /api/runs/:id lists
// them). The run page loads it as an image, so drawing it never holds the
// page back; its address carries the run's version, so a redrawn run is
// fetched anew and an unchanged one comes from the browser's cache.
func (h *Runs) GraphSVG(c echo.Context) error {
	ctx := c.Request().Context()
	e, err := h.cache.get(ctx, h.runs, c.Param("id"))
	if err != nil {
		return err
	}
	wf, err := h.engine.Workflow(ctx, e.run)
	if err != nil {
		return err
	}
	o := wfgraph.Options{ID: "run", Current: e.resume.Current, States: map[string]wfgraph.State{}}
	for _, s := range e.stages {
		o.States[s.ID] = wfgraph.State(s.State)
	}
	svg, err := h.graphs.SVG(ctx, wfgraph.FromWorkflow(wf), o)
	if err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentDisposition, mime.FormatMediaType("inline", map[string]string{"filename": "quarry-run-" + e.run.ID + "-workflow.svg"}))
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	hdr.Set(echo.HeaderCacheControl, "no-cache")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", []byte(svg))
}
