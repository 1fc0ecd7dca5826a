package library

import (
	"cmp"
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"quarry/internal/research"
	"quarry/internal/store"
)

// Semantic finds the library's papers nearest in meaning to a text: it
// embeds the text and compares it by cosine with every stored vector of
// the model, by brute force over vectors held in memory. The vectors are
// read once (normalised, so a comparison is a dot product) and read again
// when the store's vector generation has moved, at most every
// ReloadEvery, so a library being embedded in the background is not
// re-read on every search. It implements the local source's Semantic.
type Semantic struct {
	store VectorStore
	emb   Embedder
	// ReloadEvery bounds how often changed vectors are read again.
	ReloadEvery time.Duration
	now         func() time.Time

	mu     sync.Mutex
	set    *store.VectorSet // normalised vectors
	loaded time.Time
	// queries caches query vectors: a search asks for the same question's
	// vector for every page and every iteration.
	queries map[string][]float32
}

// maxCachedQueries bounds the query vectors kept.
const maxCachedQueries = 512

// NewSemantic returns the semantic search over st's vectors of emb's
// model.
func NewSemantic(st VectorStore, emb Embedder) *Semantic {
	return &Semantic{store: st, emb: emb, ReloadEvery: 30 * time.Second, now: time.Now, queries: map[string][]float32{}}
}

// Nearest returns up to n docids of papers nearest to text, nearest
// first, keeping papers inside years and those of unknown year. With no
// vectors yet it returns none; an embeddings server that fails is an
// error (the caller ranks without it).
func (s *Semantic) Nearest(ctx context.Context, text string, years research.YearRange, n int) ([]int64, error) {
	if n <= 0 || text == "" {
		return nil, nil
	}
	set, err := s.vectors(ctx)
	if err != nil || set == nil || len(set.Docs) == 0 {
		return nil, err
	}
	q, err := s.queryVector(ctx, text)
	if err != nil {
		return nil, err
	}
	if len(q) != set.Dim {
		return nil, nil // the model answers another dimension than it stored: none comparable
	}
	return nearest(set, normalised(q), years, n), nil
}

// vectors returns the in-memory vectors, reading them when there are none
// yet or when they changed and the last read is ReloadEvery old.
func (s *Semantic) vectors(ctx context.Context) (*store.VectorSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set != nil && s.now().Sub(s.loaded) < s.ReloadEvery {
		return s.set, nil
	}
	gen, err := s.store.VectorGeneration(ctx)
	if err != nil {
		return nil, err
	}
	if s.set != nil && s.set.Generation == gen {
		s.loaded = s.now()
		return s.set, nil
	}
	set, err := s.store.LibraryVectors(ctx, s.emb.Model(), 0)
	if err != nil {
		return nil, err
	}
	for i := range set.Docs {
		v := set.Data[i*set.Dim : (i+1)*set.Dim]
		copy(v, normalised(v))
	}
	s.set, s.loaded = &set, s.now()
	return s.set, nil
}

func (s *Semantic) queryVector(ctx context.Context, text string) ([]float32, error) {
	s.mu.Lock()
	q, ok := s.queries[text]
	s.mu.Unlock()
	if ok {
		return q, nil
	}
	vecs, err := s.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.queries) >= maxCachedQueries {
		clear(s.queries)
	}
	s.queries[text] = vecs[0]
	s.mu.Unlock()
	return vecs[0], nil
}

func normalised(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(n))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

type scored struct {
	doc   int64
	score float32
}

// nearest scores every vector of set against q on all cores, each core
// keeping its own best n, and merges them.
func nearest(set *store.VectorSet, q []float32, years research.YearRange, n int) []int64 {
	parts := max(1, min(runtime.GOMAXPROCS(0), len(set.Docs)/4096+1))
	best := make([][]scored, parts)
	var wg sync.WaitGroup
	per := (len(set.Docs) + parts - 1) / parts
	for p := range parts {
		lo, hi := p*per, min((p+1)*per, len(set.Docs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			best[p] = topN(set, q, years, lo, hi, n)
		}()
	}
	wg.Wait()
	all := slices.Concat(best...)
	sortScored(all)
	out := make([]int64, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.doc)
	}
	return out
}

// topN keeps the n best of set's vectors lo..hi: a slice kept sorted only
// when it fills, which for n in the hundreds is cheaper than a heap.
func topN(set *store.VectorSet, q []float32, years research.YearRange, lo, hi, n int) []scored {
	dim := set.Dim
	out := make([]scored, 0, 2*n)
	floor := float32(math.Inf(-1))
	for i := lo; i < hi; i++ {
		if y := set.Years[i]; y != 0 && !years.Contains(y) {
			continue
		}
		v := set.Data[i*dim : (i+1)*dim : (i+1)*dim]
		var dot float32
		for j, x := range q {
			dot += x * v[j]
		}
		if dot <= floor {
			continue
		}
		out = append(out, scored{set.Docs[i], dot})
		if len(out) == 2*n {
			sortScored(out)
			out = out[:n]
			floor = out[n-1].score
		}
	}
	sortScored(out)
	return out[:min(n, len(out))]
}

// sortScored orders best first, ties by docid, so results are stable.
func sortScored(s []scored) {
	slices.SortFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
}
