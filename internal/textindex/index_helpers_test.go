package textindex

import (
	"io"
	"slices"
	"unsafe"
)

// asciiTokenize is FTS5's built-in 'ascii' tokenizer: ASCII letters and
// digits and every non-ASCII byte are token characters, ASCII letters are
// folded to lower case, everything else separates tokens. The differential
// tests index with it on both sides; the benchmarks use it until the
// FTS5-identical unicode61/porter tokenizer is plugged in.
func asciiTokenize(text string, emit func(string)) {
	var buf []byte
	for i := 0; i < len(text); {
		for i < len(text) && !asciiTokenChar(text[i]) {
			i++
		}
		if i >= len(text) {
			return
		}
		buf = buf[:0]
		for i < len(text) && asciiTokenChar(text[i]) {
			c := text[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
			i++
		}
		// The same buffer is reused for every token, as a real tokenizer
		// may: the index must copy what it keeps.
		emit(unsafe.String(&buf[0], len(buf)))
	}
}

func asciiTokenChar(c byte) bool {
	return c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

var errEOF = io.EOF

func slicesSort(s []int64) { slices.Sort(s) }
