package engine

import "encoding/json"

// Stage states, as a run's page and API show them.
const (
	StagePending   = "pending"
	StageRunning   = "running"
	StageWaiting   = "waiting"
	StageCompleted = "completed"
	StageFailed    = "failed"
	StageSkipped   = "skipped"
)

// gateSkippedOutput is the output recorded for a gate that was not asked
// (disabled for the run): it passes, and shows as skipped.
const gateSkippedOutput = `{"gate":"skipped"}`

// StageState is one stage of a run in its current iteration.
type StageState struct {
	ID string `json:"id"`
	// Type is "gate" for a step with a gate, else "skill".
	Type  string `json:"type"`
	State string `json:"state"`
	// Attempts are the attempts in the current iteration (a failed one
	// and its retry are two).
	Attempts int `json:"attempts"`
	// MaxAttempts is the stage's bound on attempts (its retry policy).
	MaxAttempts int `json:"max_attempts"`
	// Branches are a parallel stage's; empty for every other stage.
	Branches []BranchState `json:"branches"`
}

// BranchState is one branch of a parallel stage (its latest visit).
type BranchState struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// Attempts counts the failed attempts of the branch's current step.
	Attempts int    `json:"attempts,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ResumeContext says where a run stands, for a person or script picking
// it up: what is done, what runs or waits, what failed and will be tried
// again.
type ResumeContext struct {
	// Completed are the stages completed in the current iteration, in
	// definition order.
	Completed []string `json:"completed_stages"`
	// Current is the stage running, waiting or failed ("" once ended).
	Current string `json:"current_stage,omitempty"`
	// LastOutput is the output of the last stage that produced one.
	LastOutput *StageOutput `json:"last_output,omitempty"`
	// PendingRetry is the current stage's failed attempt that will be
	// tried again (a running run) or that a person must settle (an
	// escalated one).
	PendingRetry *PendingRetry `json:"pending_retry,omitempty"`
	// Parallel is the current parallel stage's branches (nil elsewhere).
	Parallel *ParallelStatus `json:"parallel,omitempty"`
}

// StageOutput is a stage's output: the JSON itself when it is at most
// MaxShownOutput bytes, else only its size.
type StageOutput struct {
	Stage  string          `json:"stage"`
	Bytes  int             `json:"bytes"`
	Output json.RawMessage `json:"output,omitempty"`
}

// MaxShownOutput bounds the output a ResumeContext carries: a search's
// output holds every paper found, which a page or poll must not resend.
const MaxShownOutput = 8 << 10

// PendingRetry is a failed attempt of the current stage.
type PendingRetry struct {
	Stage   string `json:"stage"`
	Error   string `json:"error"`
	Attempt int    `json:"attempt"`
}

// ParallelStatus counts a parallel stage's branches.
type ParallelStatus struct {
	Total     int      `json:"total"`
	Completed int      `json:"completed"`
	Failed    []string `json:"failed"`
}

// Progress lays out run's stages in w's order with their states in the
// run's current iteration, and its ResumeContext, from its audit trail
// (recs, in order; a record's Output may be left out when over
// MaxShownOutput, with OutputSize saying how big it was) and its parallel
// stages' latest branches.
func Progress(w *Workflow, run Run, recs []StepRecord, branches []Branch) ([]StageState, ResumeContext) {
	stages := make([]StageState, 0, len(w.Steps))
	var rc ResumeContext
	last := map[string]StepRecord{}
	attempts := map[string]int{}
	tried := map[string]int{} // the attempt number counted last, by step
	for _, r := range recs {
		if r.Iteration != run.Iteration {
			continue
		}
		last[r.Step] = r
		// When retries run out, the escalation or failure is the record of
		// the last attempt (its Attempt), so it counts, unless an error
		// record of that attempt counted already or the engine wrote it
		// without an attempt (Attempt 0).
		settled := r.Outcome == "escalated" || r.Outcome == "failed"
		if r.Outcome != "checkpoint" && r.Outcome != "canceled" && !(settled && (r.Attempt == 0 || r.Attempt == tried[r.Step])) {
			attempts[r.Step]++
			tried[r.Step] = r.Attempt
		}
	}
	current := ""
	if !run.IsComplete() || run.Status == StatusFailed {
		current = run.Step
	}
	for _, s := range w.Steps {
		st := StageState{ID: s.ID, Type: "skill", State: StagePending, Attempts: attempts[s.ID], Branches: []BranchState{}}
		st.MaxAttempts = s.Retry.attempts()
		if s.Gate != nil {
			st.Type = "gate"
		}
		if s.Fan != nil {
			st.Type = "parallel"
			st.Branches, rc.Parallel = branchStates(s.ID, current, branches, rc.Parallel)
		}
		r, ran := last[s.ID]
		switch {
		case s.ID == current:
			st.State = currentState(run.Status)
		case !ran:
		case r.Outcome == "error" || r.Outcome == "failed" || r.Outcome == "escalated":
			st.State = StageFailed
		case r.Outcome == string(Skip) || string(r.Output) == gateSkippedOutput:
			st.State = StageSkipped
		default:
			st.State = StageCompleted
		}
		if st.State == StageCompleted {
			rc.Completed = append(rc.Completed, s.ID)
		}
		stages = append(stages, st)
	}
	rc.Current = current
	if rc.Completed == nil {
		rc.Completed = []string{}
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Outcome == "error" || (len(r.Output) == 0 && r.OutputSize == 0) {
			continue
		}
		o := &StageOutput{Stage: r.Step, Bytes: max(len(r.Output), r.OutputSize)}
		if len(r.Output) > 0 && len(r.Output) <= MaxShownOutput {
			o.Output = r.Output
		}
		rc.LastOutput = o
		break
	}
	if n := len(recs); n > 0 && current != "" {
		r := recs[n-1]
		retrying := (run.Status == StatusRunning || run.Status == StatusPending) && r.Outcome == "error"
		if r.Step == current && (retrying || run.Status == StatusEscalated) && r.Error != "" {
			rc.PendingRetry = &PendingRetry{Stage: r.Step, Error: r.Error, Attempt: r.Attempt}
		}
	}
	return stages, rc
}

// branchStates lists step's branches and, when step is the current
// stage, counts them for the ResumeContext.
func branchStates(step, current string, branches []Branch, par *ParallelStatus) ([]BranchState, *ParallelStatus) {
	out := []BranchState{}
	ps := &ParallelStatus{Failed: []string{}}
	for _, b := range branches {
		if b.Step != step {
			continue
		}
		out = append(out, BranchState{ID: b.ID, State: string(b.Status), Attempts: b.Attempt, Error: b.Error})
		switch b.Status {
		case BranchSkipped:
			continue
		case BranchCompleted:
			ps.Completed++
		case BranchFailed:
			ps.Failed = append(ps.Failed, b.ID)
		}
		ps.Total++
	}
	if step != current {
		return out, par
	}
	return out, ps
}

func currentState(s Status) string {
	switch s {
	case StatusWaiting:
		return StageWaiting
	case StatusFailed, StatusEscalated:
		return StageFailed
	}
	return StageRunning
}
