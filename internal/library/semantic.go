package library

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"time"

	"quarry/internal/research"
	"quarry/internal/store"
)

// Semantic finds the library's papers nearest in meaning to a text: it
// embeds the text and compares it by cosine with the stored vectors of the
// model, held in memory (read once, normalised, and read again when the
// store's vector generation has moved, at most every ReloadEvery, so a
// library being embedded in the background is not re-read on every
// search). A small library is compared exhaustively. A large one is
// first scanned by the signs of its vectors (one bit a dimension, centred
// on the library's mean vector, compared by Hamming distance: 24 machine
// words for 1536 dimensions instead of 1536 multiplications), and the
// best Oversample candidates per result are then scored exactly: the
// binary quantisation with rescoring of Qdrant, Vespa and Weaviate, which
// keeps most of the exact top results for a fraction of the cost. It
// implements the local source's Semantic.
type Semantic struct {
	store VectorStore
	emb   Embedder
	// ReloadEvery bounds how often changed vectors are read again: while
	// a large library is being embedded (hours), every read is the whole
	// set (about 1 GB at 170,000 × 1,536 dimensions), so not too often.
	ReloadEvery time.Duration
	now         func() time.Time

	mu      sync.Mutex
	index   *index // nil until first read
	loaded  time.Time
	loading bool // a read is under way
	// queries caches query vectors: a search asks for the same question's
	// vector for every page and every iteration.
	queries map[string][]float32
}

// maxCachedQueries bounds the query vectors kept.
const maxCachedQueries = 512

// NewSemantic returns the semantic search over st's vectors of emb's
// model.
func NewSemantic(st VectorStore, emb Embedder) *Semantic {
	return &Semantic{store: st, emb: emb, ReloadEvery: 2 * time.Minute, now: time.Now, queries: map[string][]float32{}}
}

// Nearest returns up to n docids of papers nearest to text, nearest
// first, keeping papers inside years and those of unknown year, and only
// those of ctx's library selection when it names one. With no
// vectors yet (or while they are first read) it returns none; an
// embeddings server that fails is an error (the caller ranks without it).
func (s *Semantic) Nearest(ctx context.Context, text string, years research.YearRange, n int) ([]int64, error) {
	if n <= 0 || text == "" {
		return nil, nil
	}
	ix, err := s.vectors(ctx)
	if err != nil || ix == nil || len(ix.docs) == 0 {
		return nil, err
	}
	q, err := s.queryVector(ctx, text)
	if err != nil {
		return nil, err
	}
	if len(q) != ix.dim {
		return nil, nil // the model answers another dimension than it stored: none comparable
	}
	keep := ix.inYears(years)
	if project := research.LibrarySelection(ctx); project != "" {
		sel, err := s.store.SelectionDocs(ctx, project)
		if err != nil {
			return nil, err
		}
		inYears := keep
		keep = func(i int) bool { _, ok := sel[ix.docs[i]]; return ok && inYears(i) }
	}
	return ix.nearest(normalised(q), keep, n), nil
}

// ExactBelow is the library size under which every vector is compared
// exactly; Oversample how many candidates per result the binary scan of a
// larger library keeps for exact scoring.
const (
	ExactBelow = 20000
	Oversample = 10
)

// vectors returns the in-memory vectors there are (nil before the first
// read has finished), and starts reading them in the background when
// there are none yet or the last read is ReloadEvery old: a search never
// waits for a library's vectors to be read, it ranks by words meanwhile.
func (s *Semantic) vectors(ctx context.Context) (*index, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loading && (s.index == nil || s.now().Sub(s.loaded) >= s.ReloadEvery) {
		s.loading, s.loaded = true, s.now()
		go func() { _ = s.Load(context.WithoutCancel(ctx)) }()
	}
	return s.index, nil
}

// Load reads the vectors now if they changed since they were last read
// (the app warms the index at start; tests wait for it).
func (s *Semantic) Load(ctx context.Context) error {
	defer func() {
		s.mu.Lock()
		s.loading = false
		s.mu.Unlock()
	}()
	gen, err := s.store.VectorGeneration(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	current := s.index != nil && s.index.generation == gen
	s.mu.Unlock()
	if current {
		return nil
	}
	set, err := s.store.LibraryVectors(ctx, s.emb.Model(), 0)
	if err != nil {
		return err
	}
	ix := newIndex(set)
	s.mu.Lock()
	s.index, s.loaded = ix, s.now()
	s.mu.Unlock()
	return nil
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

// index is a model's vectors, normalised (vector i is
// data[i*dim:(i+1)*dim]), with their sign bits about the mean vector
// (words a vector, from bits[i*words]).
type index struct {
	generation int64
	dim        int
	docs       []int64
	years      []int
	data       []float32
	mean       []float32
	words      int
	bits       []uint64
}

func newIndex(set store.VectorSet) *index {
	ix := &index{generation: set.Generation, dim: set.Dim, docs: set.Docs, years: set.Years, data: set.Data}
	for i := range set.Docs {
		v := ix.vector(i)
		copy(v, normalised(v))
	}
	if len(set.Docs) < ExactBelow {
		return ix
	}
	ix.mean = make([]float32, ix.dim)
	for i := range ix.docs {
		for j, x := range ix.vector(i) {
			ix.mean[j] += x
		}
	}
	for j := range ix.mean {
		ix.mean[j] /= float32(len(ix.docs))
	}
	ix.words = (ix.dim + 63) / 64
	ix.bits = make([]uint64, len(ix.docs)*ix.words)
	for i := range ix.docs {
		ix.signs(ix.vector(i), ix.bits[i*ix.words:(i+1)*ix.words])
	}
	return ix
}

func (ix *index) vector(i int) []float32 {
	return ix.data[i*ix.dim : (i+1)*ix.dim : (i+1)*ix.dim]
}

// signs sets a bit for each dimension where v is above the mean.
func (ix *index) signs(v []float32, dst []uint64) {
	for j, x := range v {
		if x > ix.mean[j] {
			dst[j/64] |= 1 << (j % 64)
		}
	}
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
	i     int // the vector's place in the index
}

// nearest returns the n vectors nearest q (unit length): all compared
// exactly in a small library; in a large one the Oversample*n nearest by
// sign bits, then those compared exactly.
// inYears keeps the vectors of papers inside years or of unknown year.
func (ix *index) inYears(years research.YearRange) func(i int) bool {
	return func(i int) bool { y := ix.years[i]; return y == 0 || years.Contains(y) }
}

func (ix *index) nearest(q []float32, keep func(i int) bool, n int) []int64 {
	var best []scored
	if ix.bits == nil {
		best = ix.scan(n, func(lo, hi, k int) []scored { return ix.exact(q, keep, lo, hi, k) })
	} else {
		qb := make([]uint64, ix.words)
		ix.signs(q, qb)
		cands := ix.scan(Oversample*n, func(lo, hi, k int) []scored { return ix.hamming(qb, keep, lo, hi, k) })
		for k := range cands {
			cands[k].score = dot(q, ix.vector(cands[k].i))
		}
		sortScored(cands)
		best = cands[:min(n, len(cands))]
	}
	out := make([]int64, len(best))
	for k, s := range best {
		out[k] = s.doc
	}
	return out
}

// scan runs part over the index split across the cores, each part
// keeping its best keep, and merges them into the best keep.
func (ix *index) scan(keep int, part func(lo, hi, keep int) []scored) []scored {
	parts := max(1, min(runtime.GOMAXPROCS(0), len(ix.docs)/4096+1))
	best := make([][]scored, parts)
	var wg sync.WaitGroup
	per := (len(ix.docs) + parts - 1) / parts
	for p := range parts {
		lo, hi := p*per, min((p+1)*per, len(ix.docs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			best[p] = part(lo, hi, keep)
		}()
	}
	wg.Wait()
	all := slices.Concat(best...)
	sortScored(all)
	return all[:min(keep, len(all))]
}

// exact keeps the best keep of vectors lo..hi by cosine with q.
func (ix *index) exact(q []float32, ok func(i int) bool, lo, hi, keep int) []scored {
	var t topK
	t.init(keep)
	for i := lo; i < hi; i++ {
		if ok(i) {
			t.offer(scored{ix.docs[i], dot(q, ix.vector(i)), i})
		}
	}
	return t.result()
}

// hamming keeps the best keep of vectors lo..hi by the number of sign
// bits they share with qb (scored as that number, higher is nearer).
func (ix *index) hamming(qb []uint64, ok func(i int) bool, lo, hi, keep int) []scored {
	var t topK
	t.init(keep)
	w := ix.words
	for i := lo; i < hi; i++ {
		if !ok(i) {
			continue
		}
		b := ix.bits[i*w : (i+1)*w : (i+1)*w]
		diff := 0
		for k, x := range qb {
			diff += bits.OnesCount64(x ^ b[k])
		}
		t.offer(scored{ix.docs[i], float32(-diff), i})
	}
	return t.result()
}

// topK keeps the best k offered: a buffer of 2k sorted and cut when it
// fills, which for k in the hundreds is cheaper than a heap.
type topK struct {
	k     int
	out   []scored
	floor float32
}

func (t *topK) init(k int) {
	t.k, t.out, t.floor = k, make([]scored, 0, 2*k), float32(math.Inf(-1))
}

func (t *topK) offer(s scored) {
	if s.score <= t.floor {
		return
	}
	t.out = append(t.out, s)
	if len(t.out) == 2*t.k {
		sortScored(t.out)
		t.out = t.out[:t.k]
		t.floor = t.out[t.k-1].score
	}
}

func (t *topK) result() []scored {
	sortScored(t.out)
	return t.out[:min(t.k, len(t.out))]
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

// dot is the dot product of two vectors of the same length, four lanes at
// a time (about twice as fast as the plain loop: the compiler neither
// unrolls nor vectorises it, and four sums break the dependency chain).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
