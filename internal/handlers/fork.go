package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// ForkInput is the body of POST /api/runs/:id/fork.
type ForkInput struct {
	CheckpointID string `json:"checkpoint_id"`
	ForkedBy     string `json:"forked_by,omitempty"`
}

// ForkCreated is its answer: the new run and where it came from.
type ForkCreated struct {
	RunCreated
	ForkedFrom engine.ForkOrigin `json:"forked_from"`
}

// Fork handles POST /api/runs/:id/fork → 201: a new run from the run's
// past checkpoint, with the state as it was there (engine.Fork); 404 for
// a checkpoint of another run, 409 for one raised before states were kept.
func (a *API) Fork(c echo.Context) error {
	var in ForkInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	cp := strings.TrimSpace(in.CheckpointID)
	if cp == "" {
		return &fault.Error{Code: fault.EInvalid, Message: "invalid fork", Fields: map[string]string{"checkpoint_id": "is required: the checkpoint to start again from"}}
	}
	by := strings.TrimSpace(in.ForkedBy)
	if by == "" {
		by = "api"
	}
	run, err := a.engine.Fork(c.Request().Context(), c.Param("id"), cp, by)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, ForkCreated{RunCreated: RunCreated{ID: run.ID, URL: "/runs/" + run.ID, Status: string(run.Status)},
		ForkedFrom: engine.ForkOrigin{Run: c.Param("id"), Checkpoint: cp, By: by}})
}

// Fork handles the run page's "Fork from here" (POST /runs/:id/fork):
// the fork is started and its page shown.
func (h *Runs) Fork(c echo.Context) error {
	cp := strings.TrimSpace(c.FormValue("checkpoint_id"))
	if cp == "" {
		return fault.Errorf(fault.EInvalid, "say which checkpoint to fork from")
	}
	ctx := c.Request().Context()
	run, err := h.engine.Fork(ctx, c.Param("id"), cp, h.people.name(c))
	if err != nil {
		return err
	}
	settle(ctx, h.engine, h.runs, run.ID, h.done)
	return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
}
