package handlers

// What the three checkpoint forms (decide_strategy.go, decide_review.go,
// decide_escalation.go) share: finding the checkpoint a form decides, and
// the conflict page when someone else decided it first.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/views"
)

// pendingCheckpoint loads the run and the checkpoint named in the URL. A
// checkpoint that is no longer pending is a conflict naming who decided.
func (h *Runs) pendingCheckpoint(c echo.Context, kind engine.CheckpointKind) (engine.Run, engine.Checkpoint, error) {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return run, engine.Checkpoint{}, err
	}
	cps, err := h.runs.Checkpoints(ctx, run.ID)
	if err != nil {
		return run, engine.Checkpoint{}, err
	}
	for _, cd := range cps {
		if cd.Checkpoint.ID != c.Param("cp") {
			continue
		}
		if cd.Checkpoint.Kind != kind {
			return run, cd.Checkpoint, fault.Errorf(fault.EInvalid, "checkpoint %s is a %s, not a %s", cd.Checkpoint.ID, cd.Checkpoint.Kind, kind)
		}
		if cd.Decision != nil {
			return run, cd.Checkpoint, engine.ConflictDecided(*cd.Decision)
		}
		if cd.Checkpoint.Status != engine.CheckpointPending {
			return run, cd.Checkpoint, fault.Errorf(fault.EConflict, "this checkpoint is %s; the run has moved on", cd.Checkpoint.Status)
		}
		return run, cd.Checkpoint, nil
	}
	return run, engine.Checkpoint{}, fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", run.ID, c.Param("cp"))
}

// conflictPage re-renders the run's current state with the conflict
// message (409), so the person sees who decided and what happens now. Any
// other error (or nil) is returned as is, so a decision handler hands it
// every error of finding the pending checkpoint.
func (h *Runs) conflictPage(c echo.Context, runID string, cause error) error {
	return h.conflictPageWith(c, runID, cause, nil)
}

// conflictPageWith is conflictPage that also shows what a losing review
// submitted (nil: nothing to show), so the person can copy it.
func (h *Runs) conflictPageWith(c echo.Context, runID string, cause error, submitted *views.SubmittedReview) error {
	return h.conflictPageShowing(c, runID, cause, func(d *views.RunData) { d.Submitted = submitted })
}

// conflictPageWithStrategy is conflictPage that also shows the strategy
// form as a losing submit carried it (nil: nothing to show).
func (h *Runs) conflictPageWithStrategy(c echo.Context, runID string, cause error, submitted *views.SubmittedStrategy) error {
	return h.conflictPageShowing(c, runID, cause, func(d *views.RunData) { d.SubmittedStrategy = submitted })
}

// conflictPageShowing renders the conflict page after show has put what
// the losing submit carried into the page's data. An htmx request (a form's
// add/remove/keep buttons, which swap only the form) gets the page's whole
// <main> swapped in instead: the form it targeted may be gone, and the
// conflict and the submitted values must be seen, not nested in the form.
func (h *Runs) conflictPageShowing(c echo.Context, runID string, cause error, show func(*views.RunData)) error {
	if fault.ErrorCode(cause) != fault.EConflict {
		return cause
	}
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, runID)
	if err != nil {
		return err
	}
	d, err := runData(ctx, h.runs, h.engine, run, h.people.page(c), h.settings.stopWindow)
	if err != nil {
		return err
	}
	d.Conflict = fault.ErrorMessage(cause)
	show(&d)
	d = h.settings.apply(d)
	if isHTMX(c) {
		hdr := c.Response().Header()
		hdr.Set("HX-Retarget", "#main")
		hdr.Set("HX-Reselect", "#main")
		hdr.Set("HX-Reswap", "outerHTML show:window:top")
	}
	return render(c, http.StatusConflict, views.RunPage(d))
}
