package biblio

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf8"
)

// Lines reads a text file one line at a time for the line-tagged formats
// (RIS, MEDLINE), which share the same needs: LF or CRLF endings removed,
// a leading byte-order mark dropped, a line that is not valid UTF-8 decoded
// as Latin-1 in full (old EndNote and hand-edited exports are Latin-1, and
// such bytes must not be lost or crash a parser), lines of any length, and
// one line of push-back for a reader that finds the start of the next
// record only by reading it.
type Lines struct {
	br      *bufio.Reader
	n       int // number of the last line returned
	held    string
	hasHeld bool
	eof     bool
}

// NewLines returns a line reader over r.
func NewLines(r io.Reader) *Lines {
	return &Lines{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next line without its line ending, or ok=false at the
// end of the input. Only an I/O error is an error.
func (l *Lines) Next() (line string, ok bool, err error) {
	if l.hasHeld {
		l.hasHeld = false
		l.n++
		return l.held, true, nil
	}
	if l.eof {
		return "", false, nil
	}
	var buf []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			l.eof = true
			if len(buf) == 0 {
				return "", false, nil
			}
			break
		}
		if err != nil {
			return "", false, err
		}
		break
	}
	l.n++
	buf = trimEOL(buf)
	if l.n == 1 && len(buf) >= 3 && string(buf[:3]) == "\ufeff" {
		buf = buf[3:]
	}
	return latin1IfInvalid(buf), true, nil
}

// Unread pushes back line, the line Next just returned: the next call to
// Next returns it again, with the same number.
func (l *Lines) Unread(line string) {
	l.held, l.hasHeld = line, true
	l.n--
}

// Number is the 1-based number of the line Next returned last.
func (l *Lines) Number() int { return l.n }

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func latin1IfInvalid(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}
