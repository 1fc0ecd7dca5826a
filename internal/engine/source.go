package engine

import "context"

// Source is the text a workflow was compiled from (a definition file), kept
// by its content hash so a run can be finished by the version it started
// with after the file is edited or removed. Workflows written in Go have
// none.
type Source struct {
	// Hash is the SHA-256 of Text (hex): the key the text is stored under
	// and the hash the run's definition stamp names.
	Hash    string
	Name    string
	Version int
	File    string
	Text    string
}

// Resolver finds the workflow a run runs. A definition file may change
// while its runs wait; the resolver returns the version the run started
// with (see Config.Resolve).
type Resolver func(ctx context.Context, run Run) (*Workflow, error)

// Workflow returns the workflow run advances by: Config.Resolve's answer
// when set, else the registered workflow of the run's name. Pages that
// draw a run's stages use it too, so they show the version it runs.
func (e *Engine) Workflow(ctx context.Context, run Run) (*Workflow, error) {
	if e.cfg.Resolve != nil {
		return e.cfg.Resolve(ctx, run)
	}
	return e.cfg.Registry.Get(run.Workflow)
}
