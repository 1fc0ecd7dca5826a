package pipeline_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources"
)

// ticker is an injectable clock that moves one minute per call, so each
// search gets its own, predictable time.
func ticker(start time.Time) func() time.Time {
	n := 0
	return func() time.Time {
		n++
		return start.Add(time.Duration(n-1) * time.Minute)
	}
}

// drive runs a search over sk with the strategy checkpoint on, answering
// every checkpoint with decide (given the checkpoint and its review payload,
// if any), until the run completes. It returns the run's final state.
func drive(t *testing.T, sk pipeline.Skills, opts pipeline.Options,
	decide func(cp engine.Checkpoint, p *pipeline.ResultPayload) engine.Decision) pipeline.RunState {
	t.Helper()
	st := openStore(t)
	wf, err := pipeline.New(sk, opts)
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamStrategyCheckpoint: true})
	require.NoError(t, err)
	for range 20 {
		require.NoError(t, eng.Advance(ctx, run.ID))
		run, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		if run.Status == engine.StatusCompleted {
			return stateOf(t, st, run.ID)
		}
		require.Equal(t, engine.StatusWaiting, run.Status, run.Error)
		cp, _, err := st.Checkpoint(ctx, run.CheckpointID)
		require.NoError(t, err)
		var p *pipeline.ResultPayload
		if cp.Kind == pipeline.KindResultReview {
			rp, err := engine.PayloadAs[pipeline.ResultPayload](cp)
			require.NoError(t, err)
			p = &rp
		}
		d := decide(cp, p)
		d.DecidedBy = "test"
		require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, d))
	}
	t.Fatal("the run did not complete in 20 decisions")
	return pipeline.RunState{}
}

func TestIterationRecordsTheSearch(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	sk, _ := fakeSkills(poolSource{"alpha"}, failingSource{"down"})
	reviews := 0
	rs := drive(t, sk, pipeline.Options{Now: ticker(start)}, func(cp engine.Checkpoint, p *pipeline.ResultPayload) engine.Decision {
		switch {
		case cp.Kind == pipeline.KindStrategyConfirmation && cp.Iteration == 2:
			return engine.Decision{Action: engine.Reject, Note: "too broad"}
		case p == nil:
			return engine.Decision{Action: engine.Approve}
		}
		reviews++
		if reviews == 1 {
			return engine.Decision{Action: engine.Edit, RevisedData: mustJSON(t, research.UserFeedback{
				MarkedRelevant: []string{p.Collection.Papers[0].ID}, FreeTextFeedback: "more"})}
		}
		return engine.Decision{Action: engine.Approve}
	})
	h := rs.Workflow.History
	require.Len(t, h, 3, "searched, rejected, searched")

	first := h[0]
	require.Equal(t, 1, first.Iteration)
	require.True(t, first.Searched())
	require.Equal(t, start.UTC(), first.SearchedAt, "the injected clock, in UTC")
	require.Equal(t, time.UTC, first.SearchedAt.Location())
	require.Equal(t, []string{first.Strategy.Queries[0].Text}, first.Sources["alpha"].Queries, "the query as sent")
	require.Positive(t, first.Sources["alpha"].Count)
	require.Contains(t, first.Sources["down"].Error, "503")
	require.Equal(t, first.Sources["alpha"].Count, first.Dedup.Input)
	require.Equal(t, first.ResultCount, first.Dedup.Output)
	require.NotNil(t, first.Feedback)
	require.Equal(t, "more", first.Feedback.FreeTextFeedback)

	rejected := h[1]
	require.Equal(t, 2, rejected.Iteration)
	require.False(t, rejected.Searched(), "a rejected strategy was never searched")
	require.Empty(t, rejected.Sources)
	require.Equal(t, "too broad", rejected.Feedback.FreeTextFeedback)

	last := h[2]
	require.Equal(t, 3, last.Iteration)
	require.Equal(t, start.Add(time.Minute).UTC(), last.SearchedAt, "one clock reading per search")
	require.Equal(t, rs.Final.Sources, last.Sources)
	require.Equal(t, rs.Final.Dedup, last.Dedup)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// fixedSource returns the same papers whatever it is asked, so every
// iteration shows the same collection.
type fixedSource struct{ name string }

func (s fixedSource) Name() string { return s.name }

func (s fixedSource) Search(ctx context.Context, _ sources.SourceRequest) ([]research.RawPaper, error) {
	return slices.Clone(pool[:6]), ctx.Err()
}

// TestPaperNotesPersist: a note outlives the review it was written in, a
// later note replaces it and an empty one clears it.
func TestPaperNotesPersist(t *testing.T) {
	t.Parallel()
	sk, _ := fakeSkills(fixedSource{"alpha"})
	reviews := 0
	var a, b, c string
	rs := drive(t, sk, pipeline.Options{}, func(_ engine.Checkpoint, p *pipeline.ResultPayload) engine.Decision {
		if p == nil {
			return engine.Decision{Action: engine.Approve}
		}
		reviews++
		a, b, c = p.Collection.Papers[0].ID, p.Collection.Papers[1].ID, p.Collection.Papers[2].ID
		fb := research.UserFeedback{MarkedRelevant: []string{a}, MarkedIrrelevant: []string{b}}
		switch reviews {
		case 1:
			fb.PaperNotes = map[string]string{a: "  method fits; check n  ", b: "wrong population", c: "maybe"}
			return engine.Decision{Action: engine.Edit, RevisedData: mustJSON(t, fb)}
		default:
			fb.PaperNotes = map[string]string{b: "", c: "revisited"}
			return engine.Decision{Action: engine.Approve, RevisedData: mustJSON(t, fb)}
		}
	})
	require.Equal(t, 2, reviews)
	require.Equal(t, map[string]string{a: "method fits; check n", c: "revisited"}, rs.Workflow.PaperNotes)
	require.Equal(t, map[string]string{a: "  method fits; check n  ", b: "wrong population", c: "maybe"},
		rs.Workflow.History[0].Feedback.PaperNotes, "the history keeps what each review said")
}
