package intent_test

import (
	"context"
	"quarry/internal/skills/intent"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseIntentPopulationRanksLast checks that who or where a question
// is about ("in older adults", "among teenagers", "in nursing homes") ranks
// after what it is about: the query builder's broad query takes the top two
// concepts, and a population there pushed out part of the subject.
func TestParseIntentPopulationRanksLast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		subject  []string // the top concepts, in any order
		last     string   // the population or setting
	}{
		{"sleep and memory consolidation in older adults", []string{"sleep", "memory consolidation"}, "older adults"},
		{"yoga interventions for depression among teenagers", []string{"yoga interventions", "depression"}, "teenagers"},
		{"social media use and depression in adolescents", []string{"social media", "depression"}, "adolescents"},
		{"fall prevention programmes in nursing homes", []string{"fall prevention", "programmes"}, "nursing homes"},
		{"mortality of sepsis in the intensive care unit", []string{"mortality", "sepsis"}, "intensive care unit"},
		{"vitamin d supplementation for pregnant women", []string{"vitamin d supplementation"}, "pregnant women"},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		got, err := p.ParseIntent(context.Background(), tt.question)
		require.NoError(t, err)
		terms := conceptTerms(got)
		require.GreaterOrEqual(t, len(terms), len(tt.subject)+1, tt.question)
		require.ElementsMatch(t, tt.subject, terms[:len(tt.subject)], tt.question)
		require.Equal(t, tt.last, terms[len(terms)-1], tt.question)
	}
}

// TestParseIntentSubjectNotDemoted checks that a phrase after "for" or "in"
// that names no population or setting keeps its rank: "for image
// segmentation" is the subject, not who it is about.
func TestParseIntentSubjectNotDemoted(t *testing.T) {
	t.Parallel()
	p := intent.New(june2025)
	got, err := p.ParseIntent(context.Background(), "transformers in image segmentation")
	require.NoError(t, err)
	require.Equal(t, []string{"image segmentation", "transformers"}, conceptTerms(got))
}
