package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/query"
	"quarry/internal/store"
)

// waitAt starts a run that leaves every checkpoint pending and returns the
// engine, the run and its first checkpoint of kind (approving the strategy
// first when kind is the review).
func waitAt(t *testing.T, kind engine.CheckpointKind) (*engine.Engine, *store.Store, engine.Run, engine.Checkpoint) {
	t.Helper()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"}, poolSource{"beta"})
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	run, err := eng.Start(context.Background(), pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability"})
	require.NoError(t, err)
	ctx := context.Background()
	for {
		require.NoError(t, eng.Advance(ctx, run.ID))
		run, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, engine.StatusWaiting, run.Status)
		cp, _, err := st.Checkpoint(ctx, run.CheckpointID)
		require.NoError(t, err)
		if cp.Kind == kind {
			return eng, st, run, cp
		}
		require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "test"}))
	}
}

func TestStrategyGateValidate(t *testing.T) {
	t.Parallel()
	good := skills.SearchStrategy{Queries: []skills.Query{{Text: "raft OR paxos"}}, Sources: []string{"alpha"}, MaxResultsPerSource: 5}
	with := func(f func(*skills.SearchStrategy)) json.RawMessage {
		s := good
		f(&s)
		b, err := json.Marshal(s)
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name      string
		revised   json.RawMessage
		wantCode  string
		wantField string
	}{
		{"OK", with(func(*skills.SearchStrategy) {}), "", ""},
		{"Missing", nil, engine.EInvalid, "revised_data"},
		{"NotAStrategy", json.RawMessage(`[1,2]`), engine.EInvalid, "revised_data"},
		{"NoQueries", with(func(s *skills.SearchStrategy) { s.Queries = nil }), engine.EInvalid, "queries"},
		{"EmptyQuery", with(func(s *skills.SearchStrategy) { s.Queries = []skills.Query{{Text: " "}} }), engine.EInvalid, "queries[0].text"},
		{"Unparseable", with(func(s *skills.SearchStrategy) { s.Queries = []skills.Query{{Text: `"unbalanced`}} }), engine.EInvalid, "queries[0].text"},
		{"UnknownSource", with(func(s *skills.SearchStrategy) { s.Sources = []string{"alpha", "nowhere"} }), engine.EInvalid, "sources[1]"},
		{"TooMany", with(func(s *skills.SearchStrategy) { s.MaxResultsPerSource = skills.MaxResultsLimit + 1 }), engine.EInvalid, "max_results_per_source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eng, st, run, cp := waitAt(t, engine.KindStrategyConfirmation)
			err := eng.Decide(context.Background(), run.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: tt.revised})
			require.Equal(t, tt.wantCode, engine.ErrorCode(err), "%v", err)
			if tt.wantField != "" {
				require.Contains(t, engine.ErrorFields(err), tt.wantField)
				return
			}
			// An accepted edit is what gets searched, rendered afresh.
			require.NoError(t, eng.Advance(context.Background(), run.ID))
			rs := stateOf(t, st, run.ID)
			require.Equal(t, "raft OR paxos", rs.Strategy.Queries[0].Text)
			ast, err := query.Parse("raft OR paxos")
			require.NoError(t, err)
			require.Equal(t, query.RenderAll(ast, []string{"alpha"}), rs.Strategy.Queries[0].PerSource)
		})
	}
}

func TestReviewGateValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		action    engine.DecisionAction
		revised   func(shown string) string
		wantCode  string
		wantField string
	}{
		{"MarkShown", engine.Edit, func(id string) string { return `{"marked_relevant":["` + id + `"]}` }, "", ""},
		{"MarkUnknown", engine.Edit, func(string) string { return `{"marked_relevant":["doi:10.1/nope"]}` }, engine.EInvalid, "marked_relevant[0]"},
		{"IrrelevantUnknown", engine.Reject, func(string) string { return `{"marked_irrelevant":["x"]}` }, engine.EInvalid, "marked_irrelevant[0]"},
		{"BothWays", engine.Edit, func(id string) string {
			return `{"marked_relevant":["` + id + `"],"marked_irrelevant":["` + id + `"]}`
		}, engine.EInvalid, "marked_irrelevant[0]"},
		{"NotFeedbackIsCoerced", engine.Reject, func(string) string { return `"free text"` }, "", ""},
		{"NoData", engine.Reject, func(string) string { return "" }, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eng, st, run, cp := waitAt(t, engine.KindResultReview)
			p, err := engine.PayloadAs[skills.ResultPayload](cp)
			require.NoError(t, err)
			require.NotEmpty(t, p.Collection.Papers)
			d := engine.Decision{Action: tt.action, DecidedBy: "test", Note: "n"}
			if r := tt.revised(p.Collection.Papers[0].ID); r != "" {
				d.RevisedData = json.RawMessage(r)
			}
			err = eng.Decide(context.Background(), run.ID, cp.ID, d)
			require.Equal(t, tt.wantCode, engine.ErrorCode(err), "%v", err)
			if tt.wantField != "" {
				require.Contains(t, engine.ErrorFields(err), tt.wantField)
				return
			}
			// The run goes back to build, never parse, for iteration 2.
			require.NoError(t, eng.Advance(context.Background(), run.ID))
			rs := stateOf(t, st, run.ID)
			require.Len(t, rs.Workflow.History, 1)
			require.NotNil(t, rs.Workflow.History[0].Feedback)
			require.Equal(t, 2, rs.Workflow.CurrentIteration)
			require.Equal(t, []skills.Note{{Skill: "intent", Message: "parsed offline"}}, rs.Notes[:1], "parse runs once")
		})
	}
}

func stateOf(t *testing.T, st *store.Store, runID string) pipeline.RunState {
	t.Helper()
	run, err := st.Run(context.Background(), runID)
	require.NoError(t, err)
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	return rs
}

func TestCoerceFeedback(t *testing.T) {
	t.Parallel()
	coll := skills.PaperCollection{Papers: []skills.ScoredPaper{
		{RawPaper: skills.RawPaper{ID: "a", Title: "A"}, Score: 0.5},
		{RawPaper: skills.RawPaper{ID: "b", Title: "B"}, Score: 0.4},
	}}
	tests := []struct {
		name    string
		revised string
		note    string
		want    skills.UserFeedback
	}{
		{"Valid", `{"marked_relevant":["a"],"marked_irrelevant":["b"],"free_text_feedback":"ok"}`, "n",
			skills.UserFeedback{MarkedRelevant: []string{"a"}, MarkedIrrelevant: []string{"b"}, FreeTextFeedback: "ok"}},
		{"NoteFillsEmptyText", `{"marked_relevant":["a"]}`, " more ",
			skills.UserFeedback{MarkedRelevant: []string{"a"}, FreeTextFeedback: "more"}},
		{"UnknownPaper", `{"marked_relevant":["zzz"]}`, "n", skills.UserFeedback{FreeTextFeedback: "n"}},
		{"BothWays", `{"marked_relevant":["a"],"marked_irrelevant":["a"]}`, "n", skills.UserFeedback{FreeTextFeedback: "n"}},
		{"UnknownField", `{"relevant":["a"]}`, "n", skills.UserFeedback{FreeTextFeedback: "n"}},
		{"NotAnObject", `"just text"`, "n", skills.UserFeedback{FreeTextFeedback: "n"}},
		{"Trailing", `{"marked_relevant":["a"]} {}`, "n", skills.UserFeedback{FreeTextFeedback: "n"}},
		{"Empty", ``, "", skills.UserFeedback{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := engine.Decision{Action: engine.Edit, DecidedBy: "t", Note: tt.note}
			if tt.revised != "" {
				d.RevisedData = json.RawMessage(tt.revised)
			}
			require.Equal(t, tt.want, pipeline.CoerceFeedback(d, coll))
		})
	}
}

func TestRunWaitsForAPerson(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"})
	sw, err := pipeline.NewSearchWorkflow(sk, engine.Pending(), 2, true)
	require.NoError(t, err)
	_, ws, err := sw.Run(context.Background(), st, "sqlite durability")
	require.True(t, errors.Is(err, pipeline.ErrWaiting), "%v", err)
	require.Equal(t, engine.EConflict, engine.ErrorCode(err))
	require.Contains(t, err.Error(), pipeline.StepConfirmStrategy)
	require.False(t, ws.IsComplete)
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	sk, _ := fakeSkills(poolSource{"alpha"})
	tests := []struct {
		name      string
		mutate    func(*pipeline.Skills, *pipeline.Options)
		wantField string
	}{
		{"NoIntent", func(s *pipeline.Skills, _ *pipeline.Options) { s.Intent = nil }, "intent"},
		{"NoSources", func(s *pipeline.Skills, _ *pipeline.Options) { s.Sources = nil }, "sources"},
		{"DuplicateSource", func(s *pipeline.Skills, _ *pipeline.Options) {
			s.Sources = []skills.Source{poolSource{"a"}, poolSource{"a"}}
		}, "sources"},
		{"SearcherWithoutNames", func(s *pipeline.Skills, _ *pipeline.Options) { s.Searcher = namelessSearcher{} }, "searcher"},
		{"TooManyIterations", func(_ *pipeline.Skills, o *pipeline.Options) { o.MaxIterations = pipeline.MaxIterationsLimit + 1 }, "max_iterations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, o := sk, pipeline.Options{}
			tt.mutate(&s, &o)
			_, err := pipeline.New(s, o)
			require.Equal(t, engine.EInvalid, engine.ErrorCode(err))
			require.Contains(t, engine.ErrorFields(err), tt.wantField)
		})
	}
}

type namelessSearcher struct{}

func (namelessSearcher) Search(context.Context, skills.SearchStrategy) (skills.SearchResult, error) {
	return skills.SearchResult{}, nil
}

// TestStrategyApproveWithRevisedDataIsAnEdit: an API client that sends its
// changed strategy with "approve" gets it searched (validated like an
// edit), not the proposal it changed away from.
func TestStrategyApproveWithRevisedDataIsAnEdit(t *testing.T) {
	t.Parallel()
	revised, err := json.Marshal(skills.SearchStrategy{Queries: []skills.Query{{Text: "coffee"}}, Sources: []string{"alpha"}, MaxResultsPerSource: 5})
	require.NoError(t, err)
	eng, st, run, cp := waitAt(t, engine.KindStrategyConfirmation)
	bad := engine.Decision{Action: engine.Approve, DecidedBy: "test", RevisedData: json.RawMessage(`{"queries":[],"sources":["alpha"],"max_results_per_source":5}`)}
	require.Equal(t, engine.EInvalid, engine.ErrorCode(eng.Decide(context.Background(), run.ID, cp.ID, bad)), "validated like an edit")
	require.NoError(t, eng.Decide(context.Background(), run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "test", RevisedData: revised}))
	require.NoError(t, eng.Advance(context.Background(), run.ID))
	rs := stateOf(t, st, run.ID)
	require.Equal(t, "coffee", rs.Strategy.Queries[0].Text)
	require.Equal(t, []string{"alpha"}, rs.Strategy.Sources)
}
