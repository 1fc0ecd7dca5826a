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
