package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// verdict is what the database says about a trial's runs.
type verdict struct {
	lost, duplicated, stuck int
	problems                []string
}

// completes reports whether a step record finishes its step. The engine
// writes one record per attempt: "error" is a failed attempt that will be
// retried and "escalated" one that stopped for a person, "retry" is a
// person's retry of an escalation, and "checkpoint" is a gate stopping for
// a decision (finished later by a record of the decision's outcome).
// Everything else (ok, skip, iterate, a gate's outcome, failed, aborted,
// canceled) moves the run past the step, which may happen once per
// iteration: a second one for the same run, step and iteration means the
// step's work was committed twice.
func completes(outcome string) bool {
	switch outcome {
	case "error", "escalated", "retry", "checkpoint":
		return false
	}
	return true
}

// verify opens the trial's database (the server must be stopped) through
// the store, as the server does, and checks: every run completed (else
// stuck); every decision answered 202 is recorded as sent and applied
// (else lost); no step finished twice, and no gate raised twice, in one
// iteration (else duplicated).
func verify(ctx context.Context, db string, runs []*trackedRun, decisions []decision) (verdict, error) {
	var v verdict
	// Verifying is what a trial that ran out of time most needs: it gets
	// its own half minute, whatever is left of ctx.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		return v, err
	}
	defer st.Close()
	byRun := map[string][]decision{}
	for _, d := range decisions {
		byRun[d.runID] = append(byRun[d.runID], d)
	}
	for _, tr := range runs {
		run, err := st.Run(ctx, tr.id)
		if err != nil {
			return v, err
		}
		if run.Status != engine.StatusCompleted {
			v.stuck++
			v.problems = append(v.problems, fmt.Sprintf("stuck: run %s is %s at step %q, iteration %d, attempt %d, error %q",
				run.ID, run.Status, run.Step, run.Iteration, run.Attempt, run.Error))
		}
		steps, err := st.StepRuns(ctx, tr.id)
		if err != nil {
			return v, err
		}
		n, problems := duplicates(steps)
		v.duplicated += n
		v.problems = append(v.problems, problems...)
		cps, err := st.Checkpoints(ctx, tr.id)
		if err != nil {
			return v, err
		}
		recorded := map[string]store.CheckpointDecision{}
		for _, c := range cps {
			recorded[c.Checkpoint.ID] = c
		}
		for _, d := range byRun[tr.id] {
			if why := lostDecision(d, recorded[d.checkpointID], steps); why != "" {
				v.lost++
				v.problems = append(v.problems, fmt.Sprintf("lost decision: run %s, %s checkpoint %s (iteration %d), %s answered 202: %s",
					d.runID, d.kind, d.checkpointID, d.iteration, d.action, why))
			}
		}
	}
	return v, nil
}

// duplicates counts the (step, iteration) pairs of one run's audit trail
// that finished more than once or raised more than one checkpoint.
func duplicates(steps []engine.StepRecord) (int, []string) {
	type key struct {
		step      string
		iteration int
		gate      bool
	}
	count := map[key]int{}
	var order []key
	for _, s := range steps {
		k := key{s.Step, s.Iteration, s.Outcome == "checkpoint"}
		if !k.gate && !completes(s.Outcome) {
			continue
		}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	var problems []string
	n := 0
	for _, k := range order {
		if count[k] < 2 {
			continue
		}
		n++
		what := "finished"
		if k.gate {
			what = "stopped at a checkpoint"
		}
		var trail bytes.Buffer
		for _, s := range steps {
			if s.Step == k.step && s.Iteration == k.iteration {
				fmt.Fprintf(&trail, " [attempt %d %s %s]", s.Attempt, s.Outcome, s.FinishedAt.Format("15:04:05.000"))
			}
		}
		problems = append(problems, fmt.Sprintf("duplicated step: run %s, step %q, iteration %d %s %d times:%s",
			steps[0].RunID, k.step, k.iteration, what, count[k], trail.String()))
	}
	return n, problems
}

// lostDecision says why a decision answered 202 is not in the database as
// sent and applied, or "" when it is.
func lostDecision(d decision, c store.CheckpointDecision, steps []engine.StepRecord) string {
	if c.Checkpoint.ID == "" {
		return "the checkpoint is not in the database"
	}
	rec := c.Decision
	if rec == nil {
		return fmt.Sprintf("no decision recorded (the checkpoint is %s)", c.Checkpoint.Status)
	}
	if string(rec.Action) != d.action || rec.DecidedBy != d.decidedBy {
		return fmt.Sprintf("recorded as %s by %s", rec.Action, rec.DecidedBy)
	}
	if !holdsJSON(rec.RevisedData, d.revised) {
		return fmt.Sprintf("recorded without what was sent: sent %s, recorded %s", d.revised, rec.RevisedData)
	}
	// The engine applies a decision when the run resumes, in a step record
	// of the checkpoint's step whose output names the action.
	for _, s := range steps {
		if s.Step != c.Checkpoint.Step || s.Iteration != c.Checkpoint.Iteration || !completes(s.Outcome) {
			continue
		}
		var out struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(s.Output, &out) == nil && out.Action == d.action {
			return ""
		}
	}
	return "recorded but never applied (no step record of its outcome)"
}

// holdsJSON reports whether the recorded revised data holds everything
// that was sent: the same value for each key sent, and every element of
// each list sent (key order and spacing aside). A review decision records
// the marks stored before it too (marks are saved as they are made and
// carried across iterations), so what was sent is a part of what is
// recorded, not all of it; nothing sent may be missing or changed.
func holdsJSON(recorded, sent json.RawMessage) bool {
	if len(bytes.TrimSpace(sent)) == 0 {
		return true
	}
	if len(bytes.TrimSpace(recorded)) == 0 {
		return false
	}
	var r, s any
	if json.Unmarshal(recorded, &r) != nil || json.Unmarshal(sent, &s) != nil {
		return bytes.Equal(recorded, sent)
	}
	return holds(r, s)
}

func holds(recorded, sent any) bool {
	switch s := sent.(type) {
	case map[string]any:
		r, ok := recorded.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			if !holds(r[k], v) {
				return false
			}
		}
		return true
	case []any:
		r, ok := recorded.([]any)
		if !ok {
			return len(s) == 0 && recorded == nil
		}
		for _, v := range s {
			if !slices.ContainsFunc(r, func(x any) bool { return reflect.DeepEqual(x, v) }) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(recorded, sent)
	}
}
