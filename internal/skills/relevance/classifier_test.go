package relevance

import (
	"fmt"
	"math/rand/v2"
	"quarry/internal/research"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// classifierCorpus is a small collection in which every paper says
// "patients", the relevant topic is captopril after infarction and the
// irrelevant one is asthma inhalers.
func classifierCorpus() []research.RawPaper {
	var out []research.RawPaper
	add := func(n int, title, abstract string) {
		for k := range n {
			out = append(out, research.RawPaper{ID: fmt.Sprintf("%d", len(out)), Title: fmt.Sprintf("%s %d", title, k), Abstract: abstract})
		}
	}
	add(4, "Captopril after myocardial infarction", "Patients given captopril after infarction lived longer.")
	add(4, "Inhaled steroids for asthma", "Patients with asthma used inhalers daily.")
	add(8, "Dietary salt and blood pressure", "Patients reduced salt intake for a year.")
	add(1, "Captopril in patients", "Captopril trial in patients after infarction.")
	add(1, "Asthma inhalers in patients", "Inhaler trial in patients with asthma.")
	return out
}

func TestSVMSeparatesMarks(t *testing.T) {
	t.Parallel()
	x := NewIndex(research.ParsedIntent{Topic: "captopril"}, classifierCorpus())
	rel, irr := []int{0, 1, 2, 3}, []int{4, 5, 6, 7}
	w, b := x.svm(rel, irr)
	for _, i := range rel {
		require.Positive(t, x.docs[i].vec.DotDense(w)+b, "relevant mark %d", i)
	}
	for _, i := range irr {
		require.Negative(t, x.docs[i].vec.DotDense(w)+b, "irrelevant mark %d", i)
	}
	unmarkedRel, unmarkedIrr := x.docs[16].vec.DotDense(w)+b, x.docs[17].vec.DotDense(w)+b
	require.Greater(t, unmarkedRel, unmarkedIrr)
	w2, b2 := x.svm(rel, irr)
	require.Equal(t, w, w2, "reproducible")
	require.Equal(t, b, b2)
}

// The collection's background makes a word every paper uses ("patients")
// count less as evidence of relevance than a word only the relevant marks
// use, even when the irrelevant marks happen not to contain it.
func TestBackgroundDiscountsCommonWords(t *testing.T) {
	t.Parallel()
	papers := classifierCorpus()
	for i := 4; i < 8; i++ {
		papers[i].Abstract = "Asthma inhalers were used daily."
	}
	x := NewIndex(research.ParsedIntent{Topic: "captopril"}, papers)
	weight := func(nb []float64, term string) float64 {
		i, ok := x.tfidf.Index(term)
		require.True(t, ok, term)
		return nb[i]
	}
	rel, irr := []int{0, 1, 2, 3}, []int{4, 5, 6, 7}
	x.p.background = 0
	without := x.naiveBayes(rel, irr)
	x.p.background = 200
	with := x.naiveBayes(rel, irr)
	require.Less(t, weight(with, "patients"), weight(without, "patients"))
	require.Greater(t, weight(with, "captopril"), weight(with, "patients"))
}

// BenchmarkRank re-ranks a review-sized collection (3,000 papers, 1,000
// marks): the app scores after every batch, so this must stay well under a
// second on a small machine.
func BenchmarkRank(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	words := func(n int) string {
		var s []string
		for range n {
			s = append(s, vocab[int(rng.ExpFloat64()*500)%len(vocab)])
		}
		return strings.Join(s, " ")
	}
	papers := make([]research.RawPaper, 3000)
	for i := range papers {
		papers[i] = research.RawPaper{ID: fmt.Sprint(i), Title: words(12), Abstract: words(200)}
	}
	x := NewIndex(research.ParsedIntent{Topic: words(5)}, papers)
	var rel, irr []int
	for i := range 1000 {
		if i%10 == 0 {
			rel = append(rel, i)
		} else {
			irr = append(irr, i)
		}
	}
	for b.Loop() {
		x.Rank(rel, irr)
	}
}

// Irrelevant marks change the ranking before any paper is marked relevant:
// two papers that match the question equally well are ordered by whether
// they resemble what the researcher already rejected. Without that the
// first batches of rejections taught the ranking nothing.
func TestIrrelevantMarksCountBeforeFirstRelevant(t *testing.T) {
	t.Parallel()
	// Two topics written alike, so only the marks can tell them apart.
	var papers []research.RawPaper
	for _, topic := range [][2]string{{"Captopril", "infarction"}, {"Asthma", "inhalers"}} {
		for k := range 4 {
			papers = append(papers, research.RawPaper{
				ID:       fmt.Sprintf("%s%d", topic[0], k),
				Title:    fmt.Sprintf("%s after %s %d", topic[0], topic[1], k),
				Abstract: fmt.Sprintf("Patients given %s after %s.", topic[0], topic[1]),
			})
		}
	}
	for k := range 8 {
		papers = append(papers, research.RawPaper{ID: fmt.Sprintf("salt%d", k), Title: fmt.Sprintf("Dietary salt %d", k), Abstract: "Salt intake for a year."})
	}
	papers = append(papers,
		research.RawPaper{ID: "a", Title: "Captopril in patients", Abstract: "Captopril trial in patients."},
		research.RawPaper{ID: "b", Title: "Asthma in patients", Abstract: "Asthma trial in patients."},
	)
	a, b := len(papers)-2, len(papers)-1
	x := NewIndex(research.ParsedIntent{Topic: "patients trial"}, papers)
	lex := x.Lexical()
	require.Positive(t, lex[a])
	require.InDelta(t, lex[a], lex[b], 1e-12, "the two papers match the question equally")
	asthma := []int{4, 5, 6, 7}
	got := x.Rank(nil, asthma)
	require.Greater(t, got[a], got[b], "the paper like the rejected ones ranks lower")
	for _, s := range got {
		require.GreaterOrEqual(t, s, 0.0)
		require.LessOrEqual(t, s, 1.0)
	}
}
