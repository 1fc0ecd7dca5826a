package pipeline

import (
	"context"
	"errors"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// ErrWaiting is wrapped by the error SearchWorkflow.Run returns when a
// checkpoint is left for a person: the run is intact and resumes once
// someone decides (errors.Is(err, ErrWaiting) tells it apart from failure).
var ErrWaiting = errors.New("pipeline: the run is waiting at a checkpoint")

// SearchWorkflow is the search pipeline with its checkpoint handler, for
// running a search in-process (tools, tests, the CLI) rather than through
// the web app's job queue.
type SearchWorkflow struct {
	wf                       *engine.Workflow
	handler                  engine.CheckpointHandler
	maxIterations            int
	enableStrategyCheckpoint bool
}

// NewSearchWorkflow builds the workflow over sk. handler may be nil: then
// every gate takes its automatic outcome and one iteration runs.
func NewSearchWorkflow(sk Skills, handler engine.CheckpointHandler, maxIterations int, enableStrategyCheckpoint bool) (*SearchWorkflow, error) {
	if maxIterations == 0 {
		maxIterations = DefaultMaxIterations
	}
	wf, err := New(sk, Options{MaxIterations: maxIterations, EnableStrategyCheckpoint: &enableStrategyCheckpoint})
	if err != nil {
		return nil, err
	}
	if handler != nil {
		handler = ReviewCoercer(handler)
	}
	return &SearchWorkflow{wf: wf, handler: handler, maxIterations: maxIterations, enableStrategyCheckpoint: enableStrategyCheckpoint}, nil
}

// ReviewCoercer wraps an in-process checkpoint handler (NewSearchWorkflow
// does it): it passes decisions through, except that at the result review
// revised data that is not valid feedback on the papers shown — not
// feedback at all (an unknown key, a value of the wrong type), or marks
// naming papers outside the collection (or one paper both ways) — is
// dropped, so the decision is coerced to its note (CoerceFeedback) instead
// of failing the review gate's validation. A person or script submitting
// through the web app or the API gets those errors back (422) to fix; an
// in-process handler has nobody to show them to, and the run would stop
// at an escalation.
func ReviewCoercer(h engine.CheckpointHandler) engine.CheckpointHandler { return reviewCoercer{h} }

type reviewCoercer struct{ inner engine.CheckpointHandler }

// Handle implements engine.CheckpointHandler.
func (h reviewCoercer) Handle(ctx context.Context, cp engine.Checkpoint) (engine.Decision, error) {
	d, err := h.inner.Handle(ctx, cp)
	if err != nil || cp.Kind != KindResultReview {
		return d, err
	}
	p, perr := engine.PayloadAs[ResultPayload](cp)
	if _, _, ferr := reviewFeedback(d.RevisedData, p.Collection); perr == nil && ferr != nil {
		d.RevisedData = nil
	}
	return d, nil
}

// Workflow returns the engine definition, for registering with the app's
// engine.
func (w *SearchWorkflow) Workflow() *engine.Workflow { return w.wf }

// Handler returns the checkpoint handler the workflow was built with (nil
// when gates take their automatic outcome).
func (w *SearchWorkflow) Handler() engine.CheckpointHandler { return w.handler }

// Run searches for question: it starts a run on st and advances it
// in-process until it rests. A completed run returns its final collection
// and loop state; a run left at a checkpoint returns an error wrapping
// ErrWaiting that names the run, so it can be decided and resumed later.
func (w *SearchWorkflow) Run(ctx context.Context, st engine.Store, question string) (research.PaperCollection, research.WorkflowState, error) {
	reg, err := engine.NewRegistry(w.wf)
	if err != nil {
		return research.PaperCollection{}, research.WorkflowState{}, err
	}
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: w.handler})
	if err != nil {
		return research.PaperCollection{}, research.WorkflowState{}, err
	}
	run, err := eng.Start(ctx, Name, map[string]any{
		ParamQuestion:           question,
		ParamMaxIterations:      w.maxIterations,
		ParamStrategyCheckpoint: w.enableStrategyCheckpoint,
	})
	if err != nil {
		return research.PaperCollection{}, research.WorkflowState{}, err
	}
	if err := eng.Advance(ctx, run.ID); err != nil {
		return research.PaperCollection{}, research.WorkflowState{}, err
	}
	if run, err = st.Run(ctx, run.ID); err != nil {
		return research.PaperCollection{}, research.WorkflowState{}, err
	}
	rs, err := StateOf(run)
	if err != nil {
		return research.PaperCollection{}, research.WorkflowState{}, err
	}
	switch run.Status {
	case engine.StatusCompleted:
		if rs.Final == nil {
			return research.PaperCollection{}, rs.Workflow, fault.Errorf(fault.EInternal, "run %s completed without a final collection", run.ID)
		}
		return *rs.Final, rs.Workflow, nil
	case engine.StatusWaiting:
		return research.PaperCollection{}, rs.Workflow, &fault.Error{Code: fault.EConflict, Err: ErrWaiting,
			Message: "run " + run.ID + " is waiting for a decision at step " + run.Step + " (checkpoint " + run.CheckpointID + ")"}
	case engine.StatusEscalated:
		return research.PaperCollection{}, rs.Workflow, fault.Errorf(fault.EInternal,
			"run %s stopped at step %s and needs a person to retry, skip or abort it: %s", run.ID, run.Step, run.Error)
	default:
		return research.PaperCollection{}, rs.Workflow, fault.Errorf(fault.EInternal, "run %s ended %s: %s", run.ID, run.Status, run.Error)
	}
}
