package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

// WorkflowStartInput is POST /api/workflows/:name/runs: the run's params
// and, to start somewhere other than the first stage, the stage (From)
// with the context keys and stage outputs the stages from there read
// (Context: key → value; Outputs: stage → name → value).
type WorkflowStartInput struct {
	Params    map[string]any            `json:"params"`
	From      string                    `json:"from"`
	Context   map[string]any            `json:"context"`
	Outputs   map[string]map[string]any `json:"outputs"`
	StartedBy string                    `json:"started_by"`
}

// StartWorkflow handles POST /api/workflows/:name/runs → 201 {id, url,
// status}. Without from, context or outputs it is POST /api/runs with a
// workflow; with them the run starts at that stage (engine.StartAt): an
// unknown stage, a value the stages from there need and were not given
// (each named in fields), or a workflow that cannot start past its
// first stage (written in Go, or with native steps: the search) is 422.
func (a *API) StartWorkflow(c echo.Context) error {
	var in WorkflowStartInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	name := c.Param("name")
	from := strings.TrimSpace(in.From)
	if from == "" && len(in.Context) == 0 && len(in.Outputs) == 0 {
		by, err := author(c, "started_by", in.StartedBy)
		if err != nil {
			return err
		}
		run, err := a.engine.StartAs(ctx, engine.Starter{Project: projectOf(c), By: by}, name, in.Params)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, RunCreated{ID: run.ID, URL: "/runs/" + run.ID, Status: string(run.Status)})
	}
	wf, err := a.engine.Registry().Get(name)
	if err != nil {
		return err
	}
	if from == "" {
		from = wf.Entry
	}
	given, err := flow.StartState(in.Context, in.Outputs)
	if err != nil {
		return err
	}
	by, err := author(c, "started_by", in.StartedBy)
	if err != nil {
		return err
	}
	run, err := a.engine.StartAtAs(ctx, engine.Starter{Project: projectOf(c), By: by}, name, in.Params, from, given)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, RunCreated{ID: run.ID, URL: "/runs/" + run.ID, Status: string(run.Status)})
}
