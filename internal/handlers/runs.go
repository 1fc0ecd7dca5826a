package handlers

import (
	"context"

	"quarry/internal/biblio/codecs"
	"quarry/internal/engine"
	"quarry/internal/report/wfgraph"
	"quarry/internal/research"
	"quarry/internal/runview"
	"quarry/internal/store"
)

// RunStore is what the run pages read; *store.Store implements it.
type RunStore interface {
	Run(ctx context.Context, id string) (engine.Run, error)
	// RunStamp changes whenever what Run, Checkpoints and Marks return
	// for the run does (see runCache).
	RunStamp(ctx context.Context, id string) (store.RunStamp, error)
	Runs(ctx context.Context, ids []string) ([]engine.Run, error)
	Checkpoints(ctx context.Context, runID string) ([]store.CheckpointDecision, error)
	// Checkpoint is one checkpoint and its decision (nil while pending).
	Checkpoint(ctx context.Context, id string) (engine.Checkpoint, *engine.DecisionRecord, error)
	// Marks are the run's current screening marks; SaveMarks records new
	// ones while the run waits at the review checkpoint named.
	Marks(ctx context.Context, runID string) ([]research.Mark, error)
	SaveMarks(ctx context.Context, runID, checkpointID string, marks []research.Mark) ([]research.Mark, error)
	// RunLister serves GET /runs (runs_list.go).
	RunLister

	// MarkEvents are all the run's marks in the order they were made, the
	// screening order its progress plot is drawn from.
	MarkEvents(ctx context.Context, runID string) ([]research.Mark, error)
	// StepTrail is the run's audit trail, large outputs left out: its
	// stages and resume context (engine.Progress).
	StepTrail(ctx context.Context, runID string) ([]engine.StepRecord, error)
	// ForkOf is where a run was forked from (nil: not a fork).
	ForkOf(ctx context.Context, runID string) (*engine.ForkOrigin, error)
	// StartOf is where a run started at a stage started (nil: at its
	// first stage, the ordinary way).
	StartOf(ctx context.Context, runID string) (*engine.StartOrigin, error)
	// RunParent is the run whose start_workflow stage started this one
	// (nil: none); RunChildren the runs its stages started; RunActions
	// its recorded built-in action attempts.
	RunParent(ctx context.Context, runID string) (*engine.Parent, error)
	RunChildren(ctx context.Context, runID string) ([]engine.ChildLink, error)
	RunActions(ctx context.Context, runID string) ([]engine.ActionRecord, error)
	// RunBranches are the branches of each parallel stage's latest visit.
	RunBranches(ctx context.Context, runID string) ([]engine.Branch, error)
	// GateChecks are every automatic check the run's gates made.
	GateChecks(ctx context.Context, runID string) ([]engine.GateCheck, error)
	// Votes are every vote cast at the run's gates, oldest first.
	Votes(ctx context.Context, runID string) ([]engine.Vote, error)
	// GateTimers and GateNotices are the run's gate timers and their
	// notices (engine.GateTimeout).
	GateTimers(ctx context.Context, runID string) ([]engine.GateTimer, error)
	GateNotices(ctx context.Context, runID string) ([]engine.Notice, error)
}

// RunFileStore keeps files attached to runs; *store.Store implements it.
// RunFilePapers is ENotFound for a file of another run, which is how a
// decision's files are checked (see checkFiles).
type RunFileStore interface {
	AttachRunFile(ctx context.Context, f store.RunFile) (store.RunFile, error)
	RunFilePapers(ctx context.Context, runID, id string) ([]research.RawPaper, error)
}

// Runs serves a run: its page (run_page.go), the status it polls
// (run_status.go), its event stream (run_events.go), its reports
// (run_reports.go) and the three checkpoint forms (decide_*.go).
type Runs struct {
	people *people
	runs   RunStore
	// auth says what the person may do (the conflicts page's resolve
	// forms).
	auth *authenticator
	// files keeps files attached to runs at the strategy checkpoint.
	files  RunFileStore
	engine *engine.Engine
	// cache keeps the decoded run its page shows.
	cache *runCache
	// done ends event streams when the server shuts down.
	done <-chan struct{}
	// read bounds reading a file attached at the strategy checkpoint.
	read codecs.Options
	// settings are what the review offers and suggests (exclusion
	// reasons, the stopping window).
	settings reviewSettings
	// graphs draws a run's workflow with its stages' states (GraphSVG),
	// drawn keeps the definition texts' graphs.
	graphs *wfgraph.Renderer
	drawn  drawnSources
}

// loadView reads run's checkpoints and builds what the run page and the
// JSON API show of it.
func loadView(ctx context.Context, rs RunStore, run engine.Run) (runview.View, error) {
	cps, err := rs.Checkpoints(ctx, run.ID)
	if err != nil {
		return runview.View{}, err
	}
	in := make([]runview.Checkpoint, len(cps))
	for i, cd := range cps {
		in[i] = runview.Checkpoint(cd)
	}
	v, err := runview.Build(run, in)
	if err != nil {
		return v, err
	}
	votes, err := rs.Votes(ctx, run.ID)
	if err != nil {
		return v, err
	}
	if v.Votes, err = runview.GateVotesOf(in, votes); err != nil {
		return v, err
	}
	if v.Timers, err = rs.GateTimers(ctx, run.ID); err != nil {
		return v, err
	}
	v.Notices, err = rs.GateNotices(ctx, run.ID)
	return v, err
}
