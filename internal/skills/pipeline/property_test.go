package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
)

// drawSources draws a configuration of one to four sources, some of which
// may fail or find nothing.
func drawSources(t *rapid.T) []sources.Source {
	kinds := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"alpha", "beta", "gamma", "down", "void"}), 1, 4,
		func(s string) string { return s }).Draw(t, "sources")
	out := make([]sources.Source, 0, len(kinds))
	for _, k := range kinds {
		switch k {
		case "down":
			out = append(out, failingSource{k})
		case "void":
			out = append(out, emptySource{k})
		default:
			out = append(out, poolSource{k})
		}
	}
	return out
}

func drawQuestion(t *rapid.T) string {
	words := rapid.SliceOfN(rapid.SampledFrom([]string{"sqlite", "durability", "wal", "raft", "crash", "index", "latency"}), 1, 5).Draw(t, "words")
	q := ""
	for _, w := range words {
		q += w + " "
	}
	return q + "?"
}

// TestPropNoHandlerEqualsAlwaysApprove: with nobody to ask, the run takes
// the same path as with a handler that approves everything.
func TestPropNoHandlerEqualsAlwaysApprove(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	rapid.Check(t, func(t *rapid.T) {
		sk, c := fakeSkills(drawSources(t)...)
		maxIter := rapid.IntRange(1, 6).Draw(t, "max_iterations")
		confirm := rapid.Bool().Draw(t, "strategy_checkpoint")
		question := drawQuestion(t)

		none, err := pipeline.NewSearchWorkflow(sk, nil, maxIter, confirm)
		require.NoError(t, err)
		approve, err := pipeline.NewSearchWorkflow(sk, engine.AlwaysApprove("test"), maxIter, confirm)
		require.NoError(t, err)

		got1, ws1, err := none.Run(context.Background(), st, question)
		require.NoError(t, err)
		got2, ws2, err := approve.Run(context.Background(), st, question)
		require.NoError(t, err)
		require.Equal(t, got1, got2)
		// The two runs searched at different moments; the rest is equal.
		require.Equal(t, withoutSearchTimes(ws1), withoutSearchTimes(ws2))
		require.True(t, ws1.IsComplete)
		require.Len(t, ws1.History, 1)
		require.NoError(t, got1.Validate())
		require.Empty(t, c.violations())
	})
}

// withoutSearchTimes clears when each iteration searched, for comparing
// the paths of runs that ran at different times.
func withoutSearchTimes(ws research.WorkflowState) research.WorkflowState {
	ws.History = slices.Clone(ws.History)
	for i := range ws.History {
		ws.History[i].SearchedAt = time.Time{}
	}
	return ws
}

// recorder is a checkpoint handler that draws each decision and remembers
// what it was shown, so properties can be checked against it.
type recorder struct {
	t           *rapid.T
	seq         []string // "strategy@1", "review@1", …
	collections []research.PaperCollection
	edits       map[int]research.SearchStrategy // iteration → edited strategy
	// coerced maps an iteration whose feedback named a paper outside the
	// collection (or marked one both ways) to the note it must become.
	coerced map[int]string
	sources []string
}

func (r *recorder) Handle(_ context.Context, cp engine.Checkpoint) (engine.Decision, error) {
	r.seq = append(r.seq, fmt.Sprintf("%s@%d", cp.Kind, cp.Iteration))
	action := rapid.SampledFrom(engine.DecisionActions()).Draw(r.t, "action")
	d := engine.Decision{Action: action, DecidedBy: "prop", Note: rapid.SampledFrom([]string{"", "more on raft", "exclude latency"}).Draw(r.t, "note")}
	switch p := cp.Payload.(type) {
	case pipeline.StrategyPayload:
		require.NoError(r.t, p.Intent.Validate(), "build→checkpoint 1: intent")
		require.NoError(r.t, p.Strategy.ValidateSources(r.sources), "build→checkpoint 1: strategy")
		if action == engine.Edit {
			s := p.Strategy
			s.Queries = []research.Query{{Text: rapid.SampledFrom([]string{"raft OR paxos", `"crash recovery" NOT fsync`, "wal index"}).Draw(r.t, "edited query"),
				PerSource: map[string]string{"alpha": "stale text"}}}
			s.Sources = s.Sources[:1+rapid.IntRange(0, len(s.Sources)-1).Draw(r.t, "keep sources")]
			b, err := json.Marshal(s)
			require.NoError(r.t, err)
			d.RevisedData = b
			r.edits[cp.Iteration] = s
		}
	case pipeline.ResultPayload:
		require.NoError(r.t, p.Collection.Validate(), "organize→checkpoint 2: collection")
		r.collections = append(r.collections, p.Collection)
		if action != engine.Approve {
			var fb research.UserFeedback
			for _, paper := range p.Collection.Papers {
				switch rapid.IntRange(0, 2).Draw(r.t, "mark") {
				case 1:
					fb.MarkedRelevant = append(fb.MarkedRelevant, paper.ID)
				case 2:
					fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, paper.ID)
				}
			}
			if rapid.Bool().Draw(r.t, "structured feedback") {
				switch rapid.IntRange(0, 3).Draw(r.t, "bad mark") {
				case 1:
					fb.MarkedRelevant = append(fb.MarkedRelevant, "doi:10.0/never-shown")
					r.coerced[cp.Iteration] = d.Note
				case 2:
					if len(fb.MarkedRelevant) > 0 {
						fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, fb.MarkedRelevant[0])
						r.coerced[cp.Iteration] = d.Note
					}
				}
				b, err := json.Marshal(fb)
				require.NoError(r.t, err)
				d.RevisedData = b
			} else {
				d.RevisedData = json.RawMessage(`"not feedback"`)
			}
		}
	default:
		r.t.Fatalf("unexpected payload %T at %s", cp.Payload, cp.Kind)
	}
	return d, nil
}

// TestPropRandomDecisions drives the pipeline with random decisions and
// checks the loop's invariants on every run.
func TestPropRandomDecisions(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	rapid.Check(t, func(t *rapid.T) {
		srcs := drawSources(t)
		sk, c := fakeSkills(srcs...)
		maxIter := rapid.IntRange(1, 5).Draw(t, "max_iterations")
		confirm := rapid.Bool().Draw(t, "strategy_checkpoint")
		names := make([]string, 0, len(srcs))
		for _, s := range srcs {
			names = append(names, s.Name())
		}
		rec := &recorder{t: t, edits: map[int]research.SearchStrategy{}, coerced: map[int]string{}, sources: names}
		wf, err := pipeline.New(sk, pipeline.Options{MaxIterations: maxIter})
		require.NoError(t, err)
		eng := newEngine(t, st, wf, pipeline.ReviewCoercer(rec)) // as NewSearchWorkflow wraps its handler
		run, err := eng.Start(context.Background(), pipeline.Name, map[string]any{
			pipeline.ParamQuestion: drawQuestion(t), pipeline.ParamStrategyCheckpoint: confirm})
		require.NoError(t, err)
		require.NoError(t, eng.Advance(context.Background(), run.ID))
		run, err = st.Run(context.Background(), run.ID)
		require.NoError(t, err)

		require.Equal(t, engine.StatusCompleted, run.Status, "run error: %s", run.Error)
		require.LessOrEqual(t, run.Iteration, maxIter)
		rs, err := pipeline.StateOf(run)
		require.NoError(t, err)
		require.True(t, rs.Workflow.IsComplete)
		require.NoError(t, rs.Workflow.Validate())
		require.LessOrEqual(t, len(rs.Workflow.History), maxIter)
		require.NotNil(t, rs.Final)
		require.NoError(t, rs.Final.Validate())
		require.Empty(t, c.violations())

		// Checkpoint 1 comes before checkpoint 2 in every iteration, and
		// each fires at most once per iteration.
		for i, s := range rec.seq {
			var it int
			for _, k := range []engine.CheckpointKind{pipeline.KindStrategyConfirmation, pipeline.KindResultReview} {
				if n, _ := fmt.Sscanf(s, string(k)+"@%d", &it); n == 1 {
					if k == pipeline.KindResultReview && confirm {
						require.Contains(t, rec.seq[:i], fmt.Sprintf("%s@%d", pipeline.KindStrategyConfirmation, it), "review before confirmation: %v", rec.seq)
					}
					require.NotContains(t, rec.seq[i+1:], s, "checkpoint fired twice: %v", rec.seq)
					require.LessOrEqual(t, it, maxIter)
				}
			}
		}
		if !confirm {
			require.NotContains(t, fmt.Sprint(rec.seq), string(pipeline.KindStrategyConfirmation))
		}

		// Every accumulated paper was in some iteration's collection, and
		// the final collection holds all of them.
		shown := map[string]bool{}
		for _, coll := range rec.collections {
			for _, p := range coll.Papers {
				shown[p.ID] = true
			}
		}
		for _, p := range rs.Workflow.AccumulatedPapers {
			require.True(t, shown[p.ID], "accumulated paper %s was never shown", p.ID)
			_, ok := rs.Final.Paper(p.ID)
			require.True(t, ok, "accumulated paper %s is missing from the final collection", p.ID)
		}
		// The final collection is what the researcher keeps: no paper
		// whose latest mark is irrelevant is in it.
		for _, p := range rs.MarkedIrrelevant {
			_, ok := rs.Final.Paper(p.ID)
			require.False(t, ok, "paper %s marked irrelevant is in the final collection", p.ID)
		}

		// Feedback that names a paper outside the collection, or marks one
		// both ways, is coerced to the decision's note.
		for _, h := range rs.Workflow.History {
			note, ok := rec.coerced[h.Iteration]
			if !ok {
				continue
			}
			require.NotNil(t, h.Feedback, "iteration %d", h.Iteration)
			require.Equal(t, research.UserFeedback{FreeTextFeedback: note}, *h.Feedback, "iteration %d", h.Iteration)
		}

		// An edited strategy is recorded with per-source text rendered from
		// the edited text, never the stale text sent with the edit.
		for _, h := range rs.Workflow.History {
			edited, ok := rec.edits[h.Iteration]
			if !ok {
				continue
			}
			require.Equal(t, edited.Sources, h.Strategy.Sources)
			for _, q := range h.Strategy.Queries {
				ast, err := query.Parse(q.Text)
				require.NoError(t, err)
				require.Equal(t, query.RenderAll(ast, h.Strategy.Sources), q.PerSource)
			}
		}
	})
}

// TestMaxOneAlwaysReject: one allowed iteration and a researcher who rejects
// everything still ends, after exactly one iteration, with a valid result.
func TestMaxOneAlwaysReject(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	reject := engine.HandlerFunc(func(context.Context, engine.Checkpoint) (engine.Decision, error) {
		return engine.Decision{Action: engine.Reject, DecidedBy: "test", Note: "no"}, nil
	})
	for _, confirm := range []bool{true, false} {
		t.Run(fmt.Sprintf("strategy_checkpoint=%v", confirm), func(t *testing.T) {
			t.Parallel()
			sk, _ := fakeSkills(poolSource{"alpha"})
			sw, err := pipeline.NewSearchWorkflow(sk, reject, 1, confirm)
			require.NoError(t, err)
			coll, ws, err := sw.Run(context.Background(), st, "sqlite durability")
			require.NoError(t, err)
			require.NoError(t, coll.Validate())
			require.True(t, ws.IsComplete)
			require.Len(t, ws.History, 1)
			require.Equal(t, 1, ws.History[0].Iteration)
			require.NotNil(t, ws.History[0].Feedback)
			require.Equal(t, "no", ws.History[0].Feedback.FreeTextFeedback)
		})
	}
}

// TestEdgeSources: empty results give a valid empty collection that is
// still reviewed; a failing source is recorded and the run completes.
func TestEdgeSources(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	tests := []struct {
		name      string
		sources   []sources.Source
		wantEmpty bool
		wantError string // source whose error must be recorded
	}{
		{"Empty", []sources.Source{emptySource{"void"}}, true, ""},
		{"OnlyFailing", []sources.Source{failingSource{"down"}}, true, "down"},
		{"OneFailing", []sources.Source{poolSource{"alpha"}, failingSource{"down"}}, false, "down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sk, c := fakeSkills(tt.sources...)
			var reviewed []research.PaperCollection
			h := engine.HandlerFunc(func(_ context.Context, cp engine.Checkpoint) (engine.Decision, error) {
				if p, ok := cp.Payload.(pipeline.ResultPayload); ok {
					reviewed = append(reviewed, p.Collection)
				}
				return engine.Decision{Action: engine.Approve, DecidedBy: "test"}, nil
			})
			sw, err := pipeline.NewSearchWorkflow(sk, h, 3, true)
			require.NoError(t, err)
			coll, ws, err := sw.Run(context.Background(), st, "sqlite durability")
			require.NoError(t, err)
			require.NoError(t, coll.Validate())
			require.True(t, ws.IsComplete)
			require.Len(t, reviewed, 1, "the review fires even for empty results")
			require.Equal(t, tt.wantEmpty, len(coll.Papers) == 0)
			require.NotNil(t, coll.Papers)
			if tt.wantError != "" {
				require.Contains(t, coll.Sources[tt.wantError].Error, "503")
			}
			require.Empty(t, c.violations())
		})
	}
}

// TestFeedbackLoop: the second iteration's builder and scorer see the
// first iteration's marks, and the marked paper survives into the final
// collection even when the last search did not find it again.
func TestFeedbackLoop(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"}, poolSource{"beta"})
	var seen []skills.QueryInput
	builder := sk.Queries
	sk.Queries = builderFunc(func(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error) {
		seen = append(seen, in)
		return builder.BuildStrategy(ctx, in)
	})
	var marked string
	h := engine.HandlerFunc(func(_ context.Context, cp engine.Checkpoint) (engine.Decision, error) {
		p, ok := cp.Payload.(pipeline.ResultPayload)
		if !ok || cp.Iteration > 1 || len(p.Collection.Papers) == 0 {
			return engine.Decision{Action: engine.Approve, DecidedBy: "test"}, nil
		}
		marked = p.Collection.Papers[0].ID
		b, _ := json.Marshal(research.UserFeedback{MarkedRelevant: []string{marked}, AddTerms: []string{"raft"}})
		return engine.Decision{Action: engine.Edit, DecidedBy: "test", RevisedData: b, Note: "more like this"}, nil
	})
	sw, err := pipeline.NewSearchWorkflow(sk, h, 3, false)
	require.NoError(t, err)
	coll, ws, err := sw.Run(context.Background(), st, "sqlite durability")
	require.NoError(t, err)
	require.NotEmpty(t, marked)
	require.Len(t, seen, 2)
	require.Len(t, seen[1].Previous, 1)
	require.Equal(t, []research.UserFeedback{{MarkedRelevant: []string{marked}, AddTerms: []string{"raft"}, FreeTextFeedback: "more like this"}}, seen[1].Feedback)
	require.Len(t, seen[1].Marked, 1)
	require.Equal(t, marked, seen[1].Marked[0].ID)
	require.Len(t, ws.History, 2)
	require.Len(t, ws.AccumulatedPapers, 1)
	_, ok := coll.Paper(marked)
	require.True(t, ok)
	require.NoError(t, coll.Validate())
}

type builderFunc func(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error)

func (f builderFunc) BuildStrategy(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error) {
	return f(ctx, in)
}
