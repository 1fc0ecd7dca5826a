package text

import (
	"math"
	"slices"
)

// Vector is a sparse feature vector. Idx is strictly increasing, so two
// vectors are compared by one merge pass: a paper has a few hundred distinct
// features out of tens of thousands, and dense vectors would waste both.
type Vector struct {
	Idx []int32
	Val []float64
}

// Len is the number of non-zero features.
func (v Vector) Len() int { return len(v.Idx) }

// Dot is the inner product; for L2-normalised vectors it is the cosine.
func (v Vector) Dot(w Vector) float64 {
	var s float64
	i, j := 0, 0
	for i < len(v.Idx) && j < len(w.Idx) {
		switch {
		case v.Idx[i] == w.Idx[j]:
			s += v.Val[i] * w.Val[j]
			i++
			j++
		case v.Idx[i] < w.Idx[j]:
			i++
		default:
			j++
		}
	}
	return s
}

// DotDense is the inner product with a dense vector indexed by feature, the
// shape of a model's weights or a cluster centroid.
func (v Vector) DotDense(d []float64) float64 {
	var s float64
	for k, i := range v.Idx {
		if int(i) < len(d) {
			s += v.Val[k] * d[i]
		}
	}
	return s
}

// AddTo adds scale·v to the dense vector d (which must have room for every
// index of v): the update step of gradient descent and centroid sums.
func (v Vector) AddTo(d []float64, scale float64) {
	for k, i := range v.Idx {
		d[i] += scale * v.Val[k]
	}
}

// Norm is the Euclidean length.
func (v Vector) Norm() float64 {
	var s float64
	for _, x := range v.Val {
		s += x * x
	}
	return math.Sqrt(s)
}

// TFIDFOptions shapes the weighting.
type TFIDFOptions struct {
	// Sublinear uses 1+ln(tf) instead of tf, so a word repeated ten times
	// does not count ten times as much.
	Sublinear bool
	// MinDF drops terms found in fewer documents: a term seen once cannot
	// make two papers alike, and dropping it keeps vectors short.
	MinDF int
	// MaxDFRatio, when above zero, drops terms found in more than this
	// share of the documents (collection-specific stop words).
	MaxDFRatio float64
}

// TFIDF is a vocabulary with document frequencies, built once per
// collection, that turns token lists into L2-normalised TF-IDF vectors.
// Term indices follow first appearance in the input, so building from the
// same documents in the same order always gives the same vectors.
type TFIDF struct {
	index map[string]int32
	terms []string
	df    []int
	idf   []float64
	docs  int
	opt   TFIDFOptions
}

// NewTFIDF builds the vocabulary of docs (each a list of tokens or features).
func NewTFIDF(docs [][]string, opt TFIDFOptions) *TFIDF {
	all := map[string]int32{}
	var terms []string
	var df []int
	seen := map[string]bool{}
	for _, d := range docs {
		clear(seen)
		for _, t := range d {
			if seen[t] {
				continue
			}
			seen[t] = true
			i, ok := all[t]
			if !ok {
				i = int32(len(terms))
				all[t] = i
				terms = append(terms, t)
				df = append(df, 0)
			}
			df[i]++
		}
	}
	m := &TFIDF{index: map[string]int32{}, docs: len(docs), opt: opt}
	maxDF := len(docs) + 1
	if opt.MaxDFRatio > 0 {
		maxDF = int(math.Floor(opt.MaxDFRatio * float64(len(docs))))
	}
	for i, t := range terms {
		if df[i] < opt.MinDF || (opt.MaxDFRatio > 0 && df[i] > maxDF && len(docs) > 2) {
			continue
		}
		m.index[t] = int32(len(m.terms))
		m.terms = append(m.terms, t)
		m.df = append(m.df, df[i])
		m.idf = append(m.idf, smoothIDF(len(docs), df[i]))
	}
	return m
}

// smoothIDF is scikit-learn's smoothed IDF, ln((1+N)/(1+df))+1: never zero,
// never infinite, so a term in every document still counts a little.
func smoothIDF(n, df int) float64 {
	return math.Log(float64(1+n)/float64(1+df)) + 1
}

// Dim is the number of terms, the length of dense vectors over this vocabulary.
func (m *TFIDF) Dim() int { return len(m.terms) }

// Docs is the number of documents the vocabulary was built from.
func (m *TFIDF) Docs() int { return m.docs }

// Term returns the term with index i.
func (m *TFIDF) Term(i int32) string { return m.terms[i] }

// Index returns the index of term, if it is in the vocabulary.
func (m *TFIDF) Index(term string) (int32, bool) {
	i, ok := m.index[term]
	return i, ok
}

// DF returns how many documents contain term (0 if unknown).
func (m *TFIDF) DF(term string) int {
	if i, ok := m.index[term]; ok {
		return m.df[i]
	}
	return 0
}

// IDF returns the smoothed inverse document frequency of term; an unknown
// term gets the weight of a term seen in no document.
func (m *TFIDF) IDF(term string) float64 {
	if i, ok := m.index[term]; ok {
		return m.idf[i]
	}
	return smoothIDF(m.docs, 0)
}

// Vector returns the L2-normalised TF-IDF vector of tokens; tokens outside
// the vocabulary are ignored. An empty result has no features (never NaN).
func (m *TFIDF) Vector(tokens []string) Vector {
	counts := map[int32]float64{}
	for _, t := range tokens {
		if i, ok := m.index[t]; ok {
			counts[i]++
		}
	}
	return m.weigh(counts)
}

// WeightedVector is Vector for tokens that count more than once each, e.g.
// title words counted double.
func (m *TFIDF) WeightedVector(tokens []string, weights []float64) Vector {
	counts := map[int32]float64{}
	for k, t := range tokens {
		if i, ok := m.index[t]; ok {
			counts[i] += weights[k]
		}
	}
	return m.weigh(counts)
}

func (m *TFIDF) weigh(counts map[int32]float64) Vector {
	v := Vector{Idx: make([]int32, 0, len(counts)), Val: make([]float64, 0, len(counts))}
	for i := range counts {
		v.Idx = append(v.Idx, i)
	}
	slices.Sort(v.Idx)
	var norm float64
	for _, i := range v.Idx {
		tf := counts[i]
		if m.opt.Sublinear && tf > 1 {
			tf = 1 + math.Log(tf)
		}
		w := tf * m.idf[i]
		v.Val = append(v.Val, w)
		norm += w * w
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for k := range v.Val {
			v.Val[k] /= norm
		}
	}
	return v
}
