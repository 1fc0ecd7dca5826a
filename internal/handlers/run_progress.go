package handlers

import (
	"bytes"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/report/progress"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// ProgressSVG handles GET /runs/:id/progress.svg: the run's screening
// progress, relevant papers found against papers screened across all its
// iterations, drawn as SVG from its mark events. Like the PRISMA diagram
// it is served inline with a file name (the page shows it as an image, a
// download link saves it) and a policy that keeps an SVG opened on its
// own from running anything. It reads the run through the page's cache,
// which holds the run's marks in order.
func (h *Runs) ProgressSVG(c echo.Context) error {
	e, err := h.cache.get(c.Request().Context(), h.runs, c.Param("id"))
	if err != nil {
		return err
	}
	run := e.run
	if run.Workflow != pipeline.Name {
		return fault.Errorf(fault.EInvalid, "run %s is a %q run, not a %q run: only a search run screens papers", run.ID, run.Workflow, pipeline.Name)
	}
	var buf bytes.Buffer
	if err := progress.Of(e.events).WriteSVG(&buf, run.Params.String(pipeline.ParamQuestion)); err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentDisposition, mime.FormatMediaType("inline", map[string]string{"filename": "quarry-run-" + run.ID + "-progress.svg"}))
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	hdr.Set(echo.HeaderCacheControl, "no-cache") // it changes with every mark
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", buf.Bytes())
}

// marksSavedTrigger is the htmx event a saved mark's answer triggers
// (HX-Trigger), on which the review's progress panel fetches itself anew
// (views.ProgressPanel).
const marksSavedTrigger = "marks-saved"

// showsProgress reports whether the run's page shows its screening
// progress: a search run at a review or finished.
func showsProgress(run engine.Run, review bool) bool {
	return run.Workflow == pipeline.Name && (review || run.IsComplete())
}

// progressOf is the run page's progress panel from the run's mark events:
// the plot's numbers and text alternative, and the two stopping
// suggestions (window is k of "no relevant paper in the last k screened";
// 0 is its default). The events' count versions the plot's address, so a
// browser fetches it anew once marks change.
func screeningOf(runID string, events []research.Mark, window int) *views.Screening {
	plot := progress.Of(events)
	last := plot.Last()
	return &views.Screening{
		RunID: runID, Version: len(events), Screened: last.Screened, Relevant: last.Relevant,
		Summary: plot.Summary(), Description: plot.Description(),
		Suggestions: []research.Suggestion{plot.Knee.Suggestion(), research.WindowOf(plot.Curve, window)},
	}
}
