package handlers

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/runview"
	"quarry/internal/views"
)

// gateFormOf is a workflow file's gate as its form shows it.
func gateFormOf(runID, cpID string, p flow.GatePayload) *views.GateForm {
	f := &views.GateForm{RunID: runID, CheckpointID: cpID, Stage: p.Stage}
	for _, o := range p.Options {
		f.Options = append(f.Options, views.GateOptionView{Label: o.Label, RequiresInput: o.RequiresInput})
		f.TakesInput = f.TakesInput || o.RequiresInput
	}
	keys := make([]string, 0, len(p.Context))
	for k := range p.Context {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, _ := json.Marshal(p.Context[k]) // JSON-decoded values always encode
		f.Context = append(f.Context, views.KeyValue{Key: k, Value: string(b)})
	}
	for _, c := range p.Checks {
		r := "passed"
		switch {
		case c.Error != "":
			r = "could not be evaluated: " + c.Error
		case !c.Passed:
			r = "did not pass"
		}
		f.Checks = append(f.Checks, views.GateCheckView{Condition: c.Condition, Result: r})
	}
	return f
}

// gateTimerOf is what the form of gate checkpoint cpID says of its
// timer: when the gate decides itself or extends (nil: no timer pending).
func gateTimerOf(timers []engine.GateTimer, cpID string) *views.GateTimerView {
	for _, t := range timers {
		if t.CheckpointID == cpID && t.Status == engine.TimerPending {
			return &views.GateTimerView{Due: t.Due, Default: t.Default, Extensions: t.Extensions, MaxExtensions: t.MaxExtensions}
		}
	}
	return nil
}

// gateApprovalOf is the vote count the form of gate checkpoint cpID
// shows, nil when one person decides it.
func gateApprovalOf(gates []runview.GateVotes, cpID string) *views.GateApprovalView {
	for _, g := range gates {
		if g.CheckpointID != cpID {
			continue
		}
		a := &views.GateApprovalView{Count: g.Count, Of: g.Of, Needed: g.Needed, Waiting: g.Waiting, Expected: g.Expected, Passing: g.Options}
		for _, v := range g.Votes {
			if v.Late {
				continue
			}
			a.Votes = append(a.Votes, views.GateVoteView{Voter: v.Voter, Option: v.Option, Input: v.Input, Note: v.Note,
				At: v.VotedAt.UTC().Format("2006-01-02 15:04:05 UTC"), Replaced: v.Replaced})
		}
		return a
	}
	return nil
}

// GateVotes handles GET /runs/:id/checkpoints/:cp/votes: the gate's
// votes fragment, which the form polls; 204 when the checkpoint is not a
// gate several people decide.
func (h *Runs) GateVotes(c echo.Context) error {
	ctx := c.Request().Context()
	runID, cpID := c.Param("id"), c.Param("cp")
	cps, err := h.runs.Checkpoints(ctx, runID)
	if err != nil {
		return err
	}
	votes, err := h.runs.Votes(ctx, runID)
	if err != nil {
		return err
	}
	in := make([]runview.Checkpoint, len(cps))
	for i, cd := range cps {
		in[i] = runview.Checkpoint(cd)
	}
	gates, err := runview.GateVotesOf(in, votes)
	if err != nil {
		return err
	}
	a := gateApprovalOf(gates, cpID)
	if a == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return render(c, http.StatusOK, views.GateVotes(runID, cpID, *a))
}

// DecideGate handles POST /runs/:id/checkpoints/:cp/gate: the person picks
// one of a workflow file's gate options (option, with input when it needs
// some). A choice the gate refuses redraws the page with why (422), the
// input kept; a checkpoint decided meanwhile shows who did.
func (h *Runs) DecideGate(c echo.Context) error {
	run, cp, err := h.pendingCheckpoint(c, flow.KindGate)
	if err != nil {
		return h.conflictPage(c, run.ID, err)
	}
	input := c.FormValue("input")
	d := flow.Choose(strings.TrimSpace(c.FormValue("option")), input, h.people.name(c))
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
		if data.Gate != nil {
			data.Gate.Error, data.Gate.Input = fault.ErrorMessage(err), input
		}
		return render(c, http.StatusUnprocessableEntity, views.RunPage(data))
	}
	return err
}
