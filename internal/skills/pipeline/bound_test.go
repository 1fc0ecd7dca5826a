package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestDecisionsAtTheBoundAreNoted: at the last iteration a decision that
// asks for another one (a review edit or reject, a strategy reject) still
// finishes the run within max_iterations, and a run note says its
// feedback was recorded but not searched, instead of nothing saying so.
func TestDecisionsAtTheBoundAreNoted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kind   engine.CheckpointKind
		action engine.DecisionAction
		want   research.Note
	}{
		{"ReviewEdit", pipeline.KindResultReview, engine.Edit, research.Note{Skill: "review", Message: "the feedback of iteration 2 (edit) was recorded but not searched: " +
			"the run had reached max_iterations (2), so the decision finished it"}},
		{"ReviewReject", pipeline.KindResultReview, engine.Reject, research.Note{Skill: "review", Message: "the feedback of iteration 2 (reject) was recorded but not searched: " +
			"the run had reached max_iterations (2), so the decision finished it"}},
		{"StrategyReject", pipeline.KindStrategyConfirmation, engine.Reject, research.Note{Skill: "strategy", Message: "the strategy of iteration 2 was rejected and not rebuilt: " +
			"the run had reached max_iterations (2), so the decision finished it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := openStore(t)
			sk, _ := fakeSkills(poolSource{"alpha"})
			wf, err := pipeline.New(sk, pipeline.Options{})
			require.NoError(t, err)
			eng := newEngine(t, st, wf, engine.Pending())
			ctx := context.Background()
			run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamMaxIterations: 2})
			require.NoError(t, err)
			decide := func(kind engine.CheckpointKind, action engine.DecisionAction, note string) {
				t.Helper()
				require.NoError(t, eng.Advance(ctx, run.ID))
				r, err := st.Run(ctx, run.ID)
				require.NoError(t, err)
				require.Equal(t, engine.StatusWaiting, r.Status)
				cp, _, err := st.Checkpoint(ctx, r.CheckpointID)
				require.NoError(t, err)
				require.Equal(t, kind, cp.Kind)
				require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: action, DecidedBy: "test", Note: note}))
			}
			decide(pipeline.KindStrategyConfirmation, engine.Approve, "")
			decide(pipeline.KindResultReview, engine.Reject, "more on wal") // below the bound: iterates, no note
			if tt.kind == pipeline.KindResultReview {
				decide(pipeline.KindStrategyConfirmation, engine.Approve, "")
			}
			decide(tt.kind, tt.action, "fewer btree papers")
			require.NoError(t, eng.Advance(ctx, run.ID))

			r, err := st.Run(ctx, run.ID)
			require.NoError(t, err)
			require.Equal(t, engine.StatusCompleted, r.Status)
			require.Equal(t, 2, r.Iteration, "iterations never exceed max_iterations")
			rs := stateOf(t, st, run.ID)
			require.True(t, rs.Workflow.IsComplete)
			var ours []research.Note
			for _, n := range rs.Notes {
				if n.Skill == "review" || n.Skill == "strategy" {
					ours = append(ours, n)
				}
			}
			require.Equal(t, []research.Note{tt.want}, ours)
			last := rs.Workflow.History[len(rs.Workflow.History)-1]
			require.Equal(t, 2, last.Iteration)
			require.NotNil(t, last.Feedback, "the feedback is recorded")
			require.Equal(t, "fewer btree papers", last.Feedback.FreeTextFeedback)
		})
	}
}
