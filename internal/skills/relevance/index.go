// Package relevance is the offline relevance scorer (skill 5): a BM25-style
// match of each paper against the research intent, blended with a
// logistic-regression classifier trained on the papers the researcher has
// marked, so every iteration's ranking learns from the researcher.
package relevance

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"quarry/internal/skills"
	"quarry/internal/skills/text"
)

// params are the scorer's tuning values. They were chosen on the shared
// screening benchmark as general text-classification settings (no
// per-dataset values) and are fixed, so the app and the evaluation harness
// rank the same way.
type params struct {
	titleWeight float64 // a title word counts as much as this many abstract words
	bm25K1      float64 // BM25 term-frequency saturation
	bm25B       float64 // BM25 length normalisation
	epochs      int     // SGD passes over the marked papers per training
	rate        float64 // initial SGD step
	lambda      float64 // L2 penalty per example, keeps few marks from overfitting
	// queryDocW is the weight of the question itself as a pseudo-relevant
	// paper in both classifiers (Rocchio's query vector, the topic seed of
	// Cormack and Grossman's BMI). With one relevant mark the classifier
	// otherwise learns that single paper's accidents; the question keeps
	// it anchored to what was asked, and its share shrinks as marks grow.
	queryDocW   float64
	lexicalHalf float64 // relevant marks at which lexical and classifier weigh equally
	biasRate    float64 // step of the bias relative to the weights
	nbAlpha     float64 // naive Bayes smoothing
	nbWeight    float64 // share of naive Bayes in the classifier ensemble
}

func defaultParams() params {
	return params{
		titleWeight: 1,
		bm25K1:      1.2,
		bm25B:       0.75,
		epochs:      12,
		rate:        0.5,
		lambda:      0.01,
		queryDocW:   1,
		lexicalHalf: 0.5,
		biasRate:    0.1,
		nbAlpha:     3.822,
		nbWeight:    0.5,
	}
}

// doc is one paper's precomputed features.
type doc struct {
	title    []string // stems of the title
	abstract []string // stems of the abstract
	vec      text.Vector
	length   float64 // field-weighted length for BM25
}

// Index holds a collection's features and the intent's query terms, built
// once so that re-ranking after each batch of marks costs a classifier
// training and one pass over the papers, not a re-tokenisation.
type Index struct {
	p      params
	intent skills.ParsedIntent
	docs   []doc
	tfidf  *text.TFIDF
	query  []queryTerm
	qvec   text.Vector
	lex    []float64
	// excluded[i] lists the exclude terms paper i contains.
	excluded [][]string
	avgLen   float64
}

// queryTerm is one stem of the intent with its weight in the query.
type queryTerm struct {
	stem   string
	weight float64
	idf    float64
}

// NewIndex tokenises papers and computes their lexical match with intent.
func NewIndex(intent skills.ParsedIntent, papers []skills.RawPaper) *Index {
	x := &Index{intent: intent, docs: make([]doc, len(papers)), p: defaultParams()}
	features := make([][]string, len(papers))
	var total float64
	for i, p := range papers {
		d := doc{title: text.Tokenize(p.Title), abstract: text.Tokenize(p.Abstract)}
		d.length = x.p.titleWeight*float64(len(d.title)) + float64(len(d.abstract))
		total += d.length
		x.docs[i] = d
		features[i] = docFeatures(d)
	}
	if len(papers) > 0 {
		x.avgLen = total / float64(len(papers))
	}
	x.tfidf = text.NewTFIDF(features, text.TFIDFOptions{Sublinear: true, MinDF: 2})
	for i := range x.docs {
		x.docs[i].vec = x.tfidf.WeightedVector(features[i], featureWeights(x.docs[i], x.p.titleWeight))
	}
	qtoks := text.Tokenize(queryText(intent))
	x.qvec = x.tfidf.Vector(text.WithBigrams(qtoks))
	x.query = x.queryTerms(qtoks, x.docFreq(qtoks))
	x.lex = make([]float64, len(papers))
	x.excluded = make([][]string, len(papers))
	excl := phrases(intent.ExcludeTerms)
	for i := range x.docs {
		x.lex[i] = x.bm25(i)
		for _, e := range excl {
			if containsSeq(x.docs[i].title, e.stems) || containsSeq(x.docs[i].abstract, e.stems) {
				x.excluded[i] = append(x.excluded[i], e.text)
				x.lex[i] *= 0.5
			}
		}
	}
	return x
}

// Len is the number of papers.
func (x *Index) Len() int { return len(x.docs) }

// Lexical returns each paper's match with the intent in [0,1], before any
// marks: the ranking a researcher sees first.
func (x *Index) Lexical() []float64 { return slices.Clone(x.lex) }

// docFeatures is a paper's feature list: title and abstract unigrams and
// bigrams (bigrams do not cross from title into abstract).
func docFeatures(d doc) []string {
	f := text.WithBigrams(d.title)
	return append(f, text.WithBigrams(d.abstract)...)
}

// featureWeights matches docFeatures: title features count titleWeight.
func featureWeights(d doc, titleWeight float64) []float64 {
	nt := len(d.title) + max(len(d.title)-1, 0)
	na := len(d.abstract) + max(len(d.abstract)-1, 0)
	w := make([]float64, 0, nt+na)
	for range nt {
		w = append(w, titleWeight)
	}
	for range na {
		w = append(w, 1)
	}
	return w
}

// queryText is everything in the intent that describes what is wanted.
func queryText(in skills.ParsedIntent) string {
	parts := []string{in.Topic}
	for _, c := range in.Concepts {
		parts = append(parts, c.Term)
		parts = append(parts, c.Synonyms...)
	}
	parts = append(parts, in.IncludeTerms...)
	return strings.Join(parts, "\n")
}

// queryTerms weighs each distinct stem of the query by 1+ln(count), so a
// word the question repeats counts more without drowning the others.
func (x *Index) queryTerms(toks []string, df map[string]int) []queryTerm {
	count := map[string]int{}
	var order []string
	for _, t := range toks {
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	n := float64(len(x.docs))
	out := make([]queryTerm, 0, len(order))
	for _, t := range order {
		df := float64(df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		out = append(out, queryTerm{stem: t, weight: 1 + math.Log(float64(count[t])), idf: idf})
	}
	return out
}

// docFreq counts, for each stem of toks, the papers containing it in title
// or abstract. The TF-IDF vocabulary drops rare terms, but a query word
// found in one paper is exactly what BM25 should reward, so it counts here.
func (x *Index) docFreq(toks []string) map[string]int {
	df := make(map[string]int, len(toks))
	for _, t := range toks {
		df[t] = 0
	}
	seen := map[string]bool{}
	for _, d := range x.docs {
		clear(seen)
		for _, field := range [][]string{d.title, d.abstract} {
			for _, t := range field {
				if _, ok := df[t]; ok && !seen[t] {
					seen[t] = true
					df[t]++
				}
			}
		}
	}
	return df
}

// bm25 is the field-weighted BM25 score of paper i divided by the best
// score any paper could reach, so it lies in [0,1] and means the same in a
// collection of ten papers as in one of ten thousand.
func (x *Index) bm25(i int) float64 {
	d := x.docs[i]
	var s, best float64
	norm := 1.0
	if x.avgLen > 0 {
		norm = 1 - x.p.bm25B + x.p.bm25B*d.length/x.avgLen
	}
	for _, q := range x.query {
		tf := x.p.titleWeight*float64(countOf(d.title, q.stem)) + float64(countOf(d.abstract, q.stem))
		s += q.weight * q.idf * tf * (x.p.bm25K1 + 1) / (tf + x.p.bm25K1*norm)
		best += q.weight * q.idf * (x.p.bm25K1 + 1)
	}
	if best <= 0 || s <= 0 {
		return 0
	}
	return math.Min(1, s/best)
}

func countOf(toks []string, t string) int {
	n := 0
	for _, x := range toks {
		if x == t {
			n++
		}
	}
	return n
}

// Rank scores every paper in [0,1] given the indices of papers marked
// relevant and irrelevant. Without marks it is the lexical score; with
// marks a class-weighted logistic regression (the question itself counted
// as one relevant paper) is blended in, weighing more as relevant marks
// accumulate.
func (x *Index) Rank(relevant, irrelevant []int) []float64 {
	out := slices.Clone(x.lex)
	if len(relevant)+len(irrelevant) == 0 {
		return out
	}
	var m *model
	if x.p.nbWeight < 1 {
		m = x.train(relevant, irrelevant)
	}
	var nb []float64
	if x.p.nbWeight > 0 {
		nb = x.naiveBayes(relevant, irrelevant)
	}
	alpha := x.p.lexicalHalf / (x.p.lexicalHalf + float64(len(relevant)))
	for i := range out {
		var p float64
		if m != nil {
			p = (1 - x.p.nbWeight) * m.prob(x.docs[i].vec)
		}
		if nb != nil {
			p += x.p.nbWeight * sigmoid(x.docs[i].vec.DotDense(nb))
		}
		out[i] = clamp01(alpha*x.lex[i] + (1-alpha)*p)
	}
	return out
}

// naiveBayes returns the per-feature log-odds of a class-balanced
// multinomial naive Bayes over the TF-IDF vectors: fast, and strong when
// there are only a handful of relevant marks.
func (x *Index) naiveBayes(relevant, irrelevant []int) []float64 {
	d := x.tfidf.Dim()
	pos := make([]float64, d)
	neg := make([]float64, d)
	if x.qvec.Len() > 0 && x.p.queryDocW > 0 {
		x.qvec.AddTo(pos, x.p.queryDocW)
	}
	for _, i := range relevant {
		x.docs[i].vec.AddTo(pos, 1)
	}
	for _, i := range irrelevant {
		x.docs[i].vec.AddTo(neg, 1)
	}
	// Balance the classes as if the relevant papers had been repeated
	// until they were as many as the irrelevant ones; otherwise hundreds
	// of irrelevant marks make every word look irrelevant.
	npos := float64(len(relevant))
	if x.qvec.Len() > 0 && x.p.queryDocW > 0 {
		npos += x.p.queryDocW
	}
	if npos > 0 && len(irrelevant) > 0 {
		k := float64(len(irrelevant)) / npos
		for f := range pos {
			pos[f] *= k
		}
	}
	var tp, tn float64
	for f := range d {
		tp += pos[f]
		tn += neg[f]
	}
	a := x.p.nbAlpha
	lp := math.Log(tp + a*float64(d))
	ln := math.Log(tn + a*float64(d))
	w := make([]float64, d)
	for f := range d {
		w[f] = (math.Log(pos[f]+a) - lp) - (math.Log(neg[f]+a) - ln)
	}
	return w
}

// model is a logistic regression over TF-IDF features, stored as
// scale·v so the L2 decay of every weight costs one multiplication.
type model struct {
	v     []float64
	scale float64
	bias  float64
}

func (m *model) margin(x text.Vector) float64 {
	return m.scale*x.DotDense(m.v) + m.bias
}

func (m *model) prob(x text.Vector) float64 {
	return sigmoid(m.margin(x))
}

// train fits the classifier by SGD on class-balanced batches: positives
// and negatives alternate, each side cycling through its examples in a
// fixed pseudo-random order. Balancing by sampling, not by loss weights,
// keeps every step the same size when a few relevant papers face hundreds
// of irrelevant ones, and the fixed order makes the model reproducible.
func (x *Index) train(relevant, irrelevant []int) *model {
	pos := make([]text.Vector, 0, len(relevant)+1)
	neg := make([]text.Vector, 0, len(irrelevant))
	if x.qvec.Len() > 0 && x.p.queryDocW > 0 {
		pos = append(pos, x.qvec)
	}
	for _, i := range relevant {
		pos = append(pos, x.docs[i].vec)
	}
	for _, i := range irrelevant {
		neg = append(neg, x.docs[i].vec)
	}
	m := &model{v: make([]float64, x.tfidf.Dim()), scale: 1}
	if len(pos)+len(neg) == 0 {
		return m
	}
	rng := rand.New(rand.NewPCG(uint64(len(relevant)), uint64(len(irrelevant))))
	steps := x.p.epochs * (len(pos) + len(neg))
	var pi, ni int
	pord, nord := rng.Perm(len(pos)), rng.Perm(len(neg))
	for t := range steps {
		var e text.Vector
		var y float64
		if (t%2 == 0 && len(pos) > 0) || len(neg) == 0 {
			if pi == len(pord) {
				pi = 0
				rng.Shuffle(len(pord), func(i, j int) { pord[i], pord[j] = pord[j], pord[i] })
			}
			e, y = pos[pord[pi]], 1
			pi++
		} else {
			if ni == len(nord) {
				ni = 0
				rng.Shuffle(len(nord), func(i, j int) { nord[i], nord[j] = nord[j], nord[i] })
			}
			e, y = neg[nord[ni]], 0
			ni++
		}
		eta := x.p.rate / (1 + x.p.rate*x.p.lambda*float64(t))
		g := sigmoid(m.margin(e)) - y
		m.scale *= 1 - eta*x.p.lambda
		if m.scale < 1e-6 {
			for i := range m.v {
				m.v[i] *= m.scale
			}
			m.scale = 1
		}
		e.AddTo(m.v, -eta*g/m.scale)
		m.bias -= eta * g * x.p.biasRate
	}
	return m
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func clamp01(v float64) float64 {
	if v != v || v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

// phrase is a term as the researcher typed it and its stems.
type phrase struct {
	text  string
	stems []string
}

func phrases(terms []string) []phrase {
	var out []phrase
	for _, t := range terms {
		t = strings.TrimSpace(t)
		if s := text.Tokenize(t); len(s) > 0 {
			out = append(out, phrase{text: t, stems: s})
		}
	}
	return out
}

// containsSeq reports whether seq occurs contiguously in toks.
func containsSeq(toks, seq []string) bool {
	if len(seq) == 0 || len(seq) > len(toks) {
		return false
	}
outer:
	for i := 0; i+len(seq) <= len(toks); i++ {
		for j, s := range seq {
			if toks[i+j] != s {
				continue outer
			}
		}
		return true
	}
	return false
}
