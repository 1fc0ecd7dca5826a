package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// progressWorkflow is fetch → check (a gate) → report.
func progressWorkflow() *engine.Workflow {
	return &engine.Workflow{Name: "p", Entry: "fetch", Steps: []engine.StepDef{
		{ID: "fetch", Next: engine.Next{engine.OK: "check"}},
		{ID: "check", Gate: &engine.Gate{Kind: "k"}, Next: engine.Next{engine.OK: "report", engine.Iterate: "fetch"}},
		{ID: "report", Next: engine.Next{engine.OK: engine.End}},
	}}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	w := progressWorkflow()
	rec := func(step string, it, attempt int, outcome, errMsg, out string) engine.StepRecord {
		r := engine.StepRecord{Step: step, Iteration: it, Attempt: attempt, Outcome: outcome, Error: errMsg}
		if out != "" {
			r.Output = json.RawMessage(out)
		}
		return r
	}
	states := func(ss []engine.StageState) map[string]string {
		m := map[string]string{}
		for _, s := range ss {
			m[s.ID] = s.State
		}
		return m
	}

	t.Run("RetryPending", func(t *testing.T) {
		t.Parallel()
		run := engine.Run{Status: engine.StatusRunning, Step: "fetch", Iteration: 1}
		ss, rc := engine.Progress(w, run, []engine.StepRecord{rec("fetch", 1, 1, "error", "source down", "")}, nil)
		require.Equal(t, map[string]string{"fetch": "running", "check": "pending", "report": "pending"}, states(ss))
		require.Equal(t, 1, ss[0].Attempts)
		require.Equal(t, "gate", ss[1].Type)
		require.Equal(t, "skill", ss[0].Type)
		require.Equal(t, "fetch", rc.Current)
		require.Empty(t, rc.Completed)
		require.Equal(t, &engine.PendingRetry{Stage: "fetch", Error: "source down", Attempt: 1}, rc.PendingRetry)
		require.Nil(t, rc.LastOutput)
	})

	t.Run("WaitingAtGate", func(t *testing.T) {
		t.Parallel()
		run := engine.Run{Status: engine.StatusWaiting, Step: "check", Iteration: 1}
		ss, rc := engine.Progress(w, run, []engine.StepRecord{
			rec("fetch", 1, 1, "error", "flaky", ""), rec("fetch", 1, 2, "ok", "", `{"n":3}`), rec("check", 1, 0, "checkpoint", "", ""),
		}, nil)
		require.Equal(t, map[string]string{"fetch": "completed", "check": "waiting", "report": "pending"}, states(ss))
		require.Equal(t, 2, ss[0].Attempts, "the failed attempt and its retry")
		require.Equal(t, []string{"fetch"}, rc.Completed)
		require.Nil(t, rc.PendingRetry, "the retry succeeded")
		require.Equal(t, &engine.StageOutput{Stage: "fetch", Bytes: 7, Output: json.RawMessage(`{"n":3}`)}, rc.LastOutput)
	})

	t.Run("SecondIterationStartsAfresh", func(t *testing.T) {
		t.Parallel()
		run := engine.Run{Status: engine.StatusRunning, Step: "fetch", Iteration: 2}
		ss, rc := engine.Progress(w, run, []engine.StepRecord{
			rec("fetch", 1, 1, "ok", "", `{"n":3}`), rec("check", 1, 0, "iterate", "", `{"d":1}`),
		}, nil)
		require.Equal(t, map[string]string{"fetch": "running", "check": "pending", "report": "pending"}, states(ss))
		require.Zero(t, ss[0].Attempts)
		require.Empty(t, rc.Completed)
		require.Equal(t, "check", rc.LastOutput.Stage, "the last output, whatever its iteration")
	})

	t.Run("CompletedWithLargeOutput", func(t *testing.T) {
		t.Parallel()
		run := engine.Run{Status: engine.StatusCompleted, Step: "", Iteration: 1}
		big := `{"papers":"` + strings.Repeat("x", engine.MaxShownOutput) + `"}`
		ss, rc := engine.Progress(w, run, []engine.StepRecord{
			rec("fetch", 1, 1, "ok", "", big), rec("check", 1, 0, "ok", "", ""), {Step: "report", Iteration: 1, Outcome: "ok", OutputSize: 20000},
		}, nil)
		require.Equal(t, map[string]string{"fetch": "completed", "check": "completed", "report": "completed"}, states(ss))
		require.Equal(t, []string{"fetch", "check", "report"}, rc.Completed)
		require.Empty(t, rc.Current)
		require.Equal(t, &engine.StageOutput{Stage: "report", Bytes: 20000}, rc.LastOutput, "a large output is only sized")

		_, rc = engine.Progress(w, run, []engine.StepRecord{rec("fetch", 1, 1, "ok", "", big)}, nil)
		require.Nil(t, rc.LastOutput.Output)
		require.Equal(t, len(big), rc.LastOutput.Bytes)
	})

	t.Run("Escalated", func(t *testing.T) {
		t.Parallel()
		run := engine.Run{Status: engine.StatusEscalated, Step: "report", Iteration: 1}
		ss, rc := engine.Progress(w, run, []engine.StepRecord{
			rec("fetch", 1, 1, "ok", "", ""), rec("check", 1, 0, "ok", "", ""),
			rec("report", 1, 1, "error", "disk full", ""), rec("report", 1, 2, "error", "disk full", ""), rec("report", 1, 2, "escalated", "disk full", ""),
		}, nil)
		require.Equal(t, "failed", states(ss)["report"])
		require.Equal(t, 2, ss[2].Attempts)
		require.Equal(t, &engine.PendingRetry{Stage: "report", Error: "disk full", Attempt: 2}, rc.PendingRetry)
	})
}
