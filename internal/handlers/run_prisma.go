package handlers

import (
	"bytes"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/report/prisma"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
)

// PrismaSVG handles GET /runs/:id/prisma.svg: the run's PRISMA 2020 flow
// diagram, counted from its audit trail and drawn as SVG. It is served
// inline (the completed page shows it as an image) with a file name, so
// a download link saves it as such; the policy header keeps an SVG
// opened on its own from running anything.
func (h *Runs) PrismaSVG(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if _, err := pipeline.StateOf(run); err != nil { // a search run only
		return err
	}
	cps, err := h.runs.Checkpoints(ctx, run.ID)
	if err != nil {
		return err
	}
	in := make([]runview.Checkpoint, len(cps))
	for i, cd := range cps {
		in[i] = runview.Checkpoint(cd)
	}
	v, err := runview.Build(run, in)
	if err != nil {
		return err
	}
	// No exclusion reasons yet: marks do not carry them (prisma.ReasonFunc).
	input, err := prisma.FromRun(v, in, nil)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := prisma.Build(input).WriteSVG(&buf, v.Question); err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentDisposition, mime.FormatMediaType("inline", map[string]string{"filename": "quarry-run-" + run.ID + "-prisma.svg"}))
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", buf.Bytes())
}
