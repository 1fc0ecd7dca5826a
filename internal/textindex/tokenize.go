package textindex

import (
	"encoding/binary"
	"math/bits"
)

// The tokenizer reproduces, byte for byte, the terms SQLite's FTS5 indexes
// for tokenize = 'porter unicode61 remove_diacritics 2' (the papers_fts
// spec), so that an index built from them ranks as FTS5 did. It ports
// fts5UnicodeTokenize and fts5PorterCb of ext/fts5/fts5_tokenize.c
// (unicode.go and porter.go hold the rest) and is checked against the real
// FTS5 by tokenize_test.go.

// maxTermBytes is FTS5_MAX_TOKEN_SIZE: FTS5 indexes only a token's first
// 32768 bytes (fts5StorageInsertCallback), cutting wherever that falls.
const maxTermBytes = 32768

// asciiFold maps the ASCII token characters of unicode61 with its
// default categories (sqlite3Fts5UnicodeAscii: digits and letters;
// tokenize_test.go checks it against the category tables) to their folded
// form, and separators to 0.
var asciiFold = [128]byte{
	'0': '0', '1': '1', '2': '2', '3': '3', '4': '4', '5': '5', '6': '6', '7': '7', '8': '8', '9': '9',
	'A': 'a', 'B': 'b', 'C': 'c', 'D': 'd', 'E': 'e', 'F': 'f', 'G': 'g', 'H': 'h', 'I': 'i',
	'J': 'j', 'K': 'k', 'L': 'l', 'M': 'm', 'N': 'n', 'O': 'o', 'P': 'p', 'Q': 'q', 'R': 'r',
	'S': 's', 'T': 't', 'U': 'u', 'V': 'v', 'W': 'w', 'X': 'x', 'Y': 'y', 'Z': 'z',
	'a': 'a', 'b': 'b', 'c': 'c', 'd': 'd', 'e': 'e', 'f': 'f', 'g': 'g', 'h': 'h', 'i': 'i',
	'j': 'j', 'k': 'k', 'l': 'l', 'm': 'm', 'n': 'n', 'o': 'o', 'p': 'p', 'q': 'q', 'r': 'r',
	's': 's', 't': 't', 'u': 'u', 'v': 'v', 'w': 'w', 'x': 'x', 'y': 'y', 'z': 'z',
}

// utf8Trans1 is SQLite's sqlite3Utf8Trans1: the payload bits of a UTF-8
// lead byte from 0xC0 on.
var utf8Trans1 = [64]uint8{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
}

// Tokenizer splits text into FTS5's terms. It reuses its buffer from token
// to token, and remembers the terms of recently seen words in a small
// direct-mapped table that holds short words inline (so it stays in the
// CPU cache, where a map of a corpus's vocabulary would not): the frequent
// words of a text are stemmed once and cost no allocation. A Tokenizer is
// not safe for concurrent use; its zero value is ready.
type Tokenizer struct {
	fold []byte      // the folded token being built
	memo []memoEntry // by memoSlot of the folded token; nil until memoAfter
	seen int         // tokens seen while memo is nil
	stem [porterMaxToken + 8]byte
}

// memoEntry is one slot of Tokenizer.memo: a folded token of up to
// memoKeyBytes bytes and its term.
type memoEntry struct {
	n      uint8 // length of folded; 0 for an empty slot
	folded [memoKeyBytes]byte
	term   string
}

const (
	memoBits     = 14
	memoSlots    = 1 << memoBits
	memoKeyBytes = 23
	// memoAfter is how many tokens a Tokenizer sees before it builds its
	// memo (~640 KB), so tokenizing a query or two costs no more than it
	// must.
	memoAfter = 4096
)

// memoSlot picks b's slot: a multiplicative hash of its first and last
// eight bytes and its length, cheap enough to pay for itself.
func memoSlot(b []byte) uint64 {
	n := len(b)
	var x uint64
	if n >= 8 {
		x = binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 29)
	} else {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	x = (x ^ uint64(n)) * 0x9E3779B97F4A7C15
	return x >> (64 - memoBits)
}

// Tokenize calls emit with each term of text, in order, as FTS5's
// 'porter unicode61 remove_diacritics 2' tokenizer indexes them. Use a
// Tokenizer to tokenize many texts: it reuses its buffers and memo.
func Tokenize(text string, emit func(token string)) {
	var t Tokenizer
	t.Tokens(text, emit)
}

// Tokens calls emit with each term of text, in order. The strings emit
// receives are ordinary immutable strings that it may keep; a frequent
// term usually comes as the same string each time.
//
// Invalid UTF-8 is read as SQLite reads it. Terms are never empty: no
// character that starts a token folds to nothing.
func (t *Tokenizer) Tokens(text string, emit func(token string)) {
	buf := t.fold[:0]
	n := len(text)
	i := 0
	for {
		// Skip separators; stop on the token's first character.
		var first uint32 // a non-ASCII first character, already read
		for {
			if i >= n {
				t.fold = buf[:0] // keep what the buffer grew to
				return
			}
			b := text[i]
			if b < 0x80 {
				if asciiFold[b] != 0 {
					break
				}
				i++
				continue
			}
			var c uint32
			c, i = readUTF8(text, i)
			if isTokenRune(c) {
				first = c
				break
			}
		}

		// Fold the token's characters into buf.
		buf = buf[:0]
		if first != 0 {
			buf = appendFolded(buf, first)
		}
		for i < n {
			b := text[i]
			if b < 0x80 {
				f := asciiFold[b]
				if f == 0 {
					break
				}
				buf = append(buf, f)
				i++
				continue
			}
			c, next := readUTF8(text, i)
			if !isTokenRune(c) && !isDiacritic(c) {
				i = next // a separator: the skip loop would drop it too
				break
			}
			buf = appendFolded(buf, c)
			i = next
		}
		emit(t.term(buf))
	}
}

// term stems a folded token as fts5PorterCb does and caps it as FTS5's
// index does.
func (t *Tokenizer) term(buf []byte) string {
	if len(buf) > memoKeyBytes {
		return t.stemmed(buf)
	}
	if t.memo == nil {
		if t.seen < memoAfter {
			t.seen++
			return t.stemmed(buf)
		}
		t.memo = make([]memoEntry, memoSlots)
	}
	e := &t.memo[memoSlot(buf)]
	if int(e.n) == len(buf) && string(e.folded[:e.n]) == string(buf) {
		return e.term
	}
	e.n = uint8(copy(e.folded[:], buf))
	e.term = t.stemmed(buf)
	return e.term
}

// stemmed returns buf's term as a new string.
func (t *Tokenizer) stemmed(buf []byte) string {
	if len(buf) < porterMinToken || len(buf) > porterMaxToken {
		if len(buf) > maxTermBytes {
			buf = buf[:maxTermBytes]
		}
		return string(buf)
	}
	n := copy(t.stem[:], buf)
	return string(t.stem[:porterStem(t.stem[:], n)])
}

// appendFolded appends c case-folded and without diacritics, encoded as
// SQLite's WRITE_UTF8 does (which, for code points beyond U+10FFFF that
// only invalid input yields, keeps just the low 21 bits).
func appendFolded(buf []byte, c uint32) []byte {
	c = unicodeFold(c)
	switch {
	case c == 0:
		return buf
	case c < 0x80:
		return append(buf, byte(c))
	case c < 0x800:
		return append(buf, 0xC0+byte(c>>6&0x1F), 0x80+byte(c&0x3F))
	case c < 0x10000:
		return append(buf, 0xE0+byte(c>>12&0x0F), 0x80+byte(c>>6&0x3F), 0x80+byte(c&0x3F))
	}
	return append(buf, 0xF0+byte(c>>18&0x07), 0x80+byte(c>>12&0x3F), 0x80+byte(c>>6&0x3F), 0x80+byte(c&0x3F))
}

// readUTF8 decodes the character at text[i] as SQLite's READ_UTF8 does,
// returning it and the index after it: a stray continuation byte is read
// as the code point of its value, and overlong forms, surrogates and
// U+FFFE/U+FFFF become U+FFFD.
func readUTF8(text string, i int) (uint32, int) {
	c := uint32(text[i])
	i++
	if c >= 0xC0 {
		c = uint32(utf8Trans1[c-0xC0])
		for i < len(text) && text[i]&0xC0 == 0x80 {
			c = c<<6 + uint32(text[i]&0x3F)
			i++
		}
		if c < 0x80 || c&0xFFFFF800 == 0xD800 || c&0xFFFFFFFE == 0xFFFE {
			c = 0xFFFD
		}
	}
	return c, i
}
