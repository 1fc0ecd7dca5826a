package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
)

// TestCheckpointEditsHoldForLaterIterations: what the researcher set at
// checkpoint 1 (sources, years, result cap, an added exclusion, fields of
// study) is the starting point of the next iteration's strategy, not
// forgotten for the question's and the run's defaults.
func TestCheckpointEditsHoldForLaterIterations(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"}, poolSource{"beta"})
	sk.Intent = skills.NewIntentParser(nil)
	sk.Queries = skills.NewQueryBuilder()
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sleep and memory consolidation"})
	require.NoError(t, err)

	waiting := func(kind engine.CheckpointKind) engine.Checkpoint {
		t.Helper()
		require.NoError(t, eng.Advance(ctx, run.ID))
		r, err := st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, engine.StatusWaiting, r.Status)
		cp, _, err := st.Checkpoint(ctx, r.CheckpointID)
		require.NoError(t, err)
		require.Equal(t, kind, cp.Kind)
		return cp
	}

	cp := waiting(engine.KindStrategyConfirmation)
	proposed, err := engine.PayloadAs[skills.StrategyPayload](cp)
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta"}, proposed.Strategy.Sources)
	edited := proposed.Strategy
	edited.Sources = []string{"beta"}
	edited.YearRange = skills.YearRange{From: 2010, To: 2020}
	edited.MaxResultsPerSource = 7
	edited.Filters.ExcludeTerms = append(edited.Filters.ExcludeTerms, "rodents")
	require.Empty(t, edited.Filters.FieldsOfStudy, "the parser's guessed fields are not a filter")

	// A field no source can filter by is refused with the list, not dropped.
	edited.Filters.FieldsOfStudy = []string{"Neuroscience", "medicine"}
	b, err := json.Marshal(edited)
	require.NoError(t, err)
	err = eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: b})
	var ee *engine.Error
	require.ErrorAs(t, err, &ee)
	require.Equal(t, engine.EInvalid, ee.Code)
	require.Contains(t, ee.Fields["filters.fields_of_study"], `"Neuroscience": not a field of study`)
	require.Contains(t, ee.Fields["filters.fields_of_study"], "Computer Science, Medicine")

	edited.Filters.FieldsOfStudy = []string{"medicine", " Medicine "}
	b, err = json.Marshal(edited)
	require.NoError(t, err)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: b}))

	cp = waiting(engine.KindResultReview)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Reject, DecidedBy: "test", Note: "more on adults"}))

	cp = waiting(engine.KindStrategyConfirmation)
	next, err := engine.PayloadAs[skills.StrategyPayload](cp)
	require.NoError(t, err)
	require.Equal(t, 2, next.Iteration)
	require.Equal(t, []string{"beta"}, next.Strategy.Sources)
	require.Equal(t, skills.YearRange{From: 2010, To: 2020}, next.Strategy.YearRange)
	require.Equal(t, 7, next.Strategy.MaxResultsPerSource)
	require.Contains(t, next.Strategy.Filters.ExcludeTerms, "rodents")
	require.Equal(t, []string{"Medicine"}, next.Strategy.Filters.FieldsOfStudy, "a field restriction the researcher set holds, spelled as listed")
	for i, q := range next.Strategy.Queries {
		require.Contains(t, q.Text, "-rodents", "query %d negates the exclusion", i)
	}
}
