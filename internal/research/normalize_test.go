package research_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
)

func TestCompounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"Empty", "", nil},
		{"NoHyphen", "pretraining of language models", nil},
		{"Joined", "Pre-training and fine-tuning", []string{"pretraining", "finetuning"}},
		{"ManyParts", "state-of-the-art results", []string{"stateoftheart"}},
		{"Digits", "COVID-19 and IL-6, 2015-2020", []string{"covid19", "il6"}},
		{"UnicodeHyphenAndAccents", "naïve\u2010Bayes", []string{"naivebayes"}},
		{"DanglingOrSpacedHyphens", "pre- and post-operative; a - b; x--y", []string{"postoperative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, research.Compounds(tt.in))
		})
	}
}

// TestCompoundsArePartsJoined checks, for any text, that every compound is
// made of consecutive words of the text, so indexing it can only add the
// joined spelling of words the text really contains.
func TestCompoundsArePartsJoined(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[a-zA-Z0-9 \-]{0,40}`).Draw(t, "s")
		joined := strings.ReplaceAll(strings.Join(strings.Fields(strings.ToLower(s)), " "), "-", "")
		for _, c := range research.Compounds(s) {
			if !strings.Contains(joined, c) {
				t.Fatalf("compound %q not in %q", c, s)
			}
		}
	})
}

func TestFoldAccents(t *testing.T) {
	t.Parallel()
	require.Equal(t, "naive Bayes cafe", research.FoldAccents("naïve Bayes café"))
	require.Equal(t, "plain ASCII", research.FoldAccents("plain ASCII"))
}
