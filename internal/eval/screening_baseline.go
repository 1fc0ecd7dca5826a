package eval

import (
	"math"

	"quarry/internal/research"
	"quarry/internal/skills/text"
)

// baselineNBAlpha is ASReview's naive Bayes smoothing (its default model).
const baselineNBAlpha = 3.822

// ScreeningBaseline is the reference the scorer is judged against: a
// standard active-learning setup as ASReview runs it by default. Features
// are scikit-learn's default TF-IDF over title and abstract joined by a
// space (lower-cased words of two or more letters or digits, stop words
// kept, no stemming, unigrams, raw term frequency, smoothed IDF,
// L2-normalised); the classifier is a class-balanced multinomial naive
// Bayes (alpha 3.822) retrained after every batch; until there is at least
// one relevant and one irrelevant mark, records are ranked by TF-IDF cosine
// with the question. It shares nothing with the app's scorer but the
// tokenizer's word splitting, so a gap between the two is a gap in the
// scorer, not in the harness.
//
// Keeping stop words is what brings it to the published figures' level:
// with our stop-word list dropped it scored mean WSS@95 45.0 and ACE 69.5,
// with sklearn's default 47.7 and 71.3 (published: 47 and 74).
func ScreeningBaseline(_ research.ParsedIntent, question string, papers []research.RawPaper) ScreeningRanker {
	return newBaseline(false, question, papers)
}

// ScreeningBaselineDouble is ScreeningBaseline with ASReview's default
// "double" balance in place of class-balanced weights (see doubleBalance).
// It is kept as a second reference because it matches the published ACE
// figure (73.7 against 74) while its mean falls to 38.3 in this harness:
// no single setting reproduces both published numbers here, and the rest
// of the gap is in the protocol (the reference starts from one random
// relevant and one random irrelevant record and averages many runs; this
// harness starts from the question alone).
func ScreeningBaselineDouble(_ research.ParsedIntent, question string, papers []research.RawPaper) ScreeningRanker {
	return newBaseline(true, question, papers)
}

func newBaseline(double bool, question string, papers []research.RawPaper) ScreeningRanker {
	docs := make([][]string, len(papers))
	for i, p := range papers {
		docs[i] = text.PlainAll(p.Title + " " + p.Abstract)
	}
	tf := text.NewTFIDF(docs, text.TFIDFOptions{})
	b := &baselineRanker{double: double, dim: tf.Dim(), vecs: make([]text.Vector, len(papers))}
	for i, d := range docs {
		b.vecs[i] = tf.Vector(d)
	}
	b.query = tf.Vector(text.PlainAll(question))
	return b
}

type baselineRanker struct {
	double bool
	dim    int
	vecs   []text.Vector
	query  text.Vector
}

// doubleBalance returns ASReview's "double" balance as expected sample
// weights per relevant and per irrelevant mark: ASReview resamples the
// training set to n marks, a share of them relevant that grows with
// a·(n1/n0)^-alpha against 1-(1-b)(1+ln n)^-beta for the irrelevant ones
// (its defaults a=2.155, alpha=0.94, b=0.789, beta=1). Weights are the
// expectation of that resampling, so no random draw enters the ranking.
func doubleBalance(n1, n0 int) (w1, w0 float64) {
	const a, alpha, b, beta = 2.155, 0.94, 0.789, 1.0
	n := float64(n1 + n0)
	one := a * math.Pow(float64(n1)/float64(n0), -alpha)
	zero := 1 - (1-b)*math.Pow(1+math.Log(n), -beta)
	tot := one*float64(n1) + zero*float64(n0)
	m1 := one * float64(n1) * n / tot
	m1 = math.Max(1, math.Min(n-2, m1))
	return m1 / float64(n1), (n - m1) / float64(n0)
}

// Rank implements ScreeningRanker.
func (b *baselineRanker) Rank(relevant, irrelevant []int) []float64 {
	out := make([]float64, len(b.vecs))
	if len(relevant) == 0 || len(irrelevant) == 0 {
		for i, v := range b.vecs {
			out[i] = v.Dot(b.query)
		}
		return out
	}
	// Balanced sample weights: each class carries half the total weight.
	n := float64(len(relevant) + len(irrelevant))
	w1, w0 := n/(2*float64(len(relevant))), n/(2*float64(len(irrelevant)))
	if b.double {
		w1, w0 = doubleBalance(len(relevant), len(irrelevant))
	}
	pos := make([]float64, b.dim)
	neg := make([]float64, b.dim)
	for _, i := range relevant {
		b.vecs[i].AddTo(pos, w1)
	}
	for _, i := range irrelevant {
		b.vecs[i].AddTo(neg, w0)
	}
	var tp, tn float64
	for f := range b.dim {
		tp += pos[f]
		tn += neg[f]
	}
	a := baselineNBAlpha
	lp := math.Log(tp + a*float64(b.dim))
	ln := math.Log(tn + a*float64(b.dim))
	w := make([]float64, b.dim)
	for f := range b.dim {
		w[f] = (math.Log(pos[f]+a) - lp) - (math.Log(neg[f]+a) - ln)
	}
	for i, v := range b.vecs {
		out[i] = v.DotDense(w)
	}
	return out
}
