package textindex

import "slices"

// NEAR follows FTS5 (fts5_expr.c, fts5ExprNearIsMatch): a row matches
// when every phrase of the group is in it and some instance of each lies
// in a window that ends at the latest of them, each phrase's instance
// starting at most its length plus the distance before that end. The
// instances that took part in some match are the only ones that count
// for bm25 in that row (FTS5 trims the phrases' position lists to them).
// Positions are (column << 32 | offset), as in FTS5's position lists, so
// instances in different columns are never near.

// nearMatches is a NEAR node's rows and, for each of its phrases, the
// instances per column that count in each row (len(slots)*ncol each).
type nearMatches struct {
	counts [][]uint32
}

// lookaheadEOF is FTS5_LOOKAHEAD_EOF.
const lookaheadEOF = uint64(1) << 62

// bindNear evaluates a NEAR group over the rows all its phrases share.
func (ev *evaluator) bindNear(e *Expr) *evalNode {
	n := &evalNode{op: OpNear, near: &nearMatches{}}
	var phrases []*evalPhrase
	for _, k := range e.Kids {
		p := ev.phrase(k.Text)
		ev.phrases = append(ev.phrases, p)
		phrases = append(phrases, p)
		n.kids = append(n.kids, &evalNode{op: OpPhrase, phrase: p, slots: p.slots})
		n.near.counts = append(n.near.counts, nil)
	}
	lists := make([][]uint32, len(phrases))
	for i, p := range phrases {
		lists[i] = p.slots
	}
	slices.SortFunc(lists, func(a, b []uint32) int { return len(a) - len(b) })
	rows := lists[0]
	for _, l := range lists[1:] {
		rows = intersect(rows, l)
	}
	if len(phrases) == 1 { // a one-phrase group is the phrase
		n.slots = rows
		n.near = nil
		n.op = OpPhrase
		n.phrase = phrases[0]
		n.kids = nil
		return n
	}
	ncol := ev.ix.ncol
	pos := make([][]uint64, len(phrases))
	kept := make([][]uint64, len(phrases))
	cursors := make([]int, len(phrases))
	for _, s := range rows {
		for i, p := range phrases {
			cursors[i] = gallop(p.slots, cursors[i], s)
			pos[i] = ev.instances(p, cursors[i], pos[i][:0])
		}
		lens := make([]int, len(phrases))
		for i, p := range phrases {
			lens[i] = len(p.terms)
		}
		if !nearIsMatch(pos, lens, e.Dist, kept) {
			continue
		}
		n.slots = append(n.slots, s)
		for i := range phrases {
			c := make([]uint32, ncol)
			for _, k := range kept[i] {
				c[k>>32]++
			}
			n.near.counts[i] = append(n.near.counts[i], c...)
		}
	}
	return n
}

// instances returns the start positions of phrase p's instances in its
// i-th row (p.slots[i]), ascending.
func (ev *evaluator) instances(p *evalPhrase, i int, out []uint64) []uint64 {
	s := p.slots[i]
	if len(p.terms) == 1 {
		t := p.terms[0]
		j := gallop(t.docs, 0, s)
		return t.keys(j, out)
	}
	keys := make([][]uint64, len(p.terms))
	for ti, t := range p.terms {
		keys[ti] = t.keys(gallop(t.docs, 0, s), nil)
	}
	phraseStarts(keys, make([]int, len(p.terms)), func(k0 uint64) { out = append(out, k0) })
	return out
}

// NearMatch is FTS5's NEAR test over one row for a ranking outside the
// index (the store's on PostgreSQL): pos[i] are phrase i's instance
// starts ascending, each column<<32|offset, lens[i] its length in
// tokens. It reports whether the group matches and, for each phrase, the
// instances that took part, which are what bm25 counts.
func NearMatch(pos [][]uint64, lens []int, dist int) ([][]uint64, bool) {
	kept := make([][]uint64, len(pos))
	for _, p := range pos {
		if len(p) == 0 {
			return kept, false
		}
	}
	ok := nearIsMatch(pos, lens, dist, kept)
	return kept, ok
}

// lookahead is FTS5's Fts5LookaheadReader over a position list.
type lookahead struct {
	a         []uint64
	i         int
	pos, next uint64
}

func (r *lookahead) advance() bool {
	r.pos = r.next
	if r.i < len(r.a) {
		r.next = r.a[r.i]
		r.i++
	} else {
		r.next = lookaheadEOF
	}
	return r.pos == lookaheadEOF
}

// nearIsMatch is fts5ExprNearIsMatch over the phrases' positions in one
// row: it reports whether they meet the distance, and sets kept[i] to
// the instances of phrase i that took part in a match.
func nearIsMatch(pos [][]uint64, lens []int, dist int, kept [][]uint64) bool {
	rd := make([]lookahead, len(pos))
	for i := range pos {
		rd[i] = lookahead{a: pos[i]}
		rd[i].advance()
		rd[i].advance()
		kept[i] = kept[i][:0]
	}
	for {
		iMax := rd[0].pos
		for match := false; !match; {
			match = true
			for i := range rd {
				iMin := int64(iMax) - int64(lens[i]) - int64(dist)
				if int64(rd[i].pos) < iMin || rd[i].pos > iMax {
					match = false
					for int64(rd[i].pos) < iMin {
						if rd[i].advance() {
							return len(kept[0]) > 0
						}
					}
					if rd[i].pos > iMax {
						iMax = rd[i].pos
					}
				}
			}
		}
		for i := range rd {
			if p := rd[i].pos; len(kept[i]) == 0 || p != kept[i][len(kept[i])-1] {
				kept[i] = append(kept[i], p)
			}
		}
		adv, least := 0, rd[0].next
		for i := range rd {
			if rd[i].next < least {
				least, adv = rd[i].next, i
			}
		}
		if rd[adv].advance() {
			return len(kept[0]) > 0
		}
	}
}
