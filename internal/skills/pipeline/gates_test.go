package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
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
	good := research.SearchStrategy{Queries: []research.Query{{Text: "raft OR paxos"}}, Sources: []string{"alpha"}, MaxResultsPerSource: 5}
	with := func(f func(*research.SearchStrategy)) json.RawMessage {
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
		{"OK", with(func(*research.SearchStrategy) {}), "", ""},
		{"Missing", nil, fault.EInvalid, "revised_data"},
		{"NotAStrategy", json.RawMessage(`[1,2]`), fault.EInvalid, "revised_data"},
		{"NoQueries", with(func(s *research.SearchStrategy) { s.Queries = nil }), fault.EInvalid, "queries"},
		{"EmptyQuery", with(func(s *research.SearchStrategy) { s.Queries = []research.Query{{Text: " "}} }), fault.EInvalid, "queries[0].text"},
		{"Unparseable", with(func(s *research.SearchStrategy) { s.Queries = []research.Query{{Text: `"unbalanced`}} }), fault.EInvalid, "queries[0].text"},
		{"UnknownSource", with(func(s *research.SearchStrategy) { s.Sources = []string{"alpha", "nowhere"} }), fault.EInvalid, "sources[1]"},
		{"TooMany", with(func(s *research.SearchStrategy) { s.MaxResultsPerSource = research.MaxResultsLimit + 1 }), fault.EInvalid, "max_results_per_source"},
		// Keys the strategy does not have are refused, named by their path,
		// rather than dropped: the search would not be what was sent.
		{"UnknownField", json.RawMessage(`{"queries":[{"text":"raft OR paxos"}],"sources":["alpha"],"max_results_per_source":5,"max_results":9}`), fault.EInvalid, "max_results"},
		{"UnknownNestedField", json.RawMessage(`{"queries":[{"text":"raft OR paxos"}],"sources":["alpha"],"max_results_per_source":5,"filters":{"exclude":["x"]}}`), fault.EInvalid, "filters.exclude"},
		{"UnknownQueryField", json.RawMessage(`{"queries":[{"text":"raft"},{"txt":"paxos"}],"sources":["alpha"],"max_results_per_source":5}`), fault.EInvalid, "queries[1].txt"},
		{"FeedbackSentToStrategy", json.RawMessage(`{"marked_relevant":["x"],"free_text_feedback":"more"}`), fault.EInvalid, "marked_relevant"},
		{"WrongType", json.RawMessage(`{"queries":[{"text":"raft OR paxos"}],"sources":["alpha"],"max_results_per_source":"5"}`), fault.EInvalid, "max_results_per_source"},
		{"WrongNestedType", json.RawMessage(`{"queries":[{"text":"raft OR paxos"}],"sources":["alpha"],"max_results_per_source":5,"filters":{"include_terms":"adults"}}`), fault.EInvalid, "filters.include_terms"},
		{"NotAWholeNumber", json.RawMessage(`{"queries":[{"text":"raft OR paxos"}],"sources":["alpha"],"max_results_per_source":5.5}`), fault.EInvalid, "max_results_per_source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eng, st, run, cp := waitAt(t, pipeline.KindStrategyConfirmation)
			err := eng.Decide(context.Background(), run.ID, cp.ID, engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: tt.revised})
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "%v", err)
			if tt.wantField != "" {
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				requireUndecided(t, st, cp)
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
		{"MarkUnknown", engine.Edit, func(string) string { return `{"marked_relevant":["doi:10.1/nope"]}` }, fault.EInvalid, "marked_relevant[0]"},
		{"IrrelevantUnknown", engine.Reject, func(string) string { return `{"marked_irrelevant":["x"]}` }, fault.EInvalid, "marked_irrelevant[0]"},
		{"BothWays", engine.Edit, func(id string) string {
			return `{"marked_relevant":["` + id + `"],"marked_irrelevant":["` + id + `"]}`
		}, fault.EInvalid, "marked_irrelevant[0]"},
		{"NoData", engine.Reject, func(string) string { return "" }, "", ""},
		{"Empty", engine.Edit, func(string) string { return `{}` }, "", ""},
		// Revised data that is not feedback is refused, naming the field,
		// not coerced to the note: the marks in it would be lost.
		{"TypoInKey", engine.Edit, func(id string) string {
			return `{"marked_relevent":["` + id + `"],"free_text_feedback":"focus on trials"}`
		}, fault.EInvalid, "marked_relevent"},
		{"TypoOnApprove", engine.Approve, func(id string) string { return `{"marked_relevent":["` + id + `"]}` }, fault.EInvalid, "marked_relevent"},
		{"UnknownField", engine.Edit, func(string) string { return `{"bogus":1}` }, fault.EInvalid, "bogus"},
		{"StrategySentToReview", engine.Edit, func(string) string {
			return `{"queries":[{"text":"raft"}],"sources":["alpha"],"max_results_per_source":5}`
		}, fault.EInvalid, "queries"},
		{"NotAnObject", engine.Reject, func(string) string { return `"free text"` }, fault.EInvalid, "revised_data"},
		{"MarksNotAList", engine.Edit, func(id string) string { return `{"marked_relevant":"` + id + `"}` }, fault.EInvalid, "marked_relevant"},
		{"MarkNotAString", engine.Edit, func(string) string { return `{"marked_irrelevant":[7]}` }, fault.EInvalid, "marked_irrelevant[0]"},
		{"NoteNotAString", engine.Edit, func(id string) string { return `{"paper_notes":{"` + id + `":true}}` }, fault.EInvalid, "paper_notes[doi:"},
		{"TextNotAString", engine.Edit, func(string) string { return `{"free_text_feedback":["a"]}` }, fault.EInvalid, "free_text_feedback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eng, st, run, cp := waitAt(t, pipeline.KindResultReview)
			p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
			require.NoError(t, err)
			require.NotEmpty(t, p.Collection.Papers)
			d := engine.Decision{Action: tt.action, DecidedBy: "test", Note: "n"}
			if r := tt.revised(p.Collection.Papers[0].ID); r != "" {
				d.RevisedData = json.RawMessage(r)
			}
			err = eng.Decide(context.Background(), run.ID, cp.ID, d)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "%v", err)
			if tt.wantField != "" {
				requireField(t, err, tt.wantField)
				requireUndecided(t, st, cp)
				return
			}
			// The run goes back to build, never parse, for iteration 2.
			require.NoError(t, eng.Advance(context.Background(), run.ID))
			rs := stateOf(t, st, run.ID)
			require.Len(t, rs.Workflow.History, 1)
			require.NotNil(t, rs.Workflow.History[0].Feedback)
			require.Equal(t, 2, rs.Workflow.CurrentIteration)
			require.Equal(t, []research.Note{{Skill: "intent", Message: "parsed offline"}}, rs.Notes[:1], "parse runs once")
		})
	}
}

// requireField checks that err names a field starting with prefix (a
// paper's ID is part of its note's field name).
func requireField(t *testing.T, err error, prefix string) {
	t.Helper()
	for f := range fault.ErrorFields(err) {
		if strings.HasPrefix(f, prefix) {
			return
		}
	}
	require.Failf(t, "no such field", "%q not in %v", prefix, fault.ErrorFields(err))
}

// requireUndecided checks that a refused decision left nothing behind: the
// checkpoint is still pending, with no decision recorded.
func requireUndecided(t *testing.T, st *store.Store, cp engine.Checkpoint) {
	t.Helper()
	got, dec, err := st.Checkpoint(context.Background(), cp.ID)
	require.NoError(t, err)
	require.Nil(t, dec)
	require.Equal(t, engine.CheckpointPending, got.Status)
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
	coll := research.PaperCollection{Papers: []research.ScoredPaper{
		{RawPaper: research.RawPaper{ID: "a", Title: "A"}, Score: 0.5},
		{RawPaper: research.RawPaper{ID: "b", Title: "B"}, Score: 0.4},
	}}
	tests := []struct {
		name    string
		revised string
		note    string
		want    research.UserFeedback
	}{
		{"Valid", `{"marked_relevant":["a"],"marked_irrelevant":["b"],"free_text_feedback":"ok"}`, "n",
			research.UserFeedback{MarkedRelevant: []string{"a"}, MarkedIrrelevant: []string{"b"}, FreeTextFeedback: "ok"}},
		{"NoteFillsEmptyText", `{"marked_relevant":["a"]}`, " more ",
			research.UserFeedback{MarkedRelevant: []string{"a"}, FreeTextFeedback: "more"}},
		{"UnknownPaper", `{"marked_relevant":["zzz"]}`, "n", research.UserFeedback{FreeTextFeedback: "n"}},
		{"BothWays", `{"marked_relevant":["a"],"marked_irrelevant":["a"]}`, "n", research.UserFeedback{FreeTextFeedback: "n"}},
		{"UnknownField", `{"relevant":["a"]}`, "n", research.UserFeedback{FreeTextFeedback: "n"}},
		{"NotAnObject", `"just text"`, "n", research.UserFeedback{FreeTextFeedback: "n"}},
		{"Trailing", `{"marked_relevant":["a"]} {}`, "n", research.UserFeedback{FreeTextFeedback: "n"}},
		{"Empty", ``, "", research.UserFeedback{}},
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
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
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
			s.Sources = []sources.Source{poolSource{"a"}, poolSource{"a"}}
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
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.Contains(t, fault.ErrorFields(err), tt.wantField)
		})
	}
}

type namelessSearcher struct{}

func (namelessSearcher) Search(context.Context, research.SearchStrategy) (skills.SearchResult, error) {
	return skills.SearchResult{}, nil
}

// TestStrategyApproveWithRevisedDataIsAnEdit: an API client that sends its
// changed strategy with "approve" gets it searched (validated like an
// edit), not the proposal it changed away from.
func TestStrategyApproveWithRevisedDataIsAnEdit(t *testing.T) {
	t.Parallel()
	revised, err := json.Marshal(research.SearchStrategy{Queries: []research.Query{{Text: "coffee"}}, Sources: []string{"alpha"}, MaxResultsPerSource: 5})
	require.NoError(t, err)
	eng, st, run, cp := waitAt(t, pipeline.KindStrategyConfirmation)
	bad := engine.Decision{Action: engine.Approve, DecidedBy: "test", RevisedData: json.RawMessage(`{"queries":[],"sources":["alpha"],"max_results_per_source":5}`)}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(eng.Decide(context.Background(), run.ID, cp.ID, bad)), "validated like an edit")
	require.NoError(t, eng.Decide(context.Background(), run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "test", RevisedData: revised}))
	require.NoError(t, eng.Advance(context.Background(), run.ID))
	rs := stateOf(t, st, run.ID)
	require.Equal(t, "coffee", rs.Strategy.Queries[0].Text)
	require.Equal(t, []string{"alpha"}, rs.Strategy.Sources)
}

// TestInProcessReviewDecisionsAreCoerced: an in-process handler has nobody
// to show a 422 to, so revised data that is not valid feedback (a typo in a
// key, not an object, a mark of a paper it was not shown) becomes the
// decision's note, and the run iterates instead of escalating.
func TestInProcessReviewDecisionsAreCoerced(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		revised func(shown string) string
	}{
		{"TypoInKey", func(id string) string { return `{"marked_relevent":["` + id + `"]}` }},
		{"NotAnObject", func(string) string { return `"free text"` }},
		{"WrongType", func(id string) string { return `{"marked_relevant":"` + id + `"}` }},
		{"UnknownPaper", func(string) string { return `{"marked_relevant":["doi:10.0/never-shown"]}` }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := openStore(t)
			sk, _ := fakeSkills(poolSource{"alpha"})
			h := engine.HandlerFunc(func(_ context.Context, cp engine.Checkpoint) (engine.Decision, error) {
				p, ok := cp.Payload.(pipeline.ResultPayload)
				if !ok || cp.Iteration > 1 || len(p.Collection.Papers) == 0 {
					return engine.Decision{Action: engine.Approve, DecidedBy: "test"}, nil
				}
				return engine.Decision{Action: engine.Edit, DecidedBy: "test", Note: "focus on trials",
					RevisedData: json.RawMessage(tt.revised(p.Collection.Papers[0].ID))}, nil
			})
			sw, err := pipeline.NewSearchWorkflow(sk, h, 2, false)
			require.NoError(t, err)
			_, ws, err := sw.Run(context.Background(), st, "sqlite durability")
			require.NoError(t, err)
			require.Len(t, ws.History, 2)
			require.Equal(t, &research.UserFeedback{FreeTextFeedback: "focus on trials"}, ws.History[0].Feedback)
			require.Empty(t, ws.AccumulatedPapers)
		})
	}
}
