package text_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/skills/text"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	splitCases(t, text.Tokenize, []splitCase{
		{"Empty", "", nil},
		{"StopwordsDropped", "the effect of the drug", []string{"effect", "drug"}},
		{"Stemmed", "Beta-Blockers in blocking", []string{"beta", "blocker", "block"}},
		{"CaseFolded", "RANDOMIZED Trials", []string{"random", "trial"}},
		{"NumbersAndSingleLettersDropped", "2019 a b vitamin b12", []string{"vitamin", "b12"}},
		{"AccentsFolded", "naïve Bayes café", []string{"naiv", "bay", "cafe"}},
		{"Punctuation", "ACE-inhibitors; (enalapril), patient's", []string{"ace", "inhibitor", "enalapril", "patient"}},
		{"NonLatinKept", "Лечение гипертонии", []string{"лечение", "гипертонии"}},
	})
}

func TestPlain(t *testing.T) {
	t.Parallel()
	splitCases(t, text.Plain, []splitCase{
		{"Empty", "", nil},
		{"NotStemmed", "ACE-Inhibitors and inhibition", []string{"ace", "inhibitors", "inhibition"}},
		{"NumbersKeptSingleLettersDropped", "2019 a b vitamin b12", []string{"2019", "vitamin", "b12"}},
		{"AccentsFolded", "naïve café", []string{"naive", "cafe"}},
	})
}

func TestPlainAll(t *testing.T) {
	t.Parallel()
	splitCases(t, text.PlainAll, []splitCase{
		{"Empty", "", nil},
		{"StopWordsKept", "Patients were randomised to the ACE-inhibitor", []string{"patients", "were", "randomised", "to", "the", "ace", "inhibitor"}},
		{"NumbersKeptSingleLettersDropped", "2019 a b vitamin b12", []string{"2019", "vitamin", "b12"}},
		{"AccentsFolded", "naïve café", []string{"naive", "cafe"}},
	})
}

func TestTermsKeepSurfaceWords(t *testing.T) {
	t.Parallel()
	got := text.Terms("Heart failures")
	require.Equal(t, []text.Term{{Stem: "heart", Word: "heart"}, {Stem: "failur", Word: "failures"}}, got)
}

func TestIsStopword(t *testing.T) {
	t.Parallel()
	require.True(t, text.IsStopword("the"))
	require.True(t, text.IsStopword("however"))
	require.False(t, text.IsStopword("heart"))
}

func TestWithBigrams(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"a", "b", "c", "a b", "b c"}, text.WithBigrams([]string{"a", "b", "c"}))
	require.Equal(t, []string{"a"}, text.WithBigrams([]string{"a"}))
	require.Nil(t, text.Bigrams(nil))
}

func TestTFIDF(t *testing.T) {
	t.Parallel()
	docs := [][]string{
		{"heart", "failur", "beta"},
		{"heart", "attack"},
		{"beta", "blocker", "blocker"},
		{"rare"},
	}
	m := text.NewTFIDF(docs, text.TFIDFOptions{Sublinear: true})
	require.Equal(t, 6, m.Dim())
	require.Equal(t, 2, m.DF("heart"))
	require.Equal(t, 0, m.DF("missing"))
	require.Greater(t, m.IDF("rare"), m.IDF("heart"))

	v := m.Vector(docs[2])
	require.InDelta(t, 1, v.Norm(), 1e-12)
	require.InDelta(t, 1, v.Dot(v), 1e-12)
	require.Equal(t, 0.0, v.Dot(m.Vector(docs[1])), "no shared terms")
	require.Greater(t, v.Dot(m.Vector(docs[0])), 0.0)
	require.Empty(t, m.Vector([]string{"unknown"}).Idx)

	pruned := text.NewTFIDF(docs, text.TFIDFOptions{MinDF: 2})
	_, ok := pruned.Index("rare")
	require.False(t, ok)
	_, ok = pruned.Index("heart")
	require.True(t, ok)

	dense := make([]float64, m.Dim())
	v.AddTo(dense, 2)
	require.InDelta(t, 2, v.DotDense(dense), 1e-12)
}

func TestVectorProperties(t *testing.T) {
	t.Parallel()
	word := rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "f"})
	rapid.Check(t, func(t *rapid.T) {
		docs := rapid.SliceOfN(rapid.SliceOfN(word, 0, 8), 1, 6).Draw(t, "docs")
		m := text.NewTFIDF(docs, text.TFIDFOptions{Sublinear: rapid.Bool().Draw(t, "sub")})
		for i := range docs {
			for j := range docs {
				c := m.Vector(docs[i]).Dot(m.Vector(docs[j]))
				if math.IsNaN(c) || c < -1e-9 || c > 1+1e-9 {
					t.Fatalf("cosine %v out of [0,1]", c)
				}
				if d := m.Vector(docs[j]).Dot(m.Vector(docs[i])); math.Abs(c-d) > 1e-12 {
					t.Fatalf("cosine not symmetric: %v vs %v", c, d)
				}
			}
		}
	})
}

// splitCase is one text and the words a splitting function should give.
type splitCase struct {
	name string
	in   string
	want []string
}

// splitCases runs each case against split as a parallel subtest.
func splitCases(t *testing.T, split func(string) []string, cases []splitCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, split(tt.in))
		})
	}
}

func TestUniqueFold(t *testing.T) {
	t.Parallel()
	require.Nil(t, text.UniqueFold(nil))
	require.Equal(t, []string{"Deep Learning", "CNN"},
		text.UniqueFold([]string{"Deep Learning", "CNN", "deep learning", "cnn", "DEEP LEARNING"}))
	require.True(t, text.ContainsFold([]string{"Deep Learning"}, "deep LEARNING"))
	require.False(t, text.ContainsFold([]string{"Deep Learning"}, "deep-learning"))
}
