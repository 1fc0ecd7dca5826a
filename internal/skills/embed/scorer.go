package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"quarry/internal/research"
	"quarry/internal/skills"
)

// Scorer adds meaning to another scorer's judgement: each paper's cosine
// with the question and, once papers are marked, with the mean of the
// relevant ones (minus the mean of the irrelevant ones, Rocchio's way),
// rescaled to [0,1] over the batch and averaged with the inner score. The
// equal weighting is not tuned (no embeddings model was available to tune
// it on the shared reviews); a paper the inner scorer rules out (score 0)
// stays out. When the embeddings server fails, the inner scores are
// returned unchanged.
type Scorer struct {
	c     *Client
	inner skills.Scorer

	mu    sync.Mutex
	cache map[string][]float32
}

// maxCachedTexts bounds the vectors a Scorer remembers between iterations.
const maxCachedTexts = 5000

// NewScorer returns inner with embedding features when c is a client;
// with c == nil (the offline provider) it returns inner itself.
func NewScorer(c *Client, inner skills.Scorer) skills.Scorer {
	if c == nil {
		return inner
	}
	return &Scorer{c: c, inner: inner, cache: map[string][]float32{}}
}

// Score implements skills.Scorer.
func (s *Scorer) Score(ctx context.Context, in skills.ScoreInput) ([]research.ScoredPaper, error) {
	out, err := s.inner.Score(ctx, in)
	if err != nil || len(out) == 0 {
		return out, err
	}
	question := questionText(in.Intent)
	texts := []string{question}
	for _, p := range out {
		texts = append(texts, paperText(p.RawPaper))
	}
	for _, p := range in.Relevant {
		texts = append(texts, paperText(p))
	}
	for _, p := range in.Irrelevant {
		texts = append(texts, paperText(p))
	}
	vecs, err := s.vectors(ctx, texts)
	if err != nil {
		return out, nil // meaning is an extra: the inner scores stand
	}
	q, papers := vecs[0], vecs[1:1+len(out)]
	rel := mean(vecs[1+len(out) : 1+len(out)+len(in.Relevant)])
	irr := mean(vecs[1+len(out)+len(in.Relevant):])
	sims := make([]float64, len(out))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range papers {
		sims[i] = Cosine(v, q)
		if rel != nil {
			sims[i] += Cosine(v, rel)
		}
		if irr != nil {
			sims[i] -= Cosine(v, irr)
		}
		lo, hi = min(lo, sims[i]), max(hi, sims[i])
	}
	if hi <= lo {
		return out, nil // nothing to tell the papers apart by
	}
	for i := range out {
		if out[i].Score == 0 {
			continue
		}
		out[i].Score = (out[i].Score + (sims[i]-lo)/(hi-lo)) / 2
		if rel != nil {
			out[i].Reasons = append(out[i].Reasons, fmt.Sprintf("meaning: cosine %.2f with the papers marked relevant", Cosine(papers[i], rel)))
		} else {
			out[i].Reasons = append(out[i].Reasons, fmt.Sprintf("meaning: cosine %.2f with the question", Cosine(papers[i], q)))
		}
	}
	return out, nil
}

// vectors embeds texts, asking only for those not cached.
func (s *Scorer) vectors(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	s.mu.Lock()
	for i, t := range texts {
		if v, ok := s.cache[t]; ok {
			out[i] = v
		} else {
			missing, at = append(missing, t), append(at, i)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := s.c.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache)+len(missing) > maxCachedTexts {
		clear(s.cache)
	}
	for k, v := range vecs {
		out[at[k]] = v
		s.cache[missing[k]] = v
	}
	return out, nil
}

// questionText is what the question is embedded as: its topic and its
// concepts with their synonyms.
func questionText(in research.ParsedIntent) string {
	parts := []string{in.Topic}
	for _, c := range in.Concepts {
		parts = append(parts, c.Term)
		parts = append(parts, c.Synonyms...)
	}
	parts = append(parts, in.IncludeTerms...)
	return strings.Join(parts, "; ")
}

// paperText is what a paper is embedded as, as the library embeds it.
func paperText(p research.RawPaper) string {
	if p.Abstract == "" {
		return p.Title
	}
	return p.Title + "\n\n" + p.Abstract
}

// mean is the mean of vecs of one dimension, nil for none.
func mean(vecs [][]float32) []float32 {
	if len(vecs) == 0 {
		return nil
	}
	m := make([]float32, len(vecs[0]))
	for _, v := range vecs {
		for j := range m {
			if j < len(v) {
				m[j] += v[j] / float32(len(vecs))
			}
		}
	}
	return m
}

// Cosine is the cosine similarity of two vectors (0 when either is zero
// or their dimensions differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
