package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
)

// clarifyRun starts a run of question with the offline clarifier and
// returns it at its first checkpoint.
func clarifyRun(t *testing.T, question string, clarify bool) (*engine.Engine, *store.Store, engine.Run, engine.Checkpoint) {
	t.Helper()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"}, poolSource{"beta"})
	parser := intent.New(func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) })
	sk.Intent, sk.Clarifier = parser, parser
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: question, pipeline.ParamClarify: clarify})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, run.Status)
	cp, _, err := st.Checkpoint(ctx, run.CheckpointID)
	require.NoError(t, err)
	return eng, st, run, cp
}

// TestClarifyCheckpointShapesTheIntent: an ambiguous question with
// clarify on stops at the clarify checkpoint before any strategy is
// built; the answers (an option of each question) change the intent the
// strategy is then built from, and are noted. Answers naming no option
// are refused, field by field.
func TestClarifyCheckpointShapesTheIntent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, st, run, cp := clarifyRun(t, "Does CBT reduce insomnia?", true)
	require.Equal(t, pipeline.KindClarify, cp.Kind)
	p, err := engine.PayloadAs[pipeline.ClarifyPayload](cp)
	require.NoError(t, err)
	require.Equal(t, "Does CBT reduce insomnia?", p.Question)
	var ids []string
	for _, q := range p.Questions {
		ids = append(ids, q.ID)
	}
	require.Equal(t, []string{"acronym-cbt", "population", "time_frame"}, ids)

	err = eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann",
		RevisedData: mustJSON(t, pipeline.ClarifyDecision{Answers: research.ClarifyAnswers{"time_frame": "Next year", "nope": "x"}})})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "answers.nope")
	require.Contains(t, fault.ErrorFields(err), "answers.time_frame")

	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann",
		RevisedData: mustJSON(t, pipeline.ClarifyDecision{Answers: research.ClarifyAnswers{
			"acronym-cbt": "Cognitive behavioural therapy", "population": "Adults", "time_frame": "The last 5 years"}})}))
	require.NoError(t, eng.Advance(ctx, run.ID))
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	cp, _, err = st.Checkpoint(ctx, run.CheckpointID)
	require.NoError(t, err)
	require.Equal(t, pipeline.KindStrategyConfirmation, cp.Kind)
	sp, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
	require.NoError(t, err)
	require.Equal(t, research.YearRange{From: 2020, To: 2025}, sp.Intent.YearRange, "the answers shaped the intent the strategy was built from")
	require.Contains(t, sp.Intent.Concepts, research.Concept{Term: "adults"})
	require.Equal(t, "cognitive behavioural therapy", sp.Intent.Concepts[0].Term)
	require.Contains(t, sp.Strategy.Queries[0].Text, "adults", "and the strategy")
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	require.Contains(t, rs.Notes, research.Note{Skill: "clarifier", Message: "ann answered: What does CBT stand for in your question? Cognitive behavioural therapy; " +
		"Whom is the question about? Adults; Which publication years should the search cover? The last 5 years"})
}

// TestClarifyOnlyWhenAskedAndAmbiguous: with clarify off (the default),
// or a question that leaves nothing open, the first checkpoint is the
// strategy; rejecting the questions leaves the intent as parsed.
func TestClarifyOnlyWhenAskedAndAmbiguous(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, cp := clarifyRun(t, "Does CBT reduce insomnia?", false)
	require.Equal(t, pipeline.KindStrategyConfirmation, cp.Kind)
	_, _, _, cp = clarifyRun(t, "sqlite durability since 2010", true)
	require.Equal(t, pipeline.KindStrategyConfirmation, cp.Kind)

	eng, st, run, cp := clarifyRun(t, "sqlite durability", true)
	require.Equal(t, pipeline.KindClarify, cp.Kind)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Reject, DecidedBy: "ann"}))
	require.NoError(t, eng.Advance(ctx, run.ID))
	run, err := st.Run(ctx, run.ID)
	require.NoError(t, err)
	cp, _, err = st.Checkpoint(ctx, run.CheckpointID)
	require.NoError(t, err)
	sp, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
	require.NoError(t, err)
	require.Zero(t, sp.Intent.YearRange)
}
