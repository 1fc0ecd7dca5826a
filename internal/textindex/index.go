package textindex

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// TokenizeFunc splits text into the index's terms, calling emit once per
// token in order. emit's token may be a buffer the tokenizer reuses: the
// index copies what it keeps.
type TokenizeFunc func(text string, emit func(token string))

// Option configures an Index.
type Option func(*Index)

// WithWorkers sets how many goroutines AddAll tokenizes with (default:
// GOMAXPROCS), so a caller sharing the machine can leave cores free.
func WithWorkers(n int) Option {
	return func(ix *Index) {
		if n > 0 {
			ix.workers = n
		}
	}
}

// maxColumns bounds the columns a key can hold (see key).
const maxColumns = 256

// Index is an inverted index over rows of a fixed number of text columns,
// keyed by a caller's int64 docid (the papers table's rowid). It is safe
// for concurrent readers with one writer: queries take a read lock, and
// writes take the write lock only to merge already-tokenized rows.
//
// Rows live in slots numbered in the order they were added; a replaced or
// deleted row's slot is marked dead and skipped, and dead slots are
// compacted away once they are a quarter of all slots.
type Index struct {
	tok     TokenizeFunc
	ncol    int
	workers int

	write sync.Mutex // held by the one writer (Add, AddAll, Delete)
	mu    sync.RWMutex
	dict  map[string]uint32 // term → index into terms
	terms []postings

	slotDoc  []int64  // slot → docid
	slotLen  []uint32 // slot*ncol+col → tokens in that column
	live     []uint64 // bitmap of live slots
	slotOf   map[int64]uint32
	visible  int     // slots readers see; later ones are being merged
	ordered  bool    // slots are in docid order (FTS5's), see replay
	dead     int     // dead slots still in the postings
	colTotal []int64 // live tokens per column
	total    int64   // live tokens over all columns
}

// New returns an empty index of columns text columns, tokenized by tok.
func New(columns int, tok TokenizeFunc, opts ...Option) (*Index, error) {
	if columns <= 0 || columns > maxColumns {
		return nil, fmt.Errorf("textindex: %d columns: want 1 to %d", columns, maxColumns)
	}
	if tok == nil {
		return nil, fmt.Errorf("textindex: no tokenizer")
	}
	ix := &Index{
		tok:      tok,
		ncol:     columns,
		workers:  runtime.GOMAXPROCS(0),
		dict:     map[string]uint32{},
		slotOf:   map[int64]uint32{},
		colTotal: make([]int64, columns),
		ordered:  true,
	}
	for _, o := range opts {
		o(ix)
	}
	return ix, nil
}

// SetWorkers sets how many goroutines later AddAll calls tokenize with
// (n > 0): a caller that builds on every core and then follows small
// changes beside other work can leave a core free.
func (ix *Index) SetWorkers(n int) {
	if n <= 0 {
		return
	}
	ix.write.Lock()
	defer ix.write.Unlock()
	ix.workers = n
}

// Columns returns the number of text columns.
func (ix *Index) Columns() int { return ix.ncol }

// Len returns the number of rows (FTS5's xRowCount).
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.slotOf)
}

// Contains reports whether docid is indexed.
func (ix *Index) Contains(docid int64) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.slotOf[docid]
	return ok
}

// Tokens returns the number of tokens over all rows and columns (FTS5's
// xColumnTotalSize(-1)).
func (ix *Index) Tokens() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.total
}

// Add indexes a row, replacing the row docid had. cols beyond the index's
// columns are an error; missing ones are empty.
func (ix *Index) Add(docid int64, cols []string) error {
	if len(cols) > ix.ncol {
		return fmt.Errorf("textindex: row %d has %d columns, the index %d", docid, len(cols), ix.ncol)
	}
	a := newAnalyzer(ix.ncol, ix.tok)
	if err := a.add(docid, cols); err != nil {
		return err
	}
	b := a.finish()
	ix.write.Lock()
	defer ix.write.Unlock()
	ix.merge(b)
	return nil
}

// Delete removes docid's row; it reports whether there was one.
func (ix *Index) Delete(docid int64) bool {
	ix.write.Lock()
	defer ix.write.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ok := ix.deleteLocked(docid)
	ix.maybeCompact()
	return ok
}

func (ix *Index) deleteLocked(docid int64) bool {
	slot, ok := ix.slotOf[docid]
	if !ok {
		return false
	}
	delete(ix.slotOf, docid)
	ix.live[slot/64] &^= 1 << (slot % 64)
	for c := range ix.ncol {
		n := int64(ix.slotLen[int(slot)*ix.ncol+c])
		ix.colTotal[c] -= n
		ix.total -= n
	}
	ix.dead++
	return true
}

func (ix *Index) isLive(slot uint32) bool { return ix.live[slot/64]&(1<<(slot%64)) != 0 }

// docLen is a row's tokens over all columns (FTS5's xColumnSize(-1)).
func (ix *Index) docLen(slot uint32) uint32 {
	var n uint32
	for _, l := range ix.slotLen[int(slot)*ix.ncol : int(slot+1)*ix.ncol] {
		n += l
	}
	return n
}

// mergeChunk is how many of a batch's terms the merge appends per hold
// of the write lock, so readers wait milliseconds, not the whole batch.
const mergeChunk = 4096

// merge adds a tokenized batch's rows. The caller holds ix.write (one
// writer at a time) but not ix.mu: the rows get slots past ix.visible,
// which readers ignore, their postings are appended a chunk of terms per
// write lock, and then one write lock publishes them (and retires the
// rows they replace) at once, so a reader sees all of a batch or none.
func (ix *Index) merge(b *batch) {
	ix.mu.Lock()
	base := uint32(len(ix.slotDoc))
	for i, d := range b.docids {
		if i > 0 && d <= b.docids[i-1] || i == 0 && base > 0 && d <= ix.slotDoc[base-1] {
			ix.ordered = false
		}
	}
	ix.slotDoc = append(ix.slotDoc, b.docids...)
	ix.slotLen = append(ix.slotLen, b.lens...)
	for len(ix.live)*64 < len(ix.slotDoc) {
		ix.live = append(ix.live, 0)
	}
	ids := make([]uint32, len(b.strs))
	for t, s := range b.strs {
		id, ok := ix.dict[s]
		if !ok {
			id = uint32(len(ix.terms))
			ix.dict[s] = id
			ix.terms = append(ix.terms, postings{})
		}
		ids[t] = id
	}
	ix.mu.Unlock()

	for lo := 0; lo < len(b.strs); lo += mergeChunk {
		ix.mu.Lock()
		for t := lo; t < min(lo+mergeChunk, len(b.strs)); t++ {
			ix.appendPostings(&ix.terms[ids[t]], b, t, base)
		}
		ix.mu.Unlock()
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	for i, d := range b.docids { // a row replaced within the batch too
		ix.deleteLocked(d)
		slot := base + uint32(i)
		ix.live[slot/64] |= 1 << (slot % 64)
		ix.slotOf[d] = slot
		for c, n := range b.lens[i*ix.ncol : (i+1)*ix.ncol] {
			ix.colTotal[c] += int64(n)
			ix.total += int64(n)
		}
	}
	ix.visible = len(ix.slotDoc)
	ix.maybeCompact()
}

// appendPostings appends batch term t's rows to p.
func (ix *Index) appendPostings(p *postings, b *batch, t int, base uint32) {
	lo, hi := b.tStart[t], b.tStart[t+1]
	at := uint32(len(p.pos))
	p.docs = slices.Grow(p.docs, int(hi-lo))
	for i := lo; i < hi; i++ {
		if len(p.docs)%skipEvery == 0 {
			p.blocks = append(p.blocks, at+b.rel[i])
		}
		p.docs = append(p.docs, base+b.rows[i])
	}
	p.pos = append(p.pos, b.pos[b.pStart[t]:b.pStart[t+1]]...)
}

// visibleDocs cuts docs to the published slots.
func (ix *Index) visibleDocs(docs []uint32) []uint32 {
	if len(docs) == 0 || int(docs[len(docs)-1]) < ix.visible {
		return docs
	}
	n, _ := slices.BinarySearch(docs, uint32(ix.visible))
	return docs[:n]
}

// trim gives back the spare capacity appends left in the postings, after
// a bulk load, a chunk of terms per write lock.
func (ix *Index) trim() {
	ix.mu.RLock()
	n := len(ix.terms)
	ix.mu.RUnlock()
	for lo := 0; lo < n; lo += mergeChunk {
		ix.mu.Lock()
		for i := lo; i < min(lo+mergeChunk, n); i++ {
			p := &ix.terms[i]
			if cap(p.docs) > len(p.docs)+len(p.docs)/8 {
				p.docs = slices.Clip(slices.Clone(p.docs))
			}
			if cap(p.blocks) > len(p.blocks)+len(p.blocks)/8 {
				p.blocks = slices.Clip(slices.Clone(p.blocks))
			}
			if cap(p.pos) > len(p.pos)+len(p.pos)/8 {
				p.pos = slices.Clip(slices.Clone(p.pos))
			}
		}
		ix.mu.Unlock()
	}
}

// maybeCompact drops dead slots from the postings once they are a quarter
// of all slots, renumbering the live ones in order (so docid order among
// equal slots is kept and postings stay sorted).
func (ix *Index) maybeCompact() {
	if ix.dead < 1024 || ix.dead*4 < len(ix.slotDoc) {
		return
	}
	ix.compact()
}

func (ix *Index) compact() {
	remap := make([]uint32, len(ix.slotDoc))
	var docs []int64
	var lens []uint32
	for s := range ix.slotDoc {
		if !ix.isLive(uint32(s)) {
			remap[s] = ^uint32(0)
			continue
		}
		remap[s] = uint32(len(docs))
		docs = append(docs, ix.slotDoc[s])
		lens = append(lens, ix.slotLen[s*ix.ncol:(s+1)*ix.ncol]...)
	}
	for t := range ix.terms {
		p := &ix.terms[t]
		var q postings
		for i, s := range p.docs {
			if remap[s] == ^uint32(0) {
				continue
			}
			if len(q.docs)%skipEvery == 0 {
				q.blocks = append(q.blocks, uint32(len(q.pos)))
			}
			q.docs = append(q.docs, remap[s])
			start, end := p.span(i)
			q.pos = append(q.pos, p.pos[start:end]...)
		}
		*p = q
	}
	ix.slotDoc, ix.slotLen = docs, lens
	ix.live = make([]uint64, (len(docs)+63)/64)
	for s, d := range docs {
		ix.live[s/64] |= 1 << (s % 64)
		ix.slotOf[d] = uint32(s)
	}
	ix.dead = 0
	ix.visible = len(docs)
	ix.ordered = slices.IsSorted(docs)
}

// Stats describes the index's size, for benchmarks and status pages.
type Stats struct {
	Rows     int   // live rows
	Slots    int   // rows in the postings, dead ones included
	Tokens   int64 // live tokens over all columns
	Terms    int   // distinct terms
	Postings int   // (term, row) pairs, dead rows included
	// Bytes estimates the heap the index holds: postings, positions,
	// the dictionary and the per-row arrays (capacities, not lengths).
	Bytes int64
}

// Stats returns the index's current size.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st := Stats{Rows: len(ix.slotOf), Slots: len(ix.slotDoc), Tokens: ix.total, Terms: len(ix.terms)}
	const postingsHeader = 72   // three slice headers
	const mapEntry = 16 + 4 + 8 // string header, term number, bucket overhead (rough)
	b := int64(cap(ix.terms)) * postingsHeader
	for s := range ix.dict {
		b += int64(len(s)) + mapEntry
	}
	for i := range ix.terms {
		p := &ix.terms[i]
		st.Postings += len(p.docs)
		b += int64(cap(p.docs))*4 + int64(cap(p.blocks))*4 + int64(cap(p.pos))
	}
	b += int64(cap(ix.slotDoc))*8 + int64(cap(ix.slotLen))*4 + int64(cap(ix.live))*8 + int64(len(ix.slotOf))*(8+4+8)
	st.Bytes = b
	return st
}
