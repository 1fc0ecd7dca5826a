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

// postings is one term's rows in slot order. offs[i] is where row i's
// instances start in pos: their keys, each as a uvarint delta from the
// previous one (from 0 for the first).
type postings struct {
	docs []uint32
	offs []uint32
	pos  []byte
}

// entry returns the encoded instances of the i-th row.
func (p *postings) entry(i int) []byte {
	end := len(p.pos)
	if i+1 < len(p.offs) {
		end = int(p.offs[i+1])
	}
	return p.pos[p.offs[i]:end]
}

// keys decodes the i-th row's instances into buf.
func (p *postings) keys(i int, buf []uint64) []uint64 {
	buf = buf[:0]
	var k uint64
	for e := p.entry(i); len(e) > 0; {
		d, n := binary.Uvarint(e)
		e = e[n:]
		k += d
		buf = append(buf, k)
	}
	return buf
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// batch is rows tokenized away from the index, ready to merge: each row's
// keys tagged with batch-local term numbers (into strs) and sorted.
type batch struct {
	seq  int
	strs []string
	keys []uint64
	lens []uint32
	docs []batchDoc
	err  error
}

type batchDoc struct {
	docid         int64
	keys, keysEnd int
	lens          int
}

// analyzer tokenizes rows into a batch. It interns each distinct term once
// per batch, so the index's dictionary is consulted once per term and
// batch instead of once per token.
type analyzer struct {
	ncol int
	tok  Tokenizer
	ids  map[string]uint32
	strs []string

	b       *batch
	col     uint64
	pos     uint64
	overrun bool
	emit    func(string)
}

func newAnalyzer(ncol int, tok Tokenizer) *analyzer {
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
		a.b.keys = append(a.b.keys, uint64(id)<<termShift|a.col<<32|a.pos)
		a.pos++
	}
	return a
}

// reset starts a new batch vocabulary.
func (a *analyzer) reset() {
	clear(a.ids)
	a.strs = nil
}

func (a *analyzer) add(b *batch, docid int64, cols []string) error {
	if len(cols) > a.ncol {
		return fmt.Errorf("textindex: row %d has %d columns, the index %d", docid, len(cols), a.ncol)
	}
	a.b = b
	d := batchDoc{docid: docid, keys: len(b.keys), lens: len(b.lens)}
	for c := range a.ncol {
		a.col, a.pos = uint64(c), 0
		if c < len(cols) && cols[c] != "" {
			a.tok(cols[c], a.emit)
		}
		b.lens = append(b.lens, uint32(a.pos))
	}
	if a.overrun {
		return fmt.Errorf("textindex: row %d is too large to index", docid)
	}
	d.keysEnd = len(b.keys)
	slices.Sort(b.keys[d.keys:d.keysEnd])
	b.docs = append(b.docs, d)
	return nil
}
