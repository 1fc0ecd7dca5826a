package main

import (
	"encoding/json"
	"strings"
	"testing"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// The checks must be able to fail: a chaos run that always prints zeros
// proves nothing. These feed them the audit trails a lost decision or a
// step committed twice would leave.

func rec(step string, iteration, attempt int, outcome, output string) engine.StepRecord {
	return engine.StepRecord{RunID: "r1", Step: step, Iteration: iteration, Attempt: attempt, Outcome: outcome, Output: json.RawMessage(output)}
}

func TestDuplicatesIgnoresRetriedAttemptsAndGates(t *testing.T) {
	t.Parallel()
	steps := []engine.StepRecord{
		rec("search", 1, 1, "error", ""),
		rec("search", 1, 2, "ok", ""),
		rec("review", 1, 1, "checkpoint", ""),
		rec("review", 1, 1, "iterate", `{"action":"edit"}`),
		rec("search", 2, 1, "ok", ""),
	}
	if n, problems := duplicates(steps); n != 0 {
		t.Fatalf("duplicates = %d, %v; want none", n, problems)
	}
}

func TestDuplicatesFindsAStepFinishedTwice(t *testing.T) {
	t.Parallel()
	steps := []engine.StepRecord{
		rec("search", 1, 1, "ok", ""),
		rec("dedup", 1, 1, "ok", ""),
		rec("search", 1, 1, "ok", ""),
		rec("review", 1, 1, "checkpoint", ""),
		rec("review", 1, 1, "checkpoint", ""),
	}
	n, problems := duplicates(steps)
	if n != 2 || !strings.Contains(problems[0], `step "search", iteration 1 finished 2 times`) ||
		!strings.Contains(problems[1], "stopped at a checkpoint 2 times") {
		t.Fatalf("duplicates = %d, %q", n, problems)
	}
}

func TestLostDecision(t *testing.T) {
	t.Parallel()
	cp := engine.Checkpoint{ID: "c1", Step: "review", Iteration: 1, Status: engine.CheckpointDecided}
	sent := decision{runID: "r1", checkpointID: "c1", action: "edit", decidedBy: "chaos-1", iteration: 1,
		revised: json.RawMessage(`{"marked_relevant":["a"],"free_text_feedback":"x"}`)}
	applied := []engine.StepRecord{rec("review", 1, 1, "checkpoint", ""), rec("review", 1, 1, "iterate", `{"action":"edit","decided_by":"chaos-1"}`)}
	recorded := &engine.DecisionRecord{Decision: engine.Decision{Action: engine.Edit, DecidedBy: "chaos-1",
		RevisedData: json.RawMessage(`{"free_text_feedback": "x", "marked_relevant": ["a"]}`)}}
	for _, tc := range []struct {
		name  string
		c     store.CheckpointDecision
		steps []engine.StepRecord
		want  string
	}{
		{"kept and applied", store.CheckpointDecision{Checkpoint: cp, Decision: recorded}, applied, ""},
		{"no checkpoint", store.CheckpointDecision{}, applied, "not in the database"},
		{"no decision", store.CheckpointDecision{Checkpoint: cp}, applied, "no decision recorded"},
		{"another action", store.CheckpointDecision{Checkpoint: cp, Decision: &engine.DecisionRecord{Decision: engine.Decision{Action: engine.Approve, DecidedBy: "chaos-1"}}}, applied, "recorded as approve"},
		{"other data", store.CheckpointDecision{Checkpoint: cp, Decision: &engine.DecisionRecord{Decision: engine.Decision{Action: engine.Edit, DecidedBy: "chaos-1", RevisedData: json.RawMessage(`{}`)}}}, applied, "recorded without what was sent"},
		{"a sent mark missing", store.CheckpointDecision{Checkpoint: cp, Decision: &engine.DecisionRecord{Decision: engine.Decision{Action: engine.Edit, DecidedBy: "chaos-1", RevisedData: json.RawMessage(`{"marked_relevant":["b"],"free_text_feedback":"x"}`)}}}, applied, "recorded without what was sent"},
		{"stored marks added", store.CheckpointDecision{Checkpoint: cp, Decision: &engine.DecisionRecord{Decision: engine.Decision{Action: engine.Edit, DecidedBy: "chaos-1", RevisedData: json.RawMessage(`{"marked_relevant":["b","a"],"marked_irrelevant":["c"],"free_text_feedback":"x"}`)}}}, applied, ""},
		{"never applied", store.CheckpointDecision{Checkpoint: cp, Decision: recorded}, applied[:1], "never applied"},
	} {
		got := lostDecision(sent, tc.c, tc.steps)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: lostDecision = %q, want %q", tc.name, got, tc.want)
		}
	}
}
