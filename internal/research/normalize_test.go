package research_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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

// compoundsReference is Compounds as first written (every word built, the
// whole text folded): the fast one must give the same answer.
func compoundsReference(s string) []string {
	s = research.FoldAccents(s)
	var out []string
	var b strings.Builder
	parts, letters := 0, false
	flush := func() {
		if parts > 1 && letters {
			out = append(out, b.String())
		}
		b.Reset()
		parts, letters = 0, false
	}
	isHyphen := func(r rune) bool { return r == '-' || r == '\u2010' || r == '\u2011' }
	startsWord := func(s string) bool {
		r, _ := utf8.DecodeRuneInString(s)
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	prevWord := false
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !prevWord {
				parts++
			}
			b.WriteRune(unicode.ToLower(r))
			letters = letters || unicode.IsLetter(r)
			prevWord = true
		case isHyphen(r) && prevWord && i+utf8.RuneLen(r) < len(s) && startsWord(s[i+utf8.RuneLen(r):]):
			prevWord = false
		default:
			flush()
			prevWord = false
		}
	}
	flush()
	return out
}

// TestCompoundsMatchesReference: on random text over letters, accents,
// digits, every hyphen-like rune and separators, Compounds gives what the
// straightforward version gives.
func TestCompoundsMatchesReference(t *testing.T) {
	t.Parallel()
	alphabet := []rune("aZé9 -\u2010\u2011\ufe63\uff0d\u2012–—_.,\u00a0ﬁßÅ\u0301İ𝜇2x")
	rng := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		n := rng.IntN(24)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(rs)
		require.Equal(t, compoundsReference(s), research.Compounds(s), "%q", s)
	}
}
