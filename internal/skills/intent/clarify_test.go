package intent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/intent"
)

var _ skills.Clarifier = (*intent.Parser)(nil)

// TestClarify: the offline heuristics ask about an acronym with several
// readings the question does not spell out, the group of people a
// question about people leaves open, and the years; never more than
// three questions, each with two or three options, and nothing when the
// question says it all.
func TestClarify(t *testing.T) {
	t.Parallel()
	p := intent.New(func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) })
	tests := []struct {
		question string
		want     []string // question IDs in order
	}{
		{"Does CBT reduce insomnia?", []string{"acronym-cbt", "population", "time_frame"}},
		{"Does cognitive behavioural therapy (CBT) reduce insomnia in adults since 2015?", nil},
		{"sqlite durability since 2010", nil},
		{"sqlite durability", []string{"time_frame"}},
		{"depression treatment in older adults in the last 5 years", nil},
		{"depression treatment published between 2010 and 2020", []string{"population"}},
		{"NLP, MS and PD: a review", []string{"acronym-nlp", "acronym-ms", "acronym-pd"}},
		{"CBT or cbt or CBT for teenagers", []string{"acronym-cbt", "time_frame"}},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			t.Parallel()
			in, err := p.ParseIntent(context.Background(), tt.question)
			require.NoError(t, err)
			qs, err := p.Clarify(context.Background(), tt.question, in)
			require.NoError(t, err)
			require.NoError(t, research.ValidateQuestions(qs))
			var ids []string
			for _, q := range qs {
				ids = append(ids, q.ID)
				require.GreaterOrEqual(t, len(q.Options), research.MinClarifyOptions)
				require.LessOrEqual(t, len(q.Options), research.MaxClarifyOptions)
			}
			require.Equal(t, tt.want, ids)
			require.LessOrEqual(t, len(qs), research.MaxClarifyingQuestions)
		})
	}
}

// TestClarifyAnswersShapeTheIntent: answering the offline questions
// expands the acronym, adds the group and sets the years.
func TestClarifyAnswersShapeTheIntent(t *testing.T) {
	t.Parallel()
	p := intent.New(func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) })
	const q = "Does CBT reduce insomnia?"
	in, err := p.ParseIntent(context.Background(), q)
	require.NoError(t, err)
	qs, err := p.Clarify(context.Background(), q, in)
	require.NoError(t, err)
	got, err := research.ApplyAnswers(in, qs, research.ClarifyAnswers{"acronym-cbt": "cognitive behavioural therapy", "population": "Adults", "time_frame": "The last 5 years"})
	require.NoError(t, err)
	require.Equal(t, research.YearRange{From: 2020, To: 2025}, got.YearRange)
	require.Contains(t, got.Concepts, research.Concept{Term: "adults"})
	var expanded bool
	for _, c := range got.Concepts {
		if c.Term == "cognitive behavioural therapy" {
			expanded = true
			require.Contains(t, c.Synonyms, "cbt", "the acronym stays a synonym")
		}
	}
	require.True(t, expanded, "%+v", got.Concepts)
}
