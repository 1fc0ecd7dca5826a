package intent_test

import (
	"context"
	"quarry/internal/skills/intent"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseIntentSplitsLongPhrases checks that a run of three or more
// content words that is no synonym-table term becomes its parts where the
// question shows where they are (an acronym typed in capitals leading the
// run, a generic head such as "therapies" or "programmes" ending it, or four
// words and more), while terms of art stay whole.
func TestParseIntentSplitsLongPhrases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		want     []string // the concepts, in any order
	}{
		{"CRISPR genome editing therapies", []string{"crispr", "genome editing", "therapies"}},
		{"EEG seizure detection", []string{"eeg", "seizure detection"}},
		{"fall prevention programmes", []string{"fall prevention", "programmes"}},
		{"acute kidney injury biomarkers", []string{"acute kidney injury", "biomarkers"}},
		{"blood pressure measurement accuracy", []string{"blood pressure", "measurement accuracy"}},
		// Terms of art stay whole: a synonym-table term, three words with
		// nothing to split at, adjectives that need their noun.
		{"graph neural networks for drug discovery", []string{"graph neural networks", "drug discovery"}},
		{"calcium channel blockers", []string{"calcium channel blockers"}},
		{"borderline personality disorder", []string{"borderline personality disorder"}},
		{"heart rate variability", []string{"heart rate variability"}},
		{"chronic obstructive pulmonary disease", []string{"chronic obstructive pulmonary disease"}},
		{"technical debt in open source software", []string{"technical debt", "open source software"}},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		got, err := p.ParseIntent(context.Background(), tt.question)
		require.NoError(t, err)
		require.ElementsMatch(t, tt.want, conceptTerms(got), tt.question)
	}
}
