package pipeline_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/sources"
	"quarry/internal/store"
)

// TestCheckpointEditsHoldForLaterIterations: what the researcher set at
// checkpoint 1 (sources, years, result cap, an added exclusion, fields of
// study) is the starting point of the next iteration's strategy, not
// forgotten for the question's and the run's defaults.
func TestCheckpointEditsHoldForLaterIterations(t *testing.T) {
	t.Parallel()
	_, eng, run, waiting := startOffline(t, "sleep and memory consolidation", poolSource{"alpha"}, poolSource{"beta"})
	ctx := context.Background()

	cp := waiting(pipeline.KindStrategyConfirmation)
	proposed, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta"}, proposed.Strategy.Sources)
	edited := proposed.Strategy
	edited.Sources = []string{"beta"}
	edited.YearRange = research.YearRange{From: 2010, To: 2020}
	edited.MaxResultsPerSource = 7
	edited.Filters.ExcludeTerms = append(edited.Filters.ExcludeTerms, "rodents")
	require.Empty(t, edited.Filters.FieldsOfStudy, "the parser's guessed fields are not a filter")

	// A field no source can filter by is refused with the list, not dropped.
	edited.Filters.FieldsOfStudy = []string{"Neuroscience", "medicine"}
	b, err := json.Marshal(edited)
	require.NoError(t, err)
	err = eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: b})
	var ee *fault.Error
	require.ErrorAs(t, err, &ee)
	require.Equal(t, fault.EInvalid, ee.Code)
	require.Contains(t, ee.Fields["filters.fields_of_study"], `"Neuroscience": not a field of study`)
	require.Contains(t, ee.Fields["filters.fields_of_study"], "Computer Science, Medicine")

	edited.Filters.FieldsOfStudy = []string{"medicine", " Medicine "}
	b, err = json.Marshal(edited)
	require.NoError(t, err)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: b}))

	cp = waiting(pipeline.KindResultReview)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Reject, DecidedBy: "test", Note: "more on adults"}))

	cp = waiting(pipeline.KindStrategyConfirmation)
	next, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
	require.NoError(t, err)
	require.Equal(t, 2, next.Iteration)
	require.Equal(t, []string{"beta"}, next.Strategy.Sources)
	require.Equal(t, research.YearRange{From: 2010, To: 2020}, next.Strategy.YearRange)
	require.Equal(t, 7, next.Strategy.MaxResultsPerSource)
	require.Contains(t, next.Strategy.Filters.ExcludeTerms, "rodents")
	require.Equal(t, []string{"Medicine"}, next.Strategy.Filters.FieldsOfStudy, "a field restriction the researcher set holds, spelled as listed")
	for i, q := range next.Strategy.Queries {
		require.Contains(t, q.Text, "-rodents", "query %d negates the exclusion", i)
	}
}

// papersSource returns the given papers whatever it is asked.
type papersSource []research.RawPaper

func (papersSource) Name() string { return "papers" }

func (s papersSource) Search(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
	return slices.Clone(s), nil
}

// TestLearnedExclusionsAreNotCarriedAsTheResearchers: an exclusion the
// builder learned from papers marked irrelevant reaches the next build as
// learned, not as the researcher's, so it is learned again from all marks
// (and dropped once a paper marked relevant uses it); one the researcher
// removed at the strategy checkpoint is not learned again in the run.
func TestLearnedExclusionsAreNotCarriedAsTheResearchers(t *testing.T) {
	t.Parallel()
	papers := papersSource{
		{Title: "Cytokine storms in septic mice: a murine endotoxin model", DOI: "10.1000/m1",
			Abstract: "Mice received endotoxin; cytokine storms and murine survival were recorded."},
		{Title: "Murine endotoxin shock: cytokine profiles of mice", DOI: "10.1000/m2",
			Abstract: "Endotoxin-treated mice show cytokine release within hours."},
		{Title: "Cytokine response to endotoxin in murine macrophages", DOI: "10.1000/m3",
			Abstract: "Endotoxin induced cytokine release."},
		{Title: "Endotoxin tolerance and sepsis prediction in the ICU", DOI: "10.1000/r1",
			Abstract: "Patients' endotoxin tolerance predicts sepsis in intensive care."},
		{Title: "Monocyte endotoxin tolerance predicts sepsis", DOI: "10.1000/r2",
			Abstract: "Endotoxin tolerance of monocytes in intensive care patients predicted sepsis."},
		// The rest of what the search finds, never marked: the background
		// against which the marked papers' words are distinctive.
		{Title: "Early warning scores for sepsis prediction", DOI: "10.1000/b1", Abstract: "NEWS and qSOFA in the emergency department."},
		{Title: "Machine learning sepsis prediction in the ICU", DOI: "10.1000/b2", Abstract: "Gradient boosting on vital signs."},
		{Title: "Lactate and sepsis prediction", DOI: "10.1000/b3", Abstract: "Serum lactate at admission predicts sepsis mortality."},
		{Title: "Sepsis prediction from electronic health records", DOI: "10.1000/b4", Abstract: "Recurrent networks over ICU charts."},
		{Title: "Sepsis prediction with procalcitonin", DOI: "10.1000/b5", Abstract: "Biomarker thresholds in adults."},
		{Title: "Sepsis alerts and alarm fatigue", DOI: "10.1000/b6", Abstract: "Nurses' responses to automated alerts."},
		{Title: "Heart rate variability for sepsis prediction", DOI: "10.1000/b7", Abstract: "Continuous monitoring in the ICU."},
		{Title: "Sepsis prediction in children's hospitals", DOI: "10.1000/b8", Abstract: "Paediatric early warning."},
		{Title: "Clinician gestalt versus scores in sepsis prediction", DOI: "10.1000/b9", Abstract: "Emergency physicians' judgement."},
		{Title: "Sepsis prediction after surgery", DOI: "10.1000/b10", Abstract: "Postoperative infections in adults."},
		{Title: "External validation of a sepsis prediction model", DOI: "10.1000/b11", Abstract: "Poor calibration across hospitals."},
		{Title: "Sepsis prediction and antibiotic timing", DOI: "10.1000/b12", Abstract: "Earlier antibiotics after alerts."},
		{Title: "Sepsis prediction in the emergency department", DOI: "10.1000/b13", Abstract: "Triage vital signs."},
		{Title: "Sepsis prediction using natural language processing", DOI: "10.1000/b14", Abstract: "Free-text nursing notes."},
	}
	st, eng, run, waiting := startOffline(t, "sepsis prediction in the ICU", papers)
	ctx := context.Background()
	var err error
	decide := func(cp engine.Checkpoint, action engine.DecisionAction, revised any) {
		t.Helper()
		var b []byte
		if revised != nil {
			b, err = json.Marshal(revised)
			require.NoError(t, err)
		}
		require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: action, DecidedBy: "test", RevisedData: b}))
	}
	idOf := func(cp engine.Checkpoint, doi string) string {
		t.Helper()
		p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
		require.NoError(t, err)
		for _, paper := range p.Collection.Papers {
			if paper.DOI == doi {
				return paper.ID
			}
		}
		t.Fatalf("%s is not in the review", doi)
		return ""
	}
	strategy := func(cp engine.Checkpoint) research.SearchStrategy {
		t.Helper()
		p, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
		require.NoError(t, err)
		return p.Strategy
	}

	decide(waiting(pipeline.KindStrategyConfirmation), engine.Approve, nil)
	cp := waiting(pipeline.KindResultReview)
	decide(cp, engine.Edit, research.UserFeedback{MarkedIrrelevant: []string{idOf(cp, "10.1000/m1"), idOf(cp, "10.1000/m2"), idOf(cp, "10.1000/m3")}})

	cp = waiting(pipeline.KindStrategyConfirmation)
	proposed := strategy(cp)
	require.Equal(t, []string{"cytokine", "murine"}, proposed.Filters.LearnedExcludeTerms, "endotoxin is in unmarked papers too: less distinctive")
	require.Subset(t, proposed.Filters.ExcludeTerms, proposed.Filters.LearnedExcludeTerms)
	edited := proposed
	edited.Filters.ExcludeTerms = slices.DeleteFunc(slices.Clone(proposed.Filters.ExcludeTerms), func(e string) bool { return e == "cytokine" })
	decide(cp, engine.Edit, edited)

	cp = waiting(pipeline.KindResultReview)
	r, err := st.Run(ctx, run.ID)
	require.NoError(t, err)
	rs, err := pipeline.StateOf(r)
	require.NoError(t, err)
	require.Equal(t, []string{"murine"}, rs.Strategy.Filters.LearnedExcludeTerms, "the removed word is no longer a learned exclusion")
	require.NotContains(t, rs.Strategy.Queries[0].Text, "cytokine")
	decide(cp, engine.Edit, research.UserFeedback{MarkedRelevant: []string{idOf(cp, "10.1000/r1"), idOf(cp, "10.1000/r2")}})

	next := strategy(waiting(pipeline.KindStrategyConfirmation))
	for _, w := range []string{"cytokine", "endotoxin"} {
		require.NotContains(t, next.Filters.ExcludeTerms, w, "cytokine was removed; a relevant paper uses endotoxin")
		for i, q := range next.Queries {
			require.NotContains(t, q.Text, "-"+w, "query %d", i)
		}
	}
	require.Contains(t, next.Queries[len(next.Queries)-1].Text, "tolerance", "the word distinctive of the relevant papers is searched for (endotoxin is the irrelevant ones' too)")
	require.Equal(t, []research.LearnedTerm{
		{Term: "murine", Use: research.LearnedExclude, Papers: []string{idOf(cp, "10.1000/m1"), idOf(cp, "10.1000/m2"), idOf(cp, "10.1000/m3")}},
		{Term: "tolerance", Use: research.LearnedExpand, Papers: []string{idOf(cp, "10.1000/r1"), idOf(cp, "10.1000/r2")}},
	}, next.Filters.Learned, "what was learned, from which marks")
}

// startOffline starts a search run on question with the offline intent
// parser and query builder over sources (the other skills fakes), and
// returns the store, the engine, the run and a function that advances it
// to its next checkpoint, checks the checkpoint's kind and returns it.
func startOffline(t *testing.T, question string, sources ...sources.Source) (*store.Store, *engine.Engine, engine.Run, func(engine.CheckpointKind) engine.Checkpoint) {
	t.Helper()
	st := openStore(t)
	sk, _ := fakeSkills(sources...)
	sk.Intent = intent.New(nil)
	sk.Queries = querybuilder.New()
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: question})
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
	return st, eng, run, waiting
}
