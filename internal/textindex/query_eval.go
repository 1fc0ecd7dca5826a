package textindex

import (
	"slices"
	"strings"
)

// evalNode is an Expr bound to the index for one search: its phrases
// tokenized and each node's matching live slots, ascending.
type evalNode struct {
	op     Op
	kids   []*evalNode
	phrase *evalPhrase
	slots  []uint32
	// near holds a NEAR node's instances (query_near.go).
	near *nearMatches
}

// evalPhrase is one phrase of the expression (FTS5 numbers them left to
// right; duplicates are separate phrases).
type evalPhrase struct {
	terms []*postings // nil when a token is not in the index
	empty bool        // tokenized to nothing: matches no row, as in FTS5
	slots []uint32
	// counts holds a multi-token phrase's instances per column in each of
	// slots (len(slots)*ncol); one-token phrases read their postings.
	counts []uint32
}

type evaluator struct {
	ix      *Index
	phrases []*evalPhrase
	keyBufs [][]uint64
}

// bind tokenizes e's phrases and evaluates every node. Every phrase is
// evaluated in full, as FTS5 counts each phrase's rows for its IDF.
func (ev *evaluator) bind(e *Expr) *evalNode {
	n := &evalNode{op: e.Op}
	if e.Op == OpPhrase {
		p := ev.phrase(e.Text)
		ev.phrases = append(ev.phrases, p)
		n.phrase, n.slots = p, p.slots
		return n
	}
	if e.Op == OpNear {
		return ev.bindNear(e)
	}
	lists := make([][]uint32, len(e.Kids))
	for i, k := range e.Kids {
		kn := ev.bind(k)
		n.kids = append(n.kids, kn)
		lists[i] = kn.slots
	}
	switch e.Op {
	case OpAnd:
		slices.SortFunc(lists, func(a, b []uint32) int { return len(a) - len(b) })
		out := lists[0]
		for _, l := range lists[1:] {
			out = intersect(out, l)
		}
		n.slots = out
	case OpOr:
		out := lists[0]
		for _, l := range lists[1:] {
			out = union(out, l)
		}
		n.slots = out
	case OpNot:
		n.slots = difference(lists[0], lists[1])
	}
	return n
}

func (ev *evaluator) phrase(text string) *evalPhrase {
	ix := ev.ix
	p := &evalPhrase{}
	var toks []string
	ix.tok(text, func(t string) { toks = append(toks, strings.Clone(t)) })
	if len(toks) == 0 {
		p.empty = true
		return p
	}
	for _, t := range toks {
		id, ok := ix.dict[t]
		if !ok || len(ix.terms[id].docs) == 0 {
			p.terms = nil
			return p
		}
		p.terms = append(p.terms, &ix.terms[id])
	}
	if len(p.terms) == 1 {
		p.slots = ix.liveSlots(ix.visibleDocs(p.terms[0].docs))
		return p
	}
	ev.phraseMatches(p)
	return p
}

// liveSlots returns docs without dead slots (docs itself when none are).
func (ix *Index) liveSlots(docs []uint32) []uint32 {
	if ix.dead == 0 {
		return docs
	}
	out := make([]uint32, 0, len(docs))
	for _, s := range docs {
		if ix.isLive(s) {
			out = append(out, s)
		}
	}
	return out
}

// phraseMatches finds the rows where p's tokens are consecutive in one
// column, driven by its rarest token, and counts the instances.
func (ev *evaluator) phraseMatches(p *evalPhrase) {
	ix := ev.ix
	nt := len(p.terms)
	drv := 0
	for i, t := range p.terms {
		if len(t.docs) < len(p.terms[drv].docs) {
			drv = i
		}
	}
	for len(ev.keyBufs) < nt {
		ev.keyBufs = append(ev.keyBufs, nil)
	}
	cur := make([]int, nt)
	counts := make([]uint32, ix.ncol)
	ptr := make([]int, nt)
	ecs := make([]entryCursor, nt)
next:
	for di, s := range p.terms[drv].docs {
		if !ix.isLive(s) {
			continue
		}
		for i, t := range p.terms {
			if i == drv {
				cur[i] = di
				continue
			}
			cur[i] = gallop(t.docs, cur[i], s)
			if cur[i] == len(t.docs) {
				break next
			}
			if t.docs[cur[i]] != s {
				continue next
			}
		}
		for i, t := range p.terms {
			ev.keyBufs[i] = t.keysAt(cur[i], &ecs[i], ev.keyBufs[i])
			ptr[i] = 0
		}
		clear(counts)
		found := false
		phraseStarts(ev.keyBufs[:nt], ptr, func(k0 uint64) {
			counts[k0>>32]++
			found = true
		})
		if found {
			p.slots = append(p.slots, s)
			p.counts = append(p.counts, counts...)
		}
	}
}

// phraseStarts calls each with every position of keys[0] (a phrase's
// first token in one row) that the phrase's other tokens follow one by
// one (keys[i] holds token i's positions, ascending; ptr is scratch of
// the same length, zeroed).
func phraseStarts(keys [][]uint64, ptr []int, each func(k0 uint64)) {
inst:
	for _, k0 := range keys[0] {
		for i := 1; i < len(keys); i++ {
			want := k0 + uint64(i)
			ks := keys[i]
			for ptr[i] < len(ks) && ks[ptr[i]] < want {
				ptr[i]++
			}
			if ptr[i] == len(ks) {
				return
			}
			if ks[ptr[i]] != want {
				continue inst
			}
		}
		each(k0)
	}
}

// gallop returns the first index j >= i with a[j] >= target (len(a) if
// none), probing 1, 2, 4, ... ahead then bisecting, so walking a long
// list for a few targets costs a few probes per target.
func gallop(a []uint32, i int, target uint32) int {
	if i >= len(a) || a[i] >= target {
		return i
	}
	step := 1
	lo := i
	hi := i + step
	for hi < len(a) && a[hi] < target {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	hi = min(hi, len(a))
	// a[lo] < target; answer in (lo, hi]
	j, _ := slices.BinarySearch(a[lo+1:hi], target)
	return lo + 1 + j
}

// intersect returns the slots in both a and b, walking the shorter.
func intersect(a, b []uint32) []uint32 {
	if len(a) > len(b) {
		a, b = b, a
	}
	var out []uint32
	j := 0
	for _, s := range a {
		j = gallop(b, j, s)
		if j == len(b) {
			break
		}
		if b[j] == s {
			out = append(out, s)
		}
	}
	return out
}

func union(a, b []uint32) []uint32 {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]uint32, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// difference returns the slots of a not in b.
func difference(a, b []uint32) []uint32 {
	if len(b) == 0 {
		return a
	}
	out := make([]uint32, 0, len(a))
	j := 0
	for _, s := range a {
		j = gallop(b, j, s)
		if j == len(b) || b[j] != s {
			out = append(out, s)
		}
	}
	return out
}
