package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"quarry/internal/fault"
)

// StartOrigin records that a run was started at a stage of its workflow
// with part of its state given (Engine.StartAt), shown on its page.
type StartOrigin struct {
	Stage string `json:"stage"`
	// Given are the state keys the starter gave (context.<key>,
	// outputs.<stage>), sorted.
	Given []string `json:"given,omitempty"`
	By    string   `json:"by,omitempty"`
}

// startStore is the persistence StartAt needs: a run created with where
// it started.
type startStore interface {
	CreateRunAt(ctx context.Context, r Run, from StartOrigin) error
}

// StartAt starts a run of workflow at step, its state the workflow's
// initial state with given merged over it, after the workflow's
// CheckStart has said the step may start so (what the stages from there
// read is given). A step the workflow does not have, or a workflow
// without CheckStart (written in Go) started anywhere but its entry, is
// fault.EInvalid on the field "from"; the run records where it started.
func (e *Engine) StartAt(ctx context.Context, workflow string, input map[string]any, step string, given State, by string) (Run, error) {
	return e.StartAtAs(ctx, Starter{By: by}, workflow, input, step, given)
}

// StartAtAs is StartAt for a run s starts (s.By is who started it there).
func (e *Engine) StartAtAs(ctx context.Context, s Starter, workflow string, input map[string]any, step string, given State) (Run, error) {
	by := s.By
	ss, ok := e.cfg.Store.(startStore)
	if !ok {
		return Run{}, errors.New("engine: this store cannot start runs at a stage")
	}
	wf, err := e.cfg.Registry.Get(workflow)
	if err != nil {
		return Run{}, err
	}
	if _, ok := wf.Step(step); !ok {
		ids := make([]string, 0, len(wf.Steps))
		for _, s := range wf.Steps {
			ids = append(ids, s.ID)
		}
		return Run{}, fromError(fmt.Sprintf("workflow %s has no stage %q (its stages: %s)", wf.Name, step, strings.Join(ids, ", ")))
	}
	if wf.CheckStart == nil && (step != wf.Entry || len(given) > 0) {
		return Run{}, fromError(fmt.Sprintf("workflow %s is written in Go: it starts only at its first stage %q, with its params", wf.Name, wf.Entry))
	}
	r, err := e.newRun(workflow, input)
	if err != nil {
		return Run{}, err
	}
	if wf.CheckStart != nil {
		if err := wf.CheckStart(step, given); err != nil {
			return Run{}, err
		}
	}
	r.Step, r.State, r.Project, r.StartedBy = step, r.State.merge(given), s.Project, s.By
	keys := make([]string, 0, len(given))
	for k := range given {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if err := ss.CreateRunAt(ctx, r, StartOrigin{Stage: step, Given: keys, By: by}); err != nil {
		return Run{}, err
	}
	e.started(ctx, r)
	return r, nil
}

func fromError(msg string) error {
	return &fault.Error{Code: fault.EInvalid, Message: msg, Fields: map[string]string{"from": msg}}
}
