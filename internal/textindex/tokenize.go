package textindex

import "unsafe"

// The tokenizer reproduces, byte for byte, the terms SQLite's FTS5 indexes
// for tokenize = 'porter unicode61 remove_diacritics 2' (the papers_fts
// spec), so that an index built from them ranks as FTS5 did. It ports
// fts5UnicodeTokenize and fts5PorterCb of ext/fts5/fts5_tokenize.c
// (unicode.go and porter.go hold the rest) and is checked against the real
// FTS5 by tokenize_test.go.

// maxTermBytes is FTS5_MAX_TOKEN_SIZE: FTS5 indexes only a token's first
// 32768 bytes (fts5StorageInsertCallback), cutting wherever that falls.
const maxTermBytes = 32768

// asciiToken marks the ASCII token characters of unicode61 with its
// default categories (sqlite3Fts5UnicodeAscii; tokenize_test.go checks it
// against the category tables): digits and letters.
var asciiToken = [128]bool{
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	'A': true, 'B': true, 'C': true, 'D': true, 'E': true, 'F': true, 'G': true, 'H': true, 'I': true,
	'J': true, 'K': true, 'L': true, 'M': true, 'N': true, 'O': true, 'P': true, 'Q': true, 'R': true,
	'S': true, 'T': true, 'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true,
	'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true, 'g': true, 'h': true, 'i': true,
	'j': true, 'k': true, 'l': true, 'm': true, 'n': true, 'o': true, 'p': true, 'q': true, 'r': true,
	's': true, 't': true, 'u': true, 'v': true, 'w': true, 'x': true, 'y': true, 'z': true,
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

// Tokenizer splits text into FTS5's terms, reusing its buffers from token
// to token and call to call, so tokenizing allocates nothing once they
// have grown. A Tokenizer is not safe for concurrent use; its zero value is
// ready.
type Tokenizer struct {
	fold []byte                   // the folded token being built
	stem [porterMaxToken + 8]byte // room for porterStem to add an 'e'
}

// Tokenize calls emit with each term of text, in order, as FTS5's
// 'porter unicode61 remove_diacritics 2' tokenizer indexes them. The
// string emit receives is only valid during the call (see Tokens).
func Tokenize(text string, emit func(token string)) {
	var t Tokenizer
	t.Tokens(text, emit)
}

// Tokens calls emit with each term of text, in order. To spare an
// allocation per token, the string emit receives aliases t's buffer and is
// overwritten by the next token: emit must copy it (strings.Clone) to keep
// it, e.g. as a new map key; looking it up in a map needs no copy.
//
// Invalid UTF-8 is read as SQLite reads it, and FTS5 can index empty terms
// (a token of marks only, such as a lone U+0345), so emit may get "".
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
				if asciiToken[b] {
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
				if !asciiToken[b] {
					break
				}
				if b >= 'A' && b <= 'Z' {
					b += 'a' - 'A'
				}
				buf = append(buf, b)
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
// index does; the result aliases buf or t.stem.
func (t *Tokenizer) term(buf []byte) string {
	if len(buf) < porterMinToken || len(buf) > porterMaxToken {
		if len(buf) > maxTermBytes {
			buf = buf[:maxTermBytes]
		}
		return unsafe.String(unsafe.SliceData(buf), len(buf))
	}
	n := copy(t.stem[:], buf)
	n = porterStem(t.stem[:], n)
	return unsafe.String(&t.stem[0], n)
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
