package app

import (
	"context"
	"fmt"
	"sync"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
)

// sourceStore reads the definition texts runs were started from.
type sourceStore interface {
	WorkflowSource(ctx context.Context, hash string) (engine.Source, error)
}

// pinned finds the workflow a run advances by (engine.Config.Resolve): a
// run of a definition file runs the text it started with, whatever the
// file says now. The registered workflow serves when its text is the
// run's (by hash); otherwise the run's text is read from the store,
// loaded and compiled with the options the directory's files get, and
// kept by hash. Workflows built into the binary (the search, the
// templates) always run as registered: their text and the Go handlers it
// names ship together, so an old text could name handlers that changed.
type pinned struct {
	reg     *engine.Registry
	files   map[string]string // workflow name → hash, of the directory's files
	sources sourceStore
	load    def.Options
	compile flow.Options

	mu     sync.Mutex
	byHash map[string]*engine.Workflow
}

func newPinned(reg *engine.Registry, files map[string]string, sources sourceStore, load def.Options, compile flow.Options) *pinned {
	return &pinned{reg: reg, files: files, sources: sources, load: load, compile: compile, byHash: map[string]*engine.Workflow{}}
}

func (p *pinned) resolve(ctx context.Context, run engine.Run) (*engine.Workflow, error) {
	registered, regErr := p.reg.Get(run.Workflow)
	if _, file := p.files[run.Workflow]; regErr == nil && !file {
		return registered, nil
	}
	stamp, ok, err := flow.RunStamp(run.State)
	if err != nil {
		return nil, err
	}
	if !ok || (regErr == nil && registered.Source != nil && registered.Source.Hash == stamp.Hash) {
		return registered, regErr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if wf := p.byHash[stamp.Hash]; wf != nil {
		return wf, nil
	}
	src, err := p.sources.WorkflowSource(ctx, stamp.Hash)
	if fault.ErrorCode(err) == fault.ENotFound && regErr == nil {
		// A run started before texts were kept: it can only go on by
		// the file registered now.
		return registered, nil
	}
	if err != nil {
		return nil, err
	}
	d, err := def.Load(src.File, []byte(src.Text), p.load)
	if err != nil {
		return nil, fmt.Errorf("workflow %s version %d (%s), which run %s started with, no longer loads: %w", src.Name, src.Version, src.File, run.ID, err)
	}
	if d.Hash != stamp.Hash {
		return nil, fault.Errorf(fault.EInternal, "workflow source %s is stored with another text (hash %s)", stamp.Hash, d.Hash)
	}
	wf, err := flow.CompileWith(d, p.compile)
	if err != nil {
		return nil, fmt.Errorf("workflow %s version %d (%s), which run %s started with, no longer compiles: %w", src.Name, src.Version, src.File, run.ID, err)
	}
	p.byHash[stamp.Hash] = wf
	return wf, nil
}
