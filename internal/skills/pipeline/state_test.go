package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

func TestStateOf(t *testing.T) {
	t.Parallel()
	intent := research.ParsedIntent{Topic: "sqlite durability", Concepts: []research.Concept{{Term: "sqlite"}}}
	wf := research.WorkflowState{CurrentIteration: 2, IsComplete: true}
	full := engine.State{}
	require.NoError(t, full.Set("intent", intent))
	require.NoError(t, full.Set("workflow", wf))
	require.NoError(t, full.Set("notes", []research.Note{{Skill: "intent", Message: "fell back"}}))
	require.NoError(t, full.Set("final", research.PaperCollection{}))

	tests := []struct {
		name     string
		run      engine.Run
		want     pipeline.RunState
		wantCode string
	}{
		{"Fresh", engine.Run{Workflow: pipeline.Name, Params: engine.Params{"question": "q?"}},
			pipeline.RunState{Question: "q?"}, ""},
		{"Full", engine.Run{Workflow: pipeline.Name, Params: engine.Params{"question": "q?"}, State: full},
			pipeline.RunState{Question: "q?", Intent: &intent, Workflow: wf, Final: &research.PaperCollection{},
				Notes: []research.Note{{Skill: "intent", Message: "fell back"}}}, ""},
		{"OtherWorkflow", engine.Run{Workflow: "other"}, pipeline.RunState{}, fault.EInvalid},
		{"Corrupt", engine.Run{Workflow: pipeline.Name, State: engine.State{"intent": json.RawMessage(`[1]`)}},
			pipeline.RunState{}, fault.EInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := pipeline.StateOf(tt.run)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
			require.Equal(t, tt.want, got)
		})
	}
}

// TestFinalizeSortsAccumulatedGroupByScore: papers marked relevant in
// earlier iterations join the final collection in their own group, best
// score first like every group, not in the order they were marked.
func TestFinalizeSortsAccumulatedGroupByScore(t *testing.T) {
	t.Parallel()
	sp := func(id string, score float64) research.ScoredPaper {
		return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: "Paper " + id, Source: "local"}, Score: score, Reasons: []string{"r"}}
	}
	last := research.PaperCollection{Papers: []research.ScoredPaper{sp("now", 0.9)}, Groups: []research.Group{{Label: "theme", PaperIDs: []string{"now"}}}}
	got := pipeline.Finalize(last, []research.ScoredPaper{sp("low", 0.2), sp("now", 0.9), sp("high", 0.8), sp("tie-b", 0.5), sp("tie-a", 0.5)})
	require.NoError(t, got.Validate())
	require.Len(t, got.Papers, 5)
	require.Equal(t, research.Group{Label: pipeline.AccumulatedGroup, PaperIDs: []string{"high", "tie-a", "tie-b", "low"}}, got.Groups[len(got.Groups)-1])
}
