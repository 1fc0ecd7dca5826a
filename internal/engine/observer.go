package engine

// Observer is told what the engine did, after it is committed, so an
// operator can count it (internal/metrics implements it). The engine knows
// nothing of how it is counted: it only calls these methods.
//
// Methods are called synchronously on the goroutine advancing the run (or
// recording the decision), possibly from several at once: they must be
// quick and safe for concurrent use. Unlike the Broker, an Observer never
// misses an event, so counters built on it are exact.
type Observer interface {
	// StepDone is called for every committed step record: a handler's
	// attempt (outcome ok, skip, error, escalated, ...), a gate's visit
	// (checkpoint, or the outcome a programmatic decision chose) and the
	// resumption of a decided checkpoint.
	StepDone(workflow string, rec StepRecord)
	// Decided is called for every recorded decision, whether a person's
	// (Engine.Decide) or a programmatic handler's.
	Decided(workflow string, kind CheckpointKind, action DecisionAction)
	// Progress is called with every progress event a step reports
	// (StepContext.Progress); ev.Data is whatever the step attached.
	Progress(workflow string, ev Event)
}

// observeCommit reports what a successful commit recorded.
func (e *Engine) observeCommit(c Commit) {
	o := e.cfg.Observer
	if o == nil {
		return
	}
	if c.Step != nil {
		o.StepDone(c.Run.Workflow, *c.Step)
	}
	if c.Decision != nil && c.NewCheckpoint != nil {
		o.Decided(c.Run.Workflow, c.NewCheckpoint.Kind, c.Decision.Action)
	}
}
