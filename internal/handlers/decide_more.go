package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/fault"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
)

// ShowMoreInput is the optional body of POST
// /api/runs/:id/checkpoints/:cp/more: who asks (default "api").
type ShowMoreInput struct {
	RequestedBy string `json:"requested_by"`
}

// ShowMoreJSON answers POST /api/runs/:id/checkpoints/:cp/more: the
// review whose next page is being fetched. GET /api/runs/:id shows the
// new review (a new checkpoint) once the run waits again.
type ShowMoreJSON struct {
	Status       string `json:"status"`
	RunID        string `json:"run_id"`
	CheckpointID string `json:"checkpoint_id"`
}

// ShowMore handles POST /runs/:id/checkpoints/:cp/more, the review's
// "Show more" button: it saves the marks and notes the review form
// carries (without JavaScript they are saved here), keeps the feedback
// typed so far with the request (the review that comes back shows it
// again), then asks the run for
// the next page of the results (pipeline.ShowMoreDecision) and goes to
// the run's page, which shows the review again with the new papers when
// they are in. A second click while the first is fetching lands on the
// run's page as the first did; a review with nothing more comes back with
// the reason (422).
func (h *Runs) ShowMore(c echo.Context) error {
	ctx := c.Request().Context()
	run, cp, err := h.pendingCheckpoint(c, pipeline.KindResultReview)
	if fault.ErrorCode(err) == fault.EConflict && askedForMore(ctx, h.runs, run.ID, c.Param("cp")) {
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	}
	if err != nil {
		return h.conflictPage(c, run.ID, err)
	}
	p, form, err := reviewSubmit(c, cp)
	if err != nil {
		return err
	}
	by := h.people.name(c)
	if _, marks, _ := feedbackOf(p, form, nil); len(badMarks(p, marks)) == 0 {
		if _, err := saveFormMarks(ctx, h.runs, h.engine, run, cp, p, form, by); err != nil && fault.ErrorCode(err) != fault.EInvalid {
			return h.conflictPage(c, run.ID, err)
		}
	}
	err = h.engine.Decide(ctx, run.ID, cp.ID, pipeline.ShowMoreDecision(by, form.Get("free_text_feedback")))
	switch {
	case err == nil:
		settle(ctx, h.engine, h.runs, run.ID, h.done)
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case fault.ErrorCode(err) == fault.EConflict && askedForMore(ctx, h.runs, run.ID, cp.ID):
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case fault.ErrorCode(err) == fault.EInvalid:
		prev, perr := paperNotesOf(run)
		if perr != nil {
			return perr
		}
		_, marks, notes := feedbackOf(p, form, prev)
		f := reviewFormOf(run.ID, cp, p, notes)
		f.Marks, f.Feedback, f.Reasons = marks, form.Get("free_text_feedback"), formReasons(form)
		f.Errors = fault.ErrorFields(err)
		if len(f.Errors) == 0 {
			f.Errors = map[string]string{"show_more": fault.ErrorMessage(err)}
		}
		return h.renderReview(c, run, http.StatusUnprocessableEntity, f)
	}
	return h.conflictPage(c, run.ID, err)
}

// ShowMore handles POST /api/runs/:id/checkpoints/:cp/more: fetch the
// next page of the review's results → 202 with the review asked. Unknown
// run or checkpoint → 404; a checkpoint that is not the run's pending
// review → 409; a review whose sources have nothing more → 422
// (show_more). Asking again while the page is fetched (two clicks, a
// retried request) is the same request: 202, one page fetched.
func (a *API) ShowMore(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := a.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	var in ShowMoreInput
	if c.Request().ContentLength != 0 {
		if err := decodeJSON(c, &in); err != nil {
			return err
		}
	}
	by := strings.TrimSpace(in.RequestedBy)
	if by == "" {
		by = "api"
	}
	cpID := c.Param("cp")
	answer := ShowMoreJSON{Status: "accepted", RunID: run.ID, CheckpointID: cpID}
	cps, err := a.runs.Checkpoints(ctx, run.ID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(cps, func(cd store.CheckpointDecision) bool { return cd.Checkpoint.ID == cpID })
	switch {
	case i < 0:
		return fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", run.ID, cpID)
	case cps[i].Checkpoint.Kind != pipeline.KindResultReview:
		return fault.Errorf(fault.EConflict, "checkpoint %s is a %s, not a review: only a review shows more", cpID, cps[i].Checkpoint.Kind)
	}
	err = a.engine.Decide(ctx, run.ID, cpID, pipeline.ShowMoreDecision(by, ""))
	if fault.ErrorCode(err) == fault.EConflict && askedForMore(ctx, a.runs, run.ID, cpID) {
		err = nil
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, answer)
}

// draftBefore is the feedback typed at the review of iteration it when
// "Show more" was asked, so the review that came back shows it again:
// the draft of the iteration's last decision, if that was a show-more.
func draftBefore(ds []runview.Decision, it int) string {
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		if d.Iteration != it || d.Kind != pipeline.KindResultReview {
			continue
		}
		if d.ShowMore {
			return d.Draft
		}
		return ""
	}
	return ""
}

// askedForMore reports whether checkpoint cpID of the run was decided by
// a request for its next page, so a second request for it (a double
// click, a retry) is answered as the first was rather than as a conflict.
func askedForMore(ctx context.Context, runs RunStore, runID, cpID string) bool {
	if runID == "" {
		return false
	}
	cps, err := runs.Checkpoints(ctx, runID)
	if err != nil {
		return false
	}
	for _, cd := range cps {
		if cd.Checkpoint.ID == cpID && cd.Decision != nil {
			return pipeline.IsShowMore(cd.Decision.Decision)
		}
	}
	return false
}
