package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// MarkRest handles POST /runs/:id/checkpoints/:cp/rest, "mark the rest of
// this page irrelevant": a button of the review form, so the marks on the
// page are saved first (as Enter's "keep" saves them); then every paper
// the page showed (its "mark:" fields) that is not screened yet — no
// mark, or unsure — is marked irrelevant, in one batch of mark events.
// Without confirm=yes it asks first: the page again with the question
// (htmx asks in the browser, hx-confirm, and sends confirm=yes). It
// answers with the list as it was, offering Undo (a redirect to the
// page with ?undo=<the batch's time>).
func (h *Runs) MarkRest(c echo.Context) error {
	run, cp, p, form, err := h.reviewButton(c)
	if err != nil {
		return err
	}
	if form.Get("confirm") != "yes" {
		f := h.postedReview(run, cp, p, form)
		f.List.Confirm = true
		return h.renderReview(c, run, http.StatusOK, f)
	}
	ctx := c.Request().Context()
	current, err := currentMarks(ctx, h.runs, run, h.people.name(c))
	if err != nil {
		return err
	}
	shown := map[string]bool{}
	for k := range form {
		// A paper's mark field, or its drawn baseline when the mark was
		// left as drawn (dropUnchanged removed the field).
		for _, prefix := range []string{markPrefix, wasPrefix} {
			if id, ok := strings.CutPrefix(k, prefix); ok {
				shown[id] = true
			}
		}
	}
	by := h.people.name(c)
	var rest []research.Mark
	for _, paper := range p.Collection.Papers {
		m := current[paper.ID]
		if !shown[paper.ID] || screened(m.Mark) {
			continue
		}
		rest = append(rest, research.Mark{PaperID: paper.ID, Mark: research.MarkIrrelevant, Note: m.Note, By: by})
	}
	q := reviewQueryOf(c.QueryParams()).Values()
	if len(rest) > 0 {
		saved, err := h.runs.SaveMarks(ctx, run.ID, cp.ID, rest)
		if err != nil {
			return err
		}
		publishMarks(h.engine, run.ID, cp.ID, p, saved)
		q.Set("undo", saved[0].At.UTC().Format(time.RFC3339Nano))
	}
	return c.Redirect(http.StatusSeeOther, runListURL(run.ID, q))
}

// UndoRest handles POST /runs/:id/checkpoints/:cp/rest/undo: the papers
// a "mark the rest" batch (undo_at, its time) marked irrelevant, and that
// still hold that mark, are marked unsure again — not screened, as they
// were — keeping their notes. Both batches stay in the mark history. It
// answers with the list (a redirect to the page).
func (h *Runs) UndoRest(c echo.Context) error {
	run, cp, p, form, err := h.reviewButton(c)
	if err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339Nano, form.Get("undo_at"))
	if err != nil {
		return &fault.Error{Code: fault.EInvalid, Message: "nothing to undo", Fields: map[string]string{"undo_at": "not the time of a batch of marks"}}
	}
	ctx := c.Request().Context()
	by := h.people.name(c)
	marks, err := marksAs(ctx, h.runs, run, by)
	if err != nil {
		return err
	}
	var back []research.Mark
	for _, m := range batchOf(marks, at) {
		if _, ok := p.Collection.Paper(m.PaperID); ok {
			back = append(back, research.Mark{PaperID: m.PaperID, Mark: research.MarkUnsure, Note: m.Note, By: by})
		}
	}
	if len(back) > 0 {
		saved, err := h.runs.SaveMarks(ctx, run.ID, cp.ID, back)
		if err != nil {
			return err
		}
		publishMarks(h.engine, run.ID, cp.ID, p, saved)
	}
	return c.Redirect(http.StatusSeeOther, runListURL(run.ID, reviewQueryOf(c.QueryParams()).Values()))
}

// reviewButton reads a request from a button of the review form other
// than a decision: the run waiting at the review, its papers and the
// form. Without JavaScript it saves the form's marks, notes and reasons
// first, as the per-click saves would have; through htmx those saves were
// made, and the form's copy of a mark someone changed since is stale.
func (h *Runs) reviewButton(c echo.Context) (engine.Run, engine.Checkpoint, pipeline.ResultPayload, url.Values, error) {
	run, cp, err := h.pendingCheckpoint(c, pipeline.KindResultReview)
	if err != nil {
		return run, cp, pipeline.ResultPayload{}, nil, err
	}
	p, form, err := reviewSubmit(c, cp)
	if err != nil || c.Request().Header.Get("HX-Request") == "true" {
		return run, cp, p, form, err
	}
	if _, err := saveFormMarks(c.Request().Context(), h.runs, h.engine, run, cp, p, form, h.people.name(c)); err != nil {
		return run, cp, p, nil, err
	}
	return run, cp, p, form, nil
}

// postedReview is the review form as posted, for the page that answers.
func (h *Runs) postedReview(run engine.Run, cp engine.Checkpoint, p pipeline.ResultPayload, form url.Values) views.ReviewForm {
	_, marks, notes := feedbackOf(p, form, nil)
	f := reviewFormOf(run.ID, cp, p, notes)
	f.Marks, f.Feedback, f.Reasons = marks, form.Get("free_text_feedback"), formReasons(form)
	return f
}

// batchOf are the current marks a "mark the rest" stored at at: still
// irrelevant, and not marked since.
func batchOf(marks []research.Mark, at time.Time) []research.Mark {
	var out []research.Mark
	for _, m := range marks {
		if m.At.Equal(at) && m.Mark == research.MarkIrrelevant {
			out = append(out, m)
		}
	}
	return out
}

// restUndo is the Undo a page offers for the batch named by undo (the
// page's ?undo=), while some of its papers still hold its mark.
func restUndo(marks []research.Mark, undo string) *views.RestUndo {
	if undo == "" {
		return nil
	}
	at, err := time.Parse(time.RFC3339Nano, undo)
	if err != nil {
		return nil
	}
	if n := len(batchOf(marks, at)); n > 0 {
		return &views.RestUndo{At: undo, Count: n}
	}
	return nil
}

// runListURL is the run's page with the review list's query q.
func runListURL(runID string, q url.Values) string {
	if s := q.Encode(); s != "" {
		return "/runs/" + url.PathEscape(runID) + "?" + s
	}
	return "/runs/" + url.PathEscape(runID)
}
