package runview_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
)

// decidedAt is when every test decision was made and every test search ran.
func decidedAt() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

func paper(id string) research.ScoredPaper {
	return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: "Paper " + id}}
}

func strategy(queries ...string) research.SearchStrategy {
	s := research.SearchStrategy{Sources: []string{"local"}}
	for _, q := range queries {
		s.Queries = append(s.Queries, research.Query{Text: q})
	}
	return s
}

// strategyCP is a pending strategy checkpoint proposing queries.
func strategyCP(id string, iteration int, queries ...string) runview.Checkpoint {
	return runview.Checkpoint{Checkpoint: engine.Checkpoint{ID: id, Kind: pipeline.KindStrategyConfirmation, Iteration: iteration,
		Status: engine.CheckpointPending, Payload: pipeline.StrategyPayload{Strategy: strategy(queries...), Iteration: iteration}}}
}

// reviewCP is a pending result review of papers, with accumulated papers
// kept from earlier iterations.
func reviewCP(id string, iteration int, papers, accumulated []research.ScoredPaper) runview.Checkpoint {
	return runview.Checkpoint{Checkpoint: engine.Checkpoint{ID: id, Kind: pipeline.KindResultReview, Iteration: iteration,
		Status: engine.CheckpointPending, Payload: pipeline.ResultPayload{Collection: research.PaperCollection{Papers: papers},
			AccumulatedPapers: accumulated, Iteration: iteration}}}
}

// decided is cp with a decision by ann (revised is its revised data).
func decided(t *testing.T, cp runview.Checkpoint, action engine.DecisionAction, revised any) runview.Checkpoint {
	t.Helper()
	cp.Checkpoint.Status = engine.CheckpointDecided
	d := &engine.DecisionRecord{Decision: engine.Decision{Action: action, DecidedBy: "ann", Note: "n"}, CheckpointID: cp.Checkpoint.ID, DecidedAt: decidedAt()}
	if revised != nil {
		raw, err := json.Marshal(revised)
		require.NoError(t, err)
		d.RevisedData = raw
	}
	cp.Decision = d
	return cp
}

// searchRun is a search run with the pipeline's state keys set from kv
// (key, value, key, value…), as the pipeline's steps write them.
func searchRun(t *testing.T, status engine.Status, iteration int, checkpointID string, kv ...any) engine.Run {
	t.Helper()
	run := engine.Run{ID: "r1", Workflow: pipeline.Name, Status: status, Iteration: iteration, CheckpointID: checkpointID,
		Params: engine.Params{pipeline.ParamQuestion: "sleep and memory"}}
	for i := 0; i < len(kv); i += 2 {
		require.NoError(t, run.State.Set(kv[i].(string), kv[i+1]))
	}
	return run
}

// iter is what a test checks of one iteration of the history.
type iter struct {
	N                int
	Queries          []string
	Results          int
	Searched, Done   bool
	StrategyRejected bool
	Reason           string
}

// summary is what a test checks of a view: IDs instead of whole papers.
type summary struct {
	Pending     string
	History     []iter
	Accumulated []string
	// Collection is what the API shows; Final what the page shows once
	// the run is complete (nil: no final collection to show).
	Collection []string
	Final      []string
	Decisions  []string
}

func ids(ps []research.ScoredPaper) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

func summarize(v runview.View) summary {
	var s summary
	if v.Pending != nil {
		s.Pending = v.Pending.ID
	}
	for _, h := range v.History {
		it := iter{N: h.Iteration, Results: h.ResultCount, Searched: h.Searched, Done: h.Done,
			StrategyRejected: h.StrategyRejected, Reason: h.NotSearchedReason}
		for _, q := range h.Strategy.Queries {
			it.Queries = append(it.Queries, q.Text)
		}
		s.History = append(s.History, it)
	}
	s.Accumulated = ids(v.Accumulated)
	if c := v.Collection(); c != nil {
		s.Collection = ids(c.Papers)
	}
	if f, ok := v.FinalCollection(); ok {
		s.Final = append([]string{}, ids(f.Papers)...)
	}
	for _, d := range v.Decisions {
		s.Decisions = append(s.Decisions, fmt.Sprintf("%s %d %s by %s", d.Kind, d.Iteration, d.Action, d.By))
	}
	return s
}

func TestBuild(t *testing.T) {
	t.Parallel()
	a, b, c := paper("a"), paper("b"), paper("c")
	searched := research.IterationRecord{Iteration: 1, Strategy: strategy("q1"), ResultCount: 2, SearchedAt: decidedAt()}

	tests := []struct {
		name string
		run  func(t *testing.T) engine.Run
		cps  func(t *testing.T) []runview.Checkpoint
		want summary
	}{
		{
			name: "StrategyPendingIsNotSearchedYet",
			run:  func(t *testing.T) engine.Run { return searchRun(t, engine.StatusWaiting, 1, "s1") },
			cps:  func(*testing.T) []runview.Checkpoint { return []runview.Checkpoint{strategyCP("s1", 1, "q1")} },
			want: summary{Pending: "s1", History: []iter{{N: 1, Queries: []string{"q1"}, Reason: runview.ReasonNotYet}}},
		},
		{
			// The pipeline records a rejected strategy's iteration with 0
			// results: it must not read as a search that found nothing.
			name: "RejectedStrategyIsNotAnEmptySearch",
			run: func(t *testing.T) engine.Run {
				return searchRun(t, engine.StatusWaiting, 2, "s2", "workflow",
					research.WorkflowState{CurrentIteration: 2, History: []research.IterationRecord{{Iteration: 1, Strategy: strategy("q1")}}})
			},
			cps: func(t *testing.T) []runview.Checkpoint {
				return []runview.Checkpoint{decided(t, strategyCP("s1", 1, "q1"), engine.Reject, nil), strategyCP("s2", 2, "q2")}
			},
			want: summary{Pending: "s2",
				History: []iter{
					{N: 1, Queries: []string{"q1"}, Done: true, StrategyRejected: true, Reason: runview.ReasonRejected},
					{N: 2, Queries: []string{"q2"}, Reason: runview.ReasonNotYet},
				},
				Decisions: []string{"strategy_confirmation 1 reject by ann"}},
		},
		{
			name: "SearchedIterationHasItsCount",
			run: func(t *testing.T) engine.Run {
				return searchRun(t, engine.StatusWaiting, 1, "r1", "workflow",
					research.WorkflowState{CurrentIteration: 1, History: []research.IterationRecord{searched}})
			},
			cps: func(t *testing.T) []runview.Checkpoint {
				return []runview.Checkpoint{decided(t, strategyCP("s1", 1, "q1"), engine.Approve, nil),
					reviewCP("r1", 1, []research.ScoredPaper{a, b}, nil)}
			},
			want: summary{Pending: "r1",
				History:    []iter{{N: 1, Queries: []string{"q1"}, Results: 2, Searched: true, Done: true}},
				Collection: []string{"a", "b"}, Decisions: []string{"strategy_confirmation 1 approve by ann"}},
		},
		{
			name: "EditedStrategyIsTheOneShown",
			run:  func(t *testing.T) engine.Run { return searchRun(t, engine.StatusRunning, 1, "") },
			cps: func(t *testing.T) []runview.Checkpoint {
				return []runview.Checkpoint{decided(t, strategyCP("s1", 1, "q1"), engine.Edit, strategy("q1 edited"))}
			},
			want: summary{History: []iter{{N: 1, Queries: []string{"q1 edited"}, Reason: runview.ReasonNotYet}},
				Decisions: []string{"strategy_confirmation 1 edit by ann"}},
		},
		{
			name: "RunEndedBeforeTheSearch",
			run:  func(t *testing.T) engine.Run { return searchRun(t, engine.StatusCanceled, 1, "") },
			cps: func(*testing.T) []runview.Checkpoint {
				cp := strategyCP("s1", 1, "q1")
				cp.Checkpoint.Status = engine.CheckpointExpired
				return []runview.Checkpoint{cp}
			},
			want: summary{History: []iter{{N: 1, Queries: []string{"q1"}, Reason: runview.ReasonRunStopped}}},
		},
		{
			// Another workflow has no pipeline state: reaching a result
			// review is what says its iteration was searched, even when
			// the search found nothing, and the last review's relevant
			// marks join the accumulated papers.
			name: "OtherWorkflowReviewedIsSearched",
			run: func(*testing.T) engine.Run {
				return engine.Run{ID: "r1", Workflow: "screen", Status: engine.StatusCompleted, Iteration: 2}
			},
			cps: func(t *testing.T) []runview.Checkpoint {
				return []runview.Checkpoint{
					decided(t, reviewCP("r1", 1, nil, nil), engine.Edit, research.UserFeedback{FreeTextFeedback: "more"}),
					decided(t, reviewCP("r2", 2, []research.ScoredPaper{b, c}, []research.ScoredPaper{a}), engine.Approve,
						research.UserFeedback{MarkedRelevant: []string{"c"}}),
				}
			},
			want: summary{
				History:     []iter{{N: 1, Searched: true, Done: true}, {N: 2, Results: 2, Searched: true, Done: true}},
				Accumulated: []string{"a", "c"}, Collection: []string{"b", "c"}, Final: []string{"b", "c"},
				Decisions: []string{"result_review 1 edit by ann", "result_review 2 approve by ann"}},
		},
		{
			name: "PipelineAccumulatedPapersWin",
			run: func(t *testing.T) engine.Run {
				return searchRun(t, engine.StatusWaiting, 1, "r1", "workflow",
					research.WorkflowState{History: []research.IterationRecord{searched}, AccumulatedPapers: []research.ScoredPaper{c}})
			},
			cps: func(*testing.T) []runview.Checkpoint {
				return []runview.Checkpoint{reviewCP("r1", 1, []research.ScoredPaper{a, b}, []research.ScoredPaper{a})}
			},
			want: summary{Pending: "r1", History: []iter{{N: 1, Queries: []string{"q1"}, Results: 2, Searched: true, Done: true}},
				Accumulated: []string{"c"}, Collection: []string{"a", "b"}},
		},
		{
			// Runs finalised before papers marked irrelevant were left out
			// still hold them: the page leaves them out, the API shows the
			// collection as stored.
			name: "FinalLeavesOutPapersMarkedIrrelevant",
			run: func(t *testing.T) engine.Run {
				return searchRun(t, engine.StatusCompleted, 1, "", "workflow",
					research.WorkflowState{History: []research.IterationRecord{searched}},
					"final", research.PaperCollection{Papers: []research.ScoredPaper{a, b, c}},
					"marked_irrelevant", []research.ScoredPaper{b})
			},
			cps: func(*testing.T) []runview.Checkpoint { return nil },
			want: summary{History: []iter{{N: 1, Queries: []string{"q1"}, Results: 2, Searched: true, Done: true}},
				Collection: []string{"a", "b", "c"}, Final: []string{"a", "c"}},
		},
		{
			name: "FinalShownOnlyOnceComplete",
			run: func(t *testing.T) engine.Run {
				return searchRun(t, engine.StatusRunning, 1, "", "final", research.PaperCollection{Papers: []research.ScoredPaper{a}})
			},
			cps:  func(*testing.T) []runview.Checkpoint { return nil },
			want: summary{Collection: []string{"a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := runview.Build(tt.run(t), tt.cps(t))
			require.NoError(t, err)
			require.Equal(t, tt.want, summarize(v))
		})
	}
}

// TestBuildCarriesTheRunsOwnRecords: a stored payload (raw JSON, as the
// store reads it) decodes like a typed one, and the question, notes and
// paper notes come from the run.
func TestBuildCarriesTheRunsOwnRecords(t *testing.T) {
	t.Parallel()
	notes := []research.Note{{Skill: "intent", Message: "fell back"}}
	run := searchRun(t, engine.StatusWaiting, 1, "s1", "notes", notes,
		"workflow", research.WorkflowState{PaperNotes: map[string]string{"a": "read later"}})
	raw, err := json.Marshal(pipeline.StrategyPayload{Strategy: strategy("stored"), Iteration: 1})
	require.NoError(t, err)
	cp := runview.Checkpoint{Checkpoint: engine.Checkpoint{ID: "s1", Kind: pipeline.KindStrategyConfirmation, Iteration: 1,
		Status: engine.CheckpointPending, Payload: engine.RawPayload{Kind: pipeline.KindStrategyConfirmation, JSON: raw}}}

	v, err := runview.Build(run, []runview.Checkpoint{cp})
	require.NoError(t, err)
	require.Equal(t, "sleep and memory", v.Question)
	require.Equal(t, notes, v.Notes)
	require.Equal(t, map[string]string{"a": "read later"}, v.PaperNotes)
	require.Len(t, v.History, 1)
	require.Equal(t, "stored", v.History[0].Strategy.Queries[0].Text)
}

func TestBuildRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		run      engine.Run
		cps      []runview.Checkpoint
		wantCode string
	}{
		{"PayloadOfAnotherShape", engine.Run{ID: "r1", Workflow: "screen"},
			[]runview.Checkpoint{{Checkpoint: engine.Checkpoint{ID: "s1", Kind: pipeline.KindStrategyConfirmation,
				Payload: engine.RawPayload{Kind: pipeline.KindStrategyConfirmation, JSON: json.RawMessage(`[1]`)}}}},
			fault.EInvalid},
		{"CorruptSearchState", engine.Run{ID: "r1", Workflow: pipeline.Name, State: engine.State{"workflow": json.RawMessage(`[1]`)}},
			nil, fault.EInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := runview.Build(tt.run, tt.cps)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
		})
	}
}

// TestIterationFoundSaysWhatTheLimitCut: the run page's history and the
// API say per source "25 shown of 49 found", in the strategy's order,
// an attached file after.
func TestIterationFoundSaysWhatTheLimitCut(t *testing.T) {
	t.Parallel()
	it := runview.Iteration{IterationRecord: research.IterationRecord{
		Strategy: research.SearchStrategy{Sources: []string{"local", "crossref"}},
		Sources: map[string]research.SourceResult{
			"file: a.ris": {Count: 4},
			"crossref":    {Count: 2, Queries: []string{"q"}, QueryResults: []research.QueryResult{{Count: 2}}},
			"local":       {Count: 25, Queries: []string{"q"}, QueryResults: []research.QueryResult{{Count: 25, Total: 49}}},
		},
	}}
	got := it.Found()
	require.Len(t, got, 3)
	require.Equal(t, runview.SourceFound{Source: "local", Found: research.Found{Shown: 25, Total: 49}, Text: "25 shown of 49 found"}, got[0])
	require.Equal(t, "crossref", got[1].Source)
	require.Equal(t, "2 found", got[1].Text)
	require.Equal(t, "file: a.ris", got[2].Source)
	require.Nil(t, runview.Iteration{}.Found(), "nothing searched yet")
}

// TestBuildShowMoreIsNoFeedback: a review's "Show more" is recorded as an
// edit decision, but it decided nothing about the papers: the history
// shows it as showing more, the iteration has no feedback from it, and
// the review it led to is the one pending.
func TestBuildShowMoreIsNoFeedback(t *testing.T) {
	t.Parallel()
	first := reviewCP("r1", 1, []research.ScoredPaper{paper("a")}, nil)
	first.Checkpoint.Status = engine.CheckpointDecided
	d := pipeline.ShowMoreDecision("ann", "  more on naps ")
	first.Decision = &engine.DecisionRecord{Decision: d, CheckpointID: "r1", DecidedAt: decidedAt()}
	second := reviewCP("r2", 1, []research.ScoredPaper{paper("a"), paper("b")}, nil)
	run := searchRun(t, engine.StatusWaiting, 1, "r2")
	v, err := runview.Build(run, []runview.Checkpoint{first, second})
	require.NoError(t, err)
	require.Len(t, v.Decisions, 1)
	require.True(t, v.Decisions[0].ShowMore)
	require.Equal(t, "more on naps", v.Decisions[0].Draft, "the feedback typed before showing more is kept as a draft")
	require.Equal(t, "r2", v.Pending.ID)
	require.Len(t, v.History, 1)
	require.Nil(t, v.History[0].Feedback)
	require.Equal(t, 2, v.History[0].ResultCount)
}
