package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// spendingIntent asks a model (it records a call of 100 tokens in and 10
// out on the run's meter) and then fails, as a parser whose answer and
// fallback both fail would.
type spendingIntent struct{}

func (spendingIntent) ParseIntent(ctx context.Context, q string) (research.ParsedIntent, error) {
	research.LLMMeterOf(ctx).Record(research.LLMCall{Model: "fake/m", TokensIn: 100, TokensOut: 10, Latency: time.Second})
	research.AddNote(ctx, research.Note{Skill: "intent_parser", Message: "asked and failed"})
	return research.ParsedIntent{}, errors.New("no intent")
}

// TestFailedStepKeepsItsLLMUsage: a step that fails keeps what its
// skills spent on language models in the run (each retry starting from
// it, so the run's budget counts every attempt), but not their notes or
// anything else of the attempt.
func TestFailedStepKeepsItsLLMUsage(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"})
	sk.Intent = spendingIntent{}
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, nil)
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sleep and memory consolidation"})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusEscalated, run.Status, "the parse step failed its three attempts")
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	require.NotNil(t, rs.LLMUsage, "the failed attempts' usage is stored with the run")
	require.Equal(t, research.LLMUsage{Calls: 3, TokensIn: 300, TokensOut: 30, Latency: 3 * time.Second}, *rs.LLMUsage)
	require.Empty(t, rs.Notes, "a failed attempt's notes are not kept")
	require.Nil(t, rs.Intent)
}

// TestGatherBranchesAddsEachBranchsSpend: a parallel stage's branches each
// metered from the run's usage at the fan-out; the join adds every
// branch's spend and new notes to the run's, once each.
func TestGatherBranchesAddsEachBranchsSpend(t *testing.T) {
	t.Parallel()
	state := func(u *research.LLMUsage, notes ...string) engine.State {
		s := engine.State{}
		if u != nil {
			require.NoError(t, s.Set("llm_usage", *u))
		}
		if len(notes) > 0 {
			var ns []research.Note
			for _, n := range notes {
				ns = append(ns, research.Note{Skill: "s", Message: n})
			}
			require.NoError(t, s.Set("notes", ns))
		}
		return s
	}
	base := research.LLMUsage{Calls: 1, TokensIn: 100, TokensOut: 10, Latency: time.Second}
	a := base.Plus(research.LLMUsage{Calls: 2, TokensIn: 50, TokensOut: 5, Latency: time.Second})
	b := base.Plus(research.LLMUsage{Calls: 1, TokensIn: 20, TokensOut: 2, Skipped: 1})
	u, err := pipeline.GatherBranches(state(&base, "before"), []engine.State{
		state(&a, "before", "from a"), state(&b, "before", "from b"), state(nil),
	})
	require.NoError(t, err)
	got, _, err := engine.Get[research.LLMUsage](u, "llm_usage")
	require.NoError(t, err)
	require.Equal(t, research.LLMUsage{Calls: 4, TokensIn: 170, TokensOut: 17, Latency: 2 * time.Second, Skipped: 1}, got)
	notes, _, err := engine.Get[[]research.Note](u, "notes")
	require.NoError(t, err)
	require.Equal(t, []string{"before", "from a", "from b"}, []string{notes[0].Message, notes[1].Message, notes[2].Message})
	require.Len(t, notes, 3)

	none, err := pipeline.GatherBranches(state(&base), []engine.State{state(nil), state(&base)})
	require.NoError(t, err)
	require.Empty(t, none, "branches that spent nothing add nothing")
}
