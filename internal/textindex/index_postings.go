package textindex

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// A key is one token instance: its column and its position in the column,
// col<<32 | pos, so a row's instances of a term sort by column then
// position and a phrase's next token is at key+1. While a batch is
// tokenized the batch-local term number sits above them (termShift).
const (
	termShift = 40
	keyMask   = 1<<termShift - 1
	maxLocal  = 1 << (64 - termShift)
)

// skipEvery is how many rows of a term share one offset into its
// positions: a row's instances are found by skipping at most
// skipEvery-1 rows from there, which costs less than an offset per row.
const skipEvery = 16

// postings is one term's rows in slot order and their instances in pos,
// each row's as a uvarint count then appendKeys's encoding. blocks[i/skipEvery]
// is where row i - i%skipEvery starts in pos.
type postings struct {
	docs   []uint32
	blocks []uint32
	pos    []byte
}

// span returns where the i-th row's entry (count included) starts and
// ends in pos.
func (p *postings) span(i int) (int, int) {
	at := int(p.blocks[i/skipEvery])
	for range i % skipEvery {
		at = skipEntry(p.pos, at)
	}
	return at, skipEntry(p.pos, at)
}

// skipEntry returns where the entry starting at at ends.
func skipEntry(b []byte, at int) int {
	n, w := binary.Uvarint(b[at:])
	at += w
	for range n {
		v, w := binary.Uvarint(b[at:])
		at += w
		if v&1 == 1 {
			_, w = binary.Uvarint(b[at:])
			at += w
		}
	}
	return at
}

// entryCursor remembers where a row's entry starts, so walking a term's
// rows forward skips from the last one read instead of from its block.
type entryCursor struct {
	i, at int
	ok    bool
}

// keys decodes the i-th row's instances into buf.
func (p *postings) keys(i int, buf []uint64) []uint64 {
	var c entryCursor
	return p.keysAt(i, &c, buf)
}

// keysAt is keys, starting from c when it is at or before row i in the
// same block, and leaving c at row i.
func (p *postings) keysAt(i int, c *entryCursor, buf []uint64) []uint64 {
	first := i - i%skipEvery
	j, start := first, int(p.blocks[i/skipEvery])
	if c.ok && c.i >= first && c.i <= i {
		j, start = c.i, c.at
	}
	for ; j < i; j++ {
		start = skipEntry(p.pos, start)
	}
	*c = entryCursor{i: i, at: start, ok: true}
	e := p.pos[start:]
	cnt, w := binary.Uvarint(e)
	e = e[w:]
	buf = buf[:0]
	var col, pos uint64
	for range cnt {
		v, n := binary.Uvarint(e)
		e = e[n:]
		if v&1 == 0 {
			pos += v >> 1
		} else {
			col += v >> 1
			pos, n = binary.Uvarint(e)
			e = e[n:]
		}
		buf = append(buf, col<<32|pos)
	}
	return buf
}

// appendRow appends a row's entry (the count of ks, then appendKeys).
func appendRow(dst []byte, ks []uint64) []byte {
	return appendKeys(binary.AppendUvarint(dst, uint64(len(ks))), ks)
}

// appendKeys encodes a row's instances of a term (keys ascending, term
// bits cleared or not) as uvarints: within a column, the position's
// distance from the previous one shifted left by one (so most take one
// byte); moving to a later column, the column's distance shifted left by
// one with the low bit set, then the position. The first instance starts
// from column 0, position 0.
func appendKeys(dst []byte, ks []uint64) []byte {
	var col, pos uint64
	for _, k := range ks {
		c, p := (k&keyMask)>>32, k&0xFFFFFFFF
		if c == col {
			dst = binary.AppendUvarint(dst, (p-pos)<<1)
		} else {
			dst = binary.AppendUvarint(dst, (c-col)<<1|1)
			dst = binary.AppendUvarint(dst, p)
			col = c
		}
		pos = p
	}
	return dst
}

// batch is rows tokenized away from the index and already inverted, so
// the merge appends each term's rows of the batch in one go: local term t
// (text strs[t]) occurs in the batch rows rows[tStart[t]:tStart[t+1]]
// (ascending), whose encoded instances are pos[pStart[t]:pStart[t+1]],
// row i's starting rel[i] bytes in.
type batch struct {
	seq    int
	err    error
	strs   []string
	docids []int64
	lens   []uint32 // row*ncol+col → tokens
	tStart []uint32
	rows   []uint32
	rel    []uint32
	pStart []uint32
	pos    []byte
}

// analyzer tokenizes rows into a batch. It interns each distinct term once
// per batch, so the index's dictionary is consulted once per term and
// batch instead of once per token.
type analyzer struct {
	ncol int
	tok  TokenizeFunc
	ids  map[string]uint32
	strs []string

	keys    []uint64 // the batch's rows' keys, tagged with local terms
	ends    []int    // where each row's keys end
	docids  []int64
	lens    []uint32
	col     uint64
	pos     uint64
	overrun bool
	emit    func(string)
}

func newAnalyzer(ncol int, tok TokenizeFunc) *analyzer {
	a := &analyzer{ncol: ncol, tok: tok, ids: map[string]uint32{}}
	a.emit = func(t string) {
		id, ok := a.ids[t]
		if !ok {
			if len(a.strs) >= maxLocal {
				a.overrun = true
				return
			}
			id = uint32(len(a.strs))
			s := strings.Clone(t)
			a.ids[s] = id
			a.strs = append(a.strs, s)
		}
		if a.pos > 0xFFFFFFFF {
			a.overrun = true
			return
		}
		a.keys = append(a.keys, uint64(id)<<termShift|a.col<<32|a.pos)
		a.pos++
	}
	return a
}

// add tokenizes one row into the batch being built.
func (a *analyzer) add(docid int64, cols []string) error {
	if len(cols) > a.ncol {
		return fmt.Errorf("textindex: row %d has %d columns, the index %d", docid, len(cols), a.ncol)
	}
	start := len(a.keys)
	for c := range a.ncol {
		a.col, a.pos = uint64(c), 0
		if c < len(cols) && cols[c] != "" {
			a.tok(cols[c], a.emit)
		}
		a.lens = append(a.lens, uint32(a.pos))
	}
	if a.overrun {
		return fmt.Errorf("textindex: row %d is too large to index", docid)
	}
	slices.Sort(a.keys[start:])
	a.ends = append(a.ends, len(a.keys))
	a.docids = append(a.docids, docid)
	return nil
}

// finish inverts the rows added since the last finish into a batch (a
// counting sort by term) and starts a new one.
func (a *analyzer) finish() *batch {
	nt := len(a.strs)
	b := &batch{strs: a.strs, docids: a.docids, lens: a.lens,
		tStart: make([]uint32, nt+1), pStart: make([]uint32, nt+1)}
	// Pass 1: rows and encoded bytes per term.
	a.runs(func(_ int, id uint32, ks []uint64) {
		b.tStart[id+1]++
		b.pStart[id+1] += uint32(encodedLen(ks))
	})
	for t := range nt {
		b.tStart[t+1] += b.tStart[t]
		b.pStart[t+1] += b.pStart[t]
	}
	b.rows = make([]uint32, b.tStart[nt])
	b.rel = make([]uint32, b.tStart[nt])
	b.pos = make([]byte, b.pStart[nt])
	tc := slices.Clone(b.tStart[:nt])
	pc := slices.Clone(b.pStart[:nt])
	// Pass 2: fill them in row order, so each term's rows ascend.
	a.runs(func(row int, id uint32, ks []uint64) {
		i := tc[id]
		b.rows[i] = uint32(row)
		b.rel[i] = pc[id] - b.pStart[id]
		tc[id]++
		at := pc[id]
		pc[id] = at + uint32(len(appendRow(b.pos[at:at], ks)))
	})
	clear(a.ids)
	a.strs, a.docids, a.lens = nil, nil, nil
	a.keys, a.ends = a.keys[:0], a.ends[:0]
	return b
}

// runs calls f for each (row, term) of the batch with the row's keys of
// that term.
func (a *analyzer) runs(f func(row int, id uint32, ks []uint64)) {
	start := 0
	for row, end := range a.ends {
		ks := a.keys[start:end]
		for i := 0; i < len(ks); {
			id := ks[i] >> termShift
			j := i + 1
			for j < len(ks) && ks[j]>>termShift == id {
				j++
			}
			f(row, uint32(id), ks[i:j])
			i = j
		}
		start = end
	}
}

// encodedLen is the bytes appendRow writes for ks.
func encodedLen(ks []uint64) int {
	n := uvarintLen(uint64(len(ks)))
	var col, pos uint64
	for _, k := range ks {
		c, p := (k&keyMask)>>32, k&0xFFFFFFFF
		if c == col {
			n += uvarintLen((p - pos) << 1)
		} else {
			n += uvarintLen((c-col)<<1|1) + uvarintLen(p)
			col = c
		}
		pos = p
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
