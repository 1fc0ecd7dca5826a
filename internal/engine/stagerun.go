package engine

// Stage run statuses as the audit trail stores them (step_runs.status):
// what the attempt or transition a StepRecord describes left the stage in.
// Running and pending are not written per step (that would double the
// commits); a page derives them from the run's current step.
const (
	// StageCanceled is a stage the run was aborted or canceled at.
	StageCanceled = "canceled"
)

// Status is the stage run status the record leaves its stage in, derived
// from its outcome and error: completed, failed (an attempt that failed,
// retried or not, an escalation, a failed run), skipped, waiting (at a
// checkpoint or on a timer), pending (a person chose to retry it after an
// escalation) or canceled. Migration 00013 derives the same for records
// written before the column existed; keep the two in step.
func (r StepRecord) Status() string {
	switch {
	case r.Outcome == "waiting" || r.Outcome == "checkpoint":
		return StageWaiting
	case r.Outcome == "retry":
		return StagePending
	case r.Outcome == "aborted" || r.Outcome == "canceled":
		return StageCanceled
	case r.Error != "" || r.Outcome == "error" || r.Outcome == "failed" || r.Outcome == "escalated" || r.Outcome == string(Fail):
		return StageFailed
	case r.Outcome == string(Skip) || string(r.Output) == gateSkippedOutput:
		return StageSkipped
	}
	return StageCompleted
}
