package textindex

// FTS5 replay: FTS5's score for a row depends on the rows its expression
// iterators visited before it (see the package doc). replay walks the
// rows in rowid order with FTS5's iterator rules (fts5_expr.c: First,
// Next and Test of TERM, STRING, AND, OR and NOT nodes, and the zeroing of
// position lists under an AND below the root that finds no match), so the
// index reports the instances FTS5's full scan reports. It needs slots in
// docid order, which holds after a bulk load of ascending docids.

type rnode struct {
	op      Op
	kids    []*rnode
	ph      *rphrase
	eof     bool
	nomatch bool
	row     uint32
}

// rphrase is a phrase's iterators: one cursor per token over its rows.
type rphrase struct {
	ep     *evalPhrase
	idx    int // phrase number
	cur    []int
	n      bool     // the phrase's position list is not empty
	counts []uint32 // instances per column in the current row
	empty  bool     // no token in the index, or none at all: EOF node
}

type replay struct {
	ix   *Index
	root *rnode
	phs  []*rphrase
	keys [][]uint64
}

func (ix *Index) newReplay(n *evalNode, r *replay) *rnode {
	out := &rnode{op: n.op}
	if n.op == OpPhrase {
		p := &rphrase{ep: n.phrase, idx: len(r.phs), counts: make([]uint32, ix.ncol)}
		p.empty = n.phrase.empty || len(n.phrase.terms) == 0
		p.cur = make([]int, len(n.phrase.terms))
		r.phs = append(r.phs, p)
		out.ph = p
		return out
	}
	for _, k := range n.kids {
		out.kids = append(out.kids, ix.newReplay(k, r))
	}
	return out
}

// usable reports whether a slot of a token's postings is a row FTS5 has.
func (r *replay) usable(s uint32) bool { return int(s) < r.ix.visible && r.ix.isLive(s) }

// skip moves cursor i of docs to the first usable row at or after it.
func (r *replay) skip(docs []uint32, i int) int {
	for i < len(docs) && !r.usable(docs[i]) {
		i++
	}
	return i
}

// nextFrom is sqlite3Fts5IterNextFrom (one step at least, then on to
// from) or sqlite3Fts5IterNext when !valid.
func (r *replay) nextFrom(docs []uint32, i int, valid bool, from uint32) int {
	i = r.skip(docs, i+1)
	if valid {
		for i < len(docs) && docs[i] < from {
			i = r.skip(docs, gallop(docs, i, from))
		}
	}
	return i
}

func (r *replay) setEOF(n *rnode) {
	n.eof, n.nomatch = true, false
	for _, k := range n.kids {
		r.setEOF(k)
	}
}

func (r *replay) zero(n *rnode) {
	if n.ph != nil {
		n.ph.n = false
		return
	}
	for _, k := range n.kids {
		r.zero(k)
	}
}

func (r *replay) first(n *rnode) {
	n.eof, n.nomatch = false, false
	if n.ph != nil {
		if n.ph.empty {
			n.eof = true
			return
		}
		for i, t := range n.ph.ep.terms {
			n.ph.cur[i] = r.skip(t.docs, 0)
			if n.ph.cur[i] == len(t.docs) {
				n.eof = true
			}
		}
		if !n.eof {
			r.testPhrase(n)
		}
		return
	}
	eofs := 0
	for _, k := range n.kids {
		r.first(k)
		if k.eof {
			eofs++
		}
	}
	n.row = n.kids[0].row
	switch n.op {
	case OpAnd:
		if eofs > 0 {
			r.setEOF(n)
		}
	case OpOr:
		if eofs == len(n.kids) {
			r.setEOF(n)
		}
	case OpNot:
		n.eof = n.kids[0].eof
	}
	if !n.eof {
		r.test(n)
	}
}

func (r *replay) test(n *rnode) {
	switch n.op {
	case OpPhrase:
		r.testPhrase(n)
	case OpAnd:
		r.testAnd(n)
	case OpOr:
		r.testOr(n)
	case OpNot:
		r.testNot(n)
	}
}

// testPhrase is Test_TERM / Test_STRING: bring every token to one row,
// then read the phrase's instances there.
func (r *replay) testPhrase(n *rnode) {
	p := n.ph
	terms := p.ep.terms
	last := terms[0].docs[p.cur[0]]
	for {
		match := true
		for i, t := range terms {
			if t.docs[p.cur[i]] == last {
				continue
			}
			match = false
			if last > t.docs[p.cur[i]] {
				p.cur[i] = r.nextFrom(t.docs, p.cur[i], true, last)
				if p.cur[i] == len(t.docs) {
					n.eof, n.nomatch = true, false
					return
				}
			}
			last = t.docs[p.cur[i]]
		}
		if match {
			break
		}
	}
	n.row = last
	// A one-word phrase has instances in every row it is in (FTS5_TERM
	// never fails to match); the scorer reads them when it needs them.
	p.n = len(terms) == 1 || r.instances(p)
	n.nomatch = !p.n
}

// instances counts the phrase's instances in the row its cursors share.
func (r *replay) instances(p *rphrase) bool {
	nt := len(p.ep.terms)
	for len(r.keys) < nt {
		r.keys = append(r.keys, nil)
	}
	for i, t := range p.ep.terms {
		r.keys[i] = t.keys(p.cur[i], r.keys[i])
	}
	clear(p.counts)
	found := false
inst:
	for _, k0 := range r.keys[0] {
		for i := 1; i < nt; i++ {
			want := k0 + uint64(i)
			ks := r.keys[i]
			j := 0
			for j < len(ks) && ks[j] < want {
				j++
			}
			if j == len(ks) || ks[j] != want {
				continue inst
			}
		}
		p.counts[k0>>32]++
		found = true
	}
	return found
}

func (r *replay) next(n *rnode, valid bool, from uint32) {
	switch n.op {
	case OpPhrase:
		p := n.ph
		n.nomatch = false
		t := p.ep.terms[0]
		p.cur[0] = r.nextFrom(t.docs, p.cur[0], valid, from)
		if p.cur[0] == len(t.docs) {
			n.eof = true
			return
		}
		r.testPhrase(n)
	case OpAnd:
		r.next(n.kids[0], valid, from)
		r.testAnd(n)
	case OpOr:
		last := n.row
		for _, k := range n.kids {
			if !k.eof && (k.row == last || valid && k.row < from) {
				r.next(k, valid, from)
			}
		}
		r.testOr(n)
	case OpNot:
		r.next(n.kids[0], valid, from)
		r.testNot(n)
	}
}

func (r *replay) testAnd(n *rnode) {
	last := n.row
	for {
		n.nomatch = false
		match := true
		for _, k := range n.kids {
			if last > k.row {
				r.next(k, true, last)
			}
			if k.eof {
				r.setEOF(n)
				return
			}
			if last != k.row {
				match = false
				last = k.row
			}
			if k.nomatch {
				n.nomatch = true
			}
		}
		if match {
			break
		}
	}
	if n.nomatch && n != r.root {
		r.zero(n)
	}
	n.row = last
}

func (r *replay) testOr(n *rnode) {
	next := n.kids[0]
	for _, k := range n.kids[1:] {
		cmp := compareNodes(next, k)
		if cmp > 0 || cmp == 0 && !k.nomatch {
			next = k
		}
	}
	n.row, n.eof, n.nomatch = next.row, next.eof, next.nomatch
}

// compareNodes orders nodes by row, EOF last (fts5NodeCompare).
func compareNodes(a, b *rnode) int {
	if a.eof || b.eof {
		switch {
		case a.eof && b.eof:
			return 0
		case a.eof:
			return 1
		}
		return -1
	}
	switch {
	case a.row < b.row:
		return -1
	case a.row > b.row:
		return 1
	}
	return 0
}

func (r *replay) testNot(n *rnode) {
	p1, p2 := n.kids[0], n.kids[1]
	for !p1.eof {
		cmp := compareNodes(p1, p2)
		if cmp > 0 {
			r.next(p2, true, p1.row)
			cmp = compareNodes(p1, p2)
		}
		if cmp != 0 || p2.nomatch {
			break
		}
		r.next(p1, false, 0)
	}
	n.eof, n.nomatch, n.row = p1.eof, p1.nomatch, p1.row
	if p1.eof {
		r.zero(p2)
	}
}

// phraseNode finds each phrase's node, for "is it on the root's row".
func phraseNodes(n *rnode, out []*rnode) []*rnode {
	if n.ph != nil {
		return append(out, n)
	}
	for _, k := range n.kids {
		out = phraseNodes(k, out)
	}
	return out
}

// replayScores scores the rows m (ascending) as FTS5's full scan does.
func (sc *scorer) replayScores(root *evalNode) {
	r := &replay{ix: sc.ix}
	r.root = sc.ix.newReplay(root, r)
	nodes := phraseNodes(r.root, nil)
	idf := make([]float64, len(r.phs))
	for i, p := range r.phs {
		idf[i] = sc.idf[p.ep]
	}
	r.first(r.root)
	for !r.root.eof && r.root.nomatch {
		r.next(r.root, false, 0)
	}
	j := 0
	for !r.root.eof && j < len(sc.m) {
		row := r.root.row
		j = gallop(sc.m, j, row)
		if j < len(sc.m) && sc.m[j] == row {
			for i, n := range nodes {
				if n.eof || n.row != row || !n.ph.n {
					continue
				}
				var f float64
				p := n.ph
				if len(p.ep.terms) == 1 {
					sc.keys = p.ep.terms[0].keys(p.cur[0], sc.keys)
					for _, k := range sc.keys {
						f += sc.weight(int(k >> 32))
					}
				} else {
					for col, c := range p.counts {
						w := sc.weight(col)
						for range c {
							f += w
						}
					}
				}
				sc.score[j] += idf[i] * ((f * (bm25K1 + 1.0)) / (f + sc.norm[j]))
			}
		}
		r.next(r.root, false, 0)
		for !r.root.eof && r.root.nomatch {
			r.next(r.root, false, 0)
		}
	}
}
