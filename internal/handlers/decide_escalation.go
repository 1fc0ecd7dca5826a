package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// DecideEscalation handles POST /runs/:id/checkpoints/:cp/escalation: a
// step failed every attempt and a person chooses retry (approve), skip
// (edit) or abort (reject). A checkpoint decided meanwhile shows who did.
func (h *Runs) DecideEscalation(c echo.Context) error {
	run, cp, err := h.pendingCheckpoint(c, engine.KindEscalation)
	if err != nil {
		return h.conflictPage(c, run.ID, err)
	}
	d := engine.Decision{Action: engine.DecisionAction(c.FormValue("action")), Note: strings.TrimSpace(c.FormValue("note")),
		DecidedBy: h.people.name(c)}
	err = h.engine.Decide(c.Request().Context(), run.ID, cp.ID, d)
	switch fault.ErrorCode(err) {
	case "":
		settle(c.Request().Context(), h.engine, h.runs, run.ID, h.done)
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case fault.EConflict:
		return h.conflictPage(c, run.ID, err)
	}
	return err
}
