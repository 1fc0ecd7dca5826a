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
// such bytes must not be lost or crash a parser), lines up to a limit
// (Limits.MaxLine: the rest of a longer line is discarded unread, see
// Long), runs of blank lines skipped in bulk (SkipBlank), and one line of
// push-back for a reader that finds the start of the next record only by
// reading it.
type Lines struct {
	br       *bufio.Reader
	max      int
	buf      []byte
	n        int // number of the last line returned
	long     bool
	held     string
	hasHeld  bool
	heldLong bool
	eof      bool
}

// NewLines returns a line reader over r with the default line limit.
func NewLines(r io.Reader) *Lines {
	return &Lines{br: bufio.NewReaderSize(r, 64<<10), max: DefaultMaxLine}
}

// SetMax sets the longest line kept, in bytes without the line ending
// (zero or less: DefaultMaxLine).
func (l *Lines) SetMax(max int) {
	if max <= 0 {
		max = DefaultMaxLine
	}
	l.max = max
}

// Long reports that the line Next returned last was longer than the
// limit: Next returned only its first bytes (longPrefix at most), enough
// to see a tag, and discarded the rest without holding it.
func (l *Lines) Long() bool { return l.long }

// longPrefix is how much of an over-long line Next returns.
const longPrefix = 64

// ReadLine reads one line from br into buf[:0], line ending included,
// keeping at most max bytes of content: the rest of a longer line is
// read in bufio-sized chunks and dropped, so memory stays bounded whatever
// the input, and long reports it. err is as bufio.Reader.ReadBytes's: the
// line comes with io.EOF when the input ends without a newline.
func ReadLine(br *bufio.Reader, max int, buf []byte) (line []byte, long bool, err error) {
	buf = buf[:0]
	keep := max + 2 // the content and a CRLF
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case long:
		case len(buf)+len(chunk) > keep:
			buf, long = append(buf, chunk[:keep-len(buf)]...), true
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !long && len(trimEOL(buf)) > max {
			long = true
		}
		return buf, long, err
	}
}

// SkipBlank discards the blank lines (white space only) ahead, counting
// them, without returning them one by one (see SkipBlankLines). It does
// nothing when a line was pushed back. Readers call it where blank lines
// carry no meaning (between records).
func (l *Lines) SkipBlank() {
	if l.hasHeld || l.eof {
		return
	}
	l.n += SkipBlankLines(l.br)
}

// SkipBlankLines discards the lines ahead of br that hold only white space
// and returns how many it discarded, scanning the buffer rather than
// reading line by line: two gigabytes of new lines are skipped at the
// speed of a byte scan, not in minutes. It stops at the start of the first
// line with content; a read error is left for the next read to report.
func SkipBlankLines(br *bufio.Reader) int {
	skipped := 0
	for {
		b, err := br.Peek(br.Size())
		i, lastNL, nls := 0, -1, 0
		for ; i < len(b); i++ {
			c := b[i]
			if c == '\n' {
				lastNL, nls = i, nls+1
				continue
			}
			if c != ' ' && c != '\t' && c != '\r' {
				break
			}
		}
		if lastNL >= 0 {
			_, _ = br.Discard(lastNL + 1)
			skipped += nls
		}
		if i < len(b) || err != nil || lastNL < 0 {
			return skipped
		}
	}
}

// Next returns the next line without its line ending, or ok=false at the
// end of the input. Only an I/O error is an error.
func (l *Lines) Next() (line string, ok bool, err error) {
	if l.hasHeld {
		l.hasHeld = false
		l.n++
		l.long = l.heldLong
		return l.held, true, nil
	}
	l.long = false
	if l.eof {
		return "", false, nil
	}
	buf, long, err := ReadLine(l.br, l.max, l.buf)
	l.buf = buf[:0]
	if errors.Is(err, io.EOF) {
		l.eof = true
		if len(buf) == 0 {
			return "", false, nil
		}
	} else if err != nil {
		return "", false, err
	}
	l.n++
	buf = trimEOL(buf)
	if long {
		l.long = true
		buf = buf[:min(len(buf), longPrefix)]
	}
	if l.n == 1 && len(buf) >= 3 && string(buf[:3]) == "\ufeff" {
		buf = buf[3:]
	}
	return latin1IfInvalid(buf), true, nil
}

// Unread pushes back line, the line Next just returned: the next call to
// Next returns it again, with the same number.
func (l *Lines) Unread(line string) {
	l.held, l.hasHeld, l.heldLong = line, true, l.long
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
