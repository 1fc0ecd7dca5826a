// Package textenc turns a bibliographic file in any common encoding into
// UTF-8 before a format reader sees it, so every format (BibTeX, RIS,
// MEDLINE, ...) reads Chinese, Japanese or UTF-16 exports alike: a GBK
// BibTeX file was read as Latin-1 (凯撒 became "¿­Èö").
//
// The encoding is the one the user names (--encoding, the upload form),
// or detected: a byte-order mark (UTF-8, UTF-16), valid UTF-8, UTF-16
// without a mark (NUL bytes every other byte), and otherwise
// saintfish/chardet (a port of ICU's detector) for the multi-byte
// encodings (GB18030/GBK, Big5, Shift_JIS, EUC-JP, EUC-KR) and
// windows-1252. A file whose encoding cannot be told is passed on as it
// is: the line readers then decode each line that is not UTF-8 as Latin-1,
// as before.
package textenc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/saintfish/chardet"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"quarry/internal/fault"
)

// UTF8 is the name Decode returns for input passed on unchanged.
const UTF8 = "utf-8"

// Auto asks Decode to detect the encoding (as does "").
const Auto = "auto"

// headSize is how much of the input detection looks at.
const headSize = 64 << 10

// minConfidence is chardet's confidence (0-100) below which its guess of
// a multi-byte encoding is not taken.
const minConfidence = 30

// Decode returns a reader of r's text as UTF-8 and the name of the
// encoding it was read in. name is an encoding's name as the WHATWG
// Encoding Standard lists it ("gbk", "shift_jis", "utf-16le", "latin1",
// "windows-1252"...), or "" / "auto" to detect it; an unknown name is an
// EInvalid error.
func Decode(r io.Reader, name string) (io.Reader, string, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	br := bufio.NewReaderSize(r, headSize)
	if name != "" && name != Auto {
		enc, err := htmlindex.Get(name)
		if err != nil {
			return nil, "", &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("unknown encoding %q (give a name such as utf-8, gbk, gb18030, big5, shift_jis, euc-jp, euc-kr, utf-16le, utf-16be, windows-1252 or latin1, or auto)", name),
				Fields: map[string]string{"encoding": fmt.Sprintf("%q is not an encoding Quarry knows", name)}}
		}
		canonical, _ := htmlindex.Name(enc)
		if canonical == UTF8 {
			return br, UTF8, nil
		}
		if strings.HasPrefix(canonical, "utf-16") {
			// A mark, if any, wins over the name, and is dropped.
			return transform.NewReader(br, unicode.BOMOverride(enc.NewDecoder())), canonical, nil
		}
		return transform.NewReader(br, enc.NewDecoder()), canonical, nil
	}
	head, _ := br.Peek(headSize)
	enc, detected := Detect(head, len(head) < headSize)
	if enc == nil {
		return br, detected, nil
	}
	return transform.NewReader(br, enc), detected, nil
}

// Detect names the encoding of a file from its first bytes (complete says
// head is the whole file) and returns the decoder to UTF-8, or nil when
// the bytes are to be passed on as they are (UTF-8, or unknown).
func Detect(head []byte, complete bool) (transform.Transformer, string) {
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		return nil, UTF8 // the readers drop the mark
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder(), "utf-16le"
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder(), "utf-16be"
	}
	// Before the UTF-8 test: NUL bytes are valid UTF-8.
	if le, be := nulsAt(head); le || be {
		if le {
			return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder(), "utf-16le"
		}
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder(), "utf-16be"
	}
	if validUTF8(head, complete) {
		return nil, UTF8
	}
	res, err := chardet.NewTextDetector().DetectBest(head)
	if err != nil || res == nil {
		return nil, ""
	}
	name := strings.ToLower(res.Charset)
	switch name {
	case "gb-18030", "gb18030", "gbk", "gb2312", "big5", "shift_jis", "euc-jp", "euc-kr":
		if res.Confidence < minConfidence {
			return nil, ""
		}
	case "iso-8859-1", "windows-1252":
		// Only when no line holds UTF-8: a file mixing both is left to
		// the line readers' per-line fallback.
		if hasUTF8Sequence(head) {
			return nil, ""
		}
		name = "windows-1252"
	default:
		return nil, ""
	}
	if name == "gb-18030" {
		name = "gb18030"
	}
	enc, err := htmlindex.Get(name)
	if err != nil {
		return nil, ""
	}
	return enc.NewDecoder(), name
}

// validUTF8 is utf8.Valid, except that a rune cut at the end of an
// incomplete head does not count.
func validUTF8(b []byte, complete bool) bool {
	if !complete {
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
				break
			}
			b = b[:len(b)-1]
		}
	}
	return utf8.Valid(b)
}

// nulsAt tells whether head looks like UTF-16 text without a mark: most of
// its odd (little-endian) or even (big-endian) bytes are NUL, as ASCII
// text in UTF-16 is.
func nulsAt(b []byte) (le, be bool) {
	if len(b) < 8 {
		return false, false
	}
	var odd, even int
	for i, c := range b {
		if c == 0 {
			if i%2 == 1 {
				odd++
			} else {
				even++
			}
		}
	}
	half := len(b) / 2
	return odd > half*3/5, even > half*3/5
}

// hasUTF8Sequence tells whether b holds at least one valid multi-byte
// UTF-8 sequence.
func hasUTF8Sequence(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if n > 1 && r != utf8.RuneError {
			return true
		}
		b = b[n:]
	}
	return false
}
