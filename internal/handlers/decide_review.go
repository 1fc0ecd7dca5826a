package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/views"
)

// markPrefix names the per-paper radio groups: "mark:<paper id>".
const markPrefix = "mark:"

// reviewFormOf fills the review form from a checkpoint's payload.
func reviewFormOf(runID string, cp engine.Checkpoint, p skills.ResultPayload) views.ReviewForm {
	it := p.Iteration
	if it == 0 {
		it = cp.Iteration
	}
	return views.ReviewForm{
		RunID: runID, CheckpointID: cp.ID, Iteration: it, Groups: groupsOf(p.Collection),
		Sources: p.Collection.Sources, Marks: map[string]string{}, Accumulated: p.AccumulatedPapers,
	}
}

// feedbackOf turns the marks into the UserFeedback the engine expects, in
// the order the papers are shown so the result is stable.
func feedbackOf(p skills.ResultPayload, form url.Values) (skills.UserFeedback, map[string]string) {
	fb := skills.UserFeedback{MarkedRelevant: []string{}, MarkedIrrelevant: []string{}, FreeTextFeedback: strings.TrimSpace(form.Get("free_text_feedback"))}
	marks := map[string]string{}
	for k, vs := range form {
		if id, ok := strings.CutPrefix(k, markPrefix); ok && len(vs) > 0 {
			marks[id] = vs[0]
		}
	}
	seen := map[string]bool{}
	for _, paper := range p.Collection.Papers {
		seen[paper.ID] = true
		switch marks[paper.ID] {
		case views.MarkRelevant:
			fb.MarkedRelevant = append(fb.MarkedRelevant, paper.ID)
		case views.MarkIrrelevant:
			fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, paper.ID)
		}
	}
	// Marks for papers not in the collection go through so that
	// ValidateAgainst reports them instead of them vanishing silently.
	for id, m := range marks {
		if seen[id] {
			continue
		}
		switch m {
		case views.MarkRelevant:
			fb.MarkedRelevant = append(fb.MarkedRelevant, id)
		case views.MarkIrrelevant:
			fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, id)
		}
	}
	return fb, marks
}

// DecideReview handles POST /runs/:id/checkpoints/:cp/review: approve
// (finish), edit (iterate with this feedback) or reject, with the marks as
// UserFeedback. Invalid marks re-render the form with the marks kept (422);
// a checkpoint decided meanwhile shows the new state and who decided (409).
func (h *Runs) DecideReview(c echo.Context) error {
	run, cp, err := h.pendingCheckpoint(c, engine.KindResultReview)
	if engine.ErrorCode(err) == engine.EConflict {
		return h.conflictPage(c, run.ID, err)
	}
	if err != nil {
		return err
	}
	p, err := engine.PayloadAs[skills.ResultPayload](cp)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return engine.Errorf(engine.EInvalid, "unreadable form: %v", err)
	}
	fb, marks := feedbackOf(p, form)
	f := reviewFormOf(run.ID, cp, p)
	f.Marks, f.Feedback = marks, form.Get("free_text_feedback")
	d := engine.Decision{Action: engine.DecisionAction(form.Get("action")), DecidedBy: h.people.name(c)}
	if err := fb.ValidateAgainst(p.Collection); err != nil {
		f.Errors = engine.ErrorFields(err)
		return h.renderReview(c, run, http.StatusUnprocessableEntity, f)
	}
	if d.RevisedData, err = json.Marshal(fb); err != nil {
		return err
	}
	err = h.engine.Decide(c.Request().Context(), run.ID, cp.ID, d)
	switch engine.ErrorCode(err) {
	case "":
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case engine.EConflict:
		return h.conflictPage(c, run.ID, err)
	case engine.EInvalid:
		f.Errors = engine.ErrorFields(err)
		if len(f.Errors) == 0 {
			f.Errors = map[string]string{"decision": engine.ErrorMessage(err)}
		}
		return h.renderReview(c, run, http.StatusUnprocessableEntity, f)
	}
	return err
}

func (h *Runs) renderReview(c echo.Context, run engine.Run, status int, f views.ReviewForm) error {
	d, err := runData(c.Request().Context(), h.runs, h.engine, run, h.people.page(c))
	if err != nil {
		return err
	}
	d.Review = &f
	return render(c, status, views.RunPage(d))
}
