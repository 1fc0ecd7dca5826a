package handlers

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// DecideClarify handles POST /runs/:id/checkpoints/:cp/clarify: the
// answers to the clarifying questions (a radio group "answer:<id>" per
// question, its "Other" with the text "other:<id>"), applied to the
// intent before the strategy is built (action approve), or the questions
// skipped (action reject). An answer the gate refuses redraws the form
// with the answers kept and the error by its question (422); a
// checkpoint decided meanwhile shows who decided (409).
func (h *Runs) DecideClarify(c echo.Context) error {
	run, cp, err := h.pendingCheckpoint(c, pipeline.KindClarify)
	if err != nil {
		return h.conflictPage(c, run.ID, err)
	}
	p, err := engine.PayloadAs[pipeline.ClarifyPayload](cp)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return fault.Errorf(fault.EInvalid, "unreadable form: %v", err)
	}
	f := views.ClarifyForm{RunID: run.ID, CheckpointID: cp.ID, Question: p.Question, Questions: p.Questions,
		Answers: map[string]string{}, Other: map[string]string{}}
	answers := research.ClarifyAnswers{}
	for _, q := range p.Questions {
		a := strings.TrimSpace(form.Get("answer:" + q.ID))
		f.Answers[q.ID], f.Other[q.ID] = a, form.Get("other:"+q.ID)
		if a == views.ClarifyOther {
			a = strings.TrimSpace(f.Other[q.ID])
		}
		if a != "" {
			answers[q.ID] = a
		}
	}
	d := engine.Decision{Action: engine.DecisionAction(form.Get("action")), DecidedBy: h.people.name(c)}
	if d.Action == engine.Approve && len(answers) > 0 {
		if d.RevisedData, err = json.Marshal(pipeline.ClarifyDecision{Answers: answers}); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	err = h.engine.Decide(ctx, run.ID, cp.ID, d)
	switch fault.ErrorCode(err) {
	case "":
		settle(ctx, h.engine, h.runs, run.ID, h.done)
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case fault.EConflict:
		return h.conflictPage(c, run.ID, err)
	case fault.EInvalid:
		data, derr := runData(ctx, h.runs, h.engine, run, h.people.page(c), h.settings.stopWindow)
		if derr != nil {
			return derr
		}
		f.Errors = map[string]string{}
		for k, v := range fault.ErrorFields(err) {
			if !strings.HasPrefix(k, "answers.") { // no input of its own: shown under the questions
				k = "answers"
			}
			f.Errors[k] = v
		}
		if len(f.Errors) == 0 {
			f.Errors["answers"] = fault.ErrorMessage(err)
		}
		data.Clarify = &f
		return render(c, http.StatusUnprocessableEntity, views.RunPage(data))
	}
	return err
}
