package engine

import (
	"context"
	"errors"

	"quarry/internal/fault"
)

// ForkOrigin is where a forked run came from.
type ForkOrigin struct {
	Run        string `json:"run"`
	Checkpoint string `json:"checkpoint"`
	By         string `json:"by,omitempty"`
}

// forkStore is the persistence forks need: the state kept with each
// checkpoint a person was asked at, and a run created with its origin.
type forkStore interface {
	CheckpointState(ctx context.Context, id string) (State, error)
	CreateFork(ctx context.Context, r Run, from ForkOrigin) error
}

// Fork starts a new run from a past checkpoint of run runID: same
// workflow and params, the state as it was when the checkpoint was
// raised, at the checkpoint's step and iteration, so the person is asked
// there again and may choose otherwise. The original run is untouched;
// the fork records its origin. A checkpoint raised before states were
// kept cannot be forked (fault.EConflict).
func (e *Engine) Fork(ctx context.Context, runID, checkpointID, by string) (Run, error) {
	fs, ok := e.cfg.Store.(forkStore)
	if !ok {
		return Run{}, errors.New("engine: this store cannot fork runs")
	}
	src, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return Run{}, err
	}
	cp, _, err := e.cfg.Store.Checkpoint(ctx, checkpointID)
	if err != nil {
		return Run{}, err
	}
	if cp.RunID != runID {
		return Run{}, fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", runID, checkpointID)
	}
	state, err := fs.CheckpointState(ctx, checkpointID)
	if fault.ErrorCode(err) == fault.ENotFound {
		return Run{}, fault.Errorf(fault.EConflict, "checkpoint %s was raised before forks were possible: its state was not kept", checkpointID)
	}
	if err != nil {
		return Run{}, err
	}
	if _, err := e.Workflow(ctx, src); err != nil {
		return Run{}, err
	}
	now := e.cfg.Now().UTC()
	r := Run{ID: e.cfg.NewID(), Workflow: src.Workflow, Params: src.Params, State: state,
		Step: cp.Step, Status: StatusPending, Iteration: max(cp.Iteration, 1), CreatedAt: now, UpdatedAt: now, Project: src.Project, StartedBy: by}
	if err := fs.CreateFork(ctx, r, ForkOrigin{Run: runID, Checkpoint: checkpointID, By: by}); err != nil {
		return Run{}, err
	}
	e.publish(Event{Type: EventStatus, RunID: r.ID, Status: r.Status})
	e.wake(ctx)
	return r, nil
}
