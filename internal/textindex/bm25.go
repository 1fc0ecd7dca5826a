package textindex

import (
	"math"
	"slices"
)

// FTS5's bm25 constants (fts5_aux.c, fts5Bm25Function).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Hit is one matching row and its bm25 score: FTS5's value, negative,
// lower is better.
type Hit struct {
	Docid int64
	Score float64
}

// Search returns the rows matching q, best first as FTS5's
// `ORDER BY bm25(...), rowid` orders them, skipping offset and returning
// at most limit (limit <= 0: all), and how many rows match in all. weights
// are bm25's column weights (a column without one weighs 1, as in FTS5).
// keep, when not nil, leaves out rows before they are counted or ranked
// (a year range) without changing the scores of the others: IDF and the
// average row length are over the whole index, as in FTS5 under a join.
func (ix *Index) Search(q *Expr, weights []float64, offset, limit int, keep func(docid int64) bool) ([]Hit, int, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ev := &evaluator{ix: ix}
	root := ev.bind(q)
	m := ix.kept(root.slots, keep)
	if len(m) == 0 {
		return nil, 0, nil
	}
	scores := ix.scores(ev, root, m, weights)
	k := len(m)
	if limit > 0 {
		k = min(len(m), offset+limit)
	}
	if offset >= k {
		return []Hit{}, len(m), nil
	}
	top := topK(m, scores, ix.slotDoc, k)
	return top[offset:], len(m), nil
}

// Count returns how many rows match q (and pass keep, when not nil).
func (ix *Index) Count(q *Expr, keep func(docid int64) bool) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ev := &evaluator{ix: ix}
	root := ev.bind(q)
	if keep == nil {
		return len(root.slots)
	}
	n := 0
	for _, s := range root.slots {
		if keep(ix.slotDoc[s]) {
			n++
		}
	}
	return n
}

func (ix *Index) kept(slots []uint32, keep func(int64) bool) []uint32 {
	if keep == nil {
		return slots
	}
	out := make([]uint32, 0, len(slots))
	for _, s := range slots {
		if keep(ix.slotDoc[s]) {
			out = append(out, s)
		}
	}
	return out
}

// scorer accumulates bm25 over the rows m, one phrase at a time in phrase
// order, so each row's sum adds the same terms in the same order as
// fts5Bm25Function's loop (a phrase without instances adds 0).
type scorer struct {
	ix      *Index
	m       []uint32
	weights []float64
	idf     map[*evalPhrase]float64
	norm    []float64 // k1 * (1 - b + b*D/avgdl) per row of m
	score   []float64
	keys    []uint64
}

func (ix *Index) scores(ev *evaluator, root *evalNode, m []uint32, weights []float64) []float64 {
	nRow := int64(len(ix.slotOf))
	avgdl := float64(ix.total) / float64(nRow)
	sc := &scorer{ix: ix, m: m, weights: weights, idf: map[*evalPhrase]float64{},
		norm: make([]float64, len(m)), score: make([]float64, len(m))}
	for _, p := range ev.phrases {
		nHit := int64(len(p.slots))
		idf := math.Log((float64(nRow-nHit) + 0.5) / (float64(nHit) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		sc.idf[p] = idf
	}
	for j, s := range m {
		d := float64(ix.docLen(s))
		sc.norm[j] = bm25K1 * (1 - bm25B + bm25B*d/avgdl)
	}
	if ix.ordered && needsReplay(root, true) && !hasNear(root) {
		sc.replayScores(root)
	} else {
		sc.contrib(root, m)
	}
	for j := range sc.score {
		sc.score[j] = -1.0 * sc.score[j]
	}
	return sc.score
}

// needsReplay reports whether FTS5's score can depend on its iteration
// order: an AND below the root over a phrase of several words.
func needsReplay(n *evalNode, root bool) bool {
	if n.op == OpAnd && !root && hasMultiWord(n) {
		return true
	}
	for _, k := range n.kids {
		if needsReplay(k, false) {
			return true
		}
	}
	return false
}

// hasNear reports whether n holds a NEAR group, which the replay does not
// model: such an expression is scored as contrib does (see query_near.go).
func hasNear(n *evalNode) bool {
	if n.op == OpNear {
		return true
	}
	for _, k := range n.kids {
		if hasNear(k) {
			return true
		}
	}
	return false
}

func hasMultiWord(n *evalNode) bool {
	if n.op == OpPhrase {
		return len(n.phrase.terms) > 1
	}
	for _, k := range n.kids {
		if hasMultiWord(k) {
			return true
		}
	}
	return false
}

func (sc *scorer) weight(col int) float64 {
	if col < len(sc.weights) {
		return sc.weights[col]
	}
	return 1.0
}

// contrib adds the terms of n's phrases for the rows s (ascending, all in
// m, all matching n). As in FTS5, a phrase counts in a row only where its
// branch of the expression matched: every child of an AND, the matching
// children of an OR, the left side of a NOT.
func (sc *scorer) contrib(n *evalNode, s []uint32) {
	if len(s) == 0 {
		return
	}
	switch n.op {
	case OpPhrase:
		sc.phrase(n.phrase, s)
	case OpAnd:
		for _, k := range n.kids {
			sc.contrib(k, s)
		}
	case OpOr:
		for _, k := range n.kids {
			sc.contrib(k, intersect(s, k.slots))
		}
	case OpNot:
		sc.contrib(n.kids[0], s)
	case OpNear:
		for i, k := range n.kids {
			sc.counted(k.phrase, n.slots, n.near.counts[i], s)
		}
	}
}

// counted adds phrase p's terms for the rows s given its instances per
// column in each of rows (the rows of a NEAR group, see query_near.go).
func (sc *scorer) counted(p *evalPhrase, rows []uint32, counts []uint32, s []uint32) {
	idf := sc.idf[p]
	ncol := sc.ix.ncol
	j, c := 0, 0
	for _, slot := range s {
		j = gallop(sc.m, j, slot)
		c = gallop(rows, c, slot)
		var f float64
		for col, n := range counts[c*ncol : (c+1)*ncol] {
			w := sc.weight(col)
			for range n {
				f += w
			}
		}
		sc.score[j] += idf * ((f * (bm25K1 + 1.0)) / (f + sc.norm[j]))
	}
}

func (sc *scorer) phrase(p *evalPhrase, s []uint32) {
	idf := sc.idf[p]
	ncol := sc.ix.ncol
	j, c := 0, 0 // cursors in m and in the phrase's rows
	var ec entryCursor
	for _, slot := range s {
		j = gallop(sc.m, j, slot)
		var f float64
		if len(p.terms) == 1 {
			t := p.terms[0]
			c = gallop(t.docs, c, slot)
			sc.keys = t.keysAt(c, &ec, sc.keys)
			for _, k := range sc.keys {
				f += sc.weight(int(k >> 32))
			}
		} else {
			c = gallop(p.slots, c, slot)
			for col, n := range p.counts[c*ncol : (c+1)*ncol] {
				w := sc.weight(col)
				for range n {
					f += w
				}
			}
		}
		sc.score[j] += idf * ((f * (bm25K1 + 1.0)) / (f + sc.norm[j]))
	}
}

// topK returns the k best of m by (score, docid), best first, keeping a
// heap of k rather than sorting every match.
func topK(m []uint32, scores []float64, slotDoc []int64, k int) []Hit {
	less := func(a, b Hit) bool { // a ranks before b
		if a.Score != b.Score {
			return a.Score < b.Score
		}
		return a.Docid < b.Docid
	}
	h := make([]Hit, 0, k) // max-heap on rank: the worst kept hit at h[0]
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			w := l
			if r := l + 1; r < len(h) && less(h[l], h[r]) {
				w = r
			}
			if !less(h[i], h[w]) {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for j, s := range m {
		hit := Hit{Docid: slotDoc[s], Score: scores[j]}
		if len(h) < k {
			h = append(h, hit)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !less(h[p], h[i]) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if less(hit, h[0]) {
			h[0] = hit
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b Hit) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	return h
}
