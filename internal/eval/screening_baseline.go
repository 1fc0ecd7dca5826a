package eval

import (
	"math"

	"quarry/internal/skills"
	"quarry/internal/skills/text"
)

// baselineNBAlpha is ASReview's naive Bayes smoothing (its default model).
const baselineNBAlpha = 3.822

// ScreeningBaseline is the reference the scorer is judged against: a
// standard active-learning setup as ASReview runs it by default. Features
// are TF-IDF over title and abstract words (lower-cased, English stop words
// dropped, no stemming, unigrams, raw term frequency, L2-normalised); the
// classifier is a class-balanced multinomial naive Bayes retrained after
// every batch; until there is at least one relevant and one irrelevant
// mark, records are ranked by TF-IDF cosine with the question. It shares
// nothing with the app's scorer but the tokenizer's word splitting, so a
// gap between the two is a gap in the scorer, not in the harness.
func ScreeningBaseline(_ skills.ParsedIntent, question string, papers []skills.RawPaper) ScreeningRanker {
	docs := make([][]string, len(papers))
	for i, p := range papers {
		docs[i] = baselineWords(p.Title + "\n" + p.Abstract)
	}
	tf := text.NewTFIDF(docs, text.TFIDFOptions{})
	b := &baselineRanker{dim: tf.Dim(), vecs: make([]text.Vector, len(papers))}
	for i, d := range docs {
		b.vecs[i] = tf.Vector(d)
	}
	b.query = tf.Vector(baselineWords(question))
	return b
}

// baselineWords splits like scikit-learn's default token pattern (words of
// two or more letters or digits) with its English stop-word list replaced
// by ours.
func baselineWords(s string) []string {
	var out []string
	for _, w := range text.Words(s) {
		if len(w) >= 2 && !text.IsStopword(w) {
			out = append(out, w)
		}
	}
	return out
}

type baselineRanker struct {
	dim   int
	vecs  []text.Vector
	query text.Vector
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
	pos := make([]float64, b.dim)
	neg := make([]float64, b.dim)
	for _, i := range relevant {
		b.vecs[i].AddTo(pos, n/(2*float64(len(relevant))))
	}
	for _, i := range irrelevant {
		b.vecs[i].AddTo(neg, n/(2*float64(len(irrelevant))))
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
