package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
)

func TestStateOf(t *testing.T) {
	t.Parallel()
	intent := skills.ParsedIntent{Topic: "sqlite durability", Concepts: []skills.Concept{{Term: "sqlite"}}}
	wf := skills.WorkflowState{CurrentIteration: 2, IsComplete: true}
	full := engine.State{}
	require.NoError(t, full.Set("intent", intent))
	require.NoError(t, full.Set("workflow", wf))
	require.NoError(t, full.Set("notes", []skills.Note{{Skill: "intent", Message: "fell back"}}))
	require.NoError(t, full.Set("final", skills.PaperCollection{}))

	tests := []struct {
		name     string
		run      engine.Run
		want     pipeline.RunState
		wantCode string
	}{
		{"Fresh", engine.Run{Workflow: pipeline.Name, Params: engine.Params{"question": "q?"}},
			pipeline.RunState{Question: "q?"}, ""},
		{"Full", engine.Run{Workflow: pipeline.Name, Params: engine.Params{"question": "q?"}, State: full},
			pipeline.RunState{Question: "q?", Intent: &intent, Workflow: wf, Final: &skills.PaperCollection{},
				Notes: []skills.Note{{Skill: "intent", Message: "fell back"}}}, ""},
		{"OtherWorkflow", engine.Run{Workflow: "other"}, pipeline.RunState{}, engine.EInvalid},
		{"Corrupt", engine.Run{Workflow: pipeline.Name, State: engine.State{"intent": json.RawMessage(`[1]`)}},
			pipeline.RunState{}, engine.EInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := pipeline.StateOf(tt.run)
			require.Equal(t, tt.wantCode, engine.ErrorCode(err))
			require.Equal(t, tt.want, got)
		})
	}
}
