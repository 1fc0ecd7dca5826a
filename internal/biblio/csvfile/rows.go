package csvfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"quarry/internal/biblio"
)

// rowReader yields the cells of one row at a time and the line it started
// on. A row that cannot be split comes back as a problem, not an error, so
// the file goes on; err is io.EOF at the end or an I/O error.
type rowReader interface {
	Read() (row []string, problem string, err error)
	line() int
}

// maxQuotedLines bounds how many lines one quoted cell may span. A real
// multi-line cell (an abstract, a note) is a few dozen lines; a quote that
// is never closed would otherwise make the reader hold the rest of the
// file in memory before it can report the row and go on.
const maxQuotedLines = 1000

// physLine is one line of the file, without its line ending; long says
// it was over the line limit and text holds only its start.
type physLine struct {
	text string
	n    int
	long bool
}

// readLine reads one line of at most max bytes (the rest of a longer one
// is discarded unread, see biblio.ReadLine), without its line ending; ""
// with io.EOF at the end.
func readLine(br *bufio.Reader, max int, buf *[]byte) (text string, long bool, err error) {
	b, long, err := biblio.ReadLine(br, max, *buf)
	*buf = b[:0]
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, err
	}
	if len(b) == 0 {
		return "", false, io.EOF
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return string(b), long, nil
}

// quotedReader splits comma- or semicolon-separated text into rows as RFC
// 4180 does, strict inside quoted cells and lenient outside them:
//
//   - a cell that starts with a quote runs to the next quote that is
//     followed by the delimiter or the end of a line; "" inside it is one
//     quote, and it may span lines (abstracts with paragraphs);
//   - any other quote in a quoted cell, or a quoted cell that is still open
//     at the end of the file (or after maxQuotedLines lines), makes the row
//     malformed: it is reported on the line where it starts, and reading
//     resumes on the next line, so the rows the stray quote would have
//     swallowed still import;
//   - a quote inside a cell that does not start with one is kept as it is
//     (`Costs of "living" reviews`), which is harmless.
//
// encoding/csv offers only strict (a quote in an unquoted cell fails the
// row) or lazy quotes, and lazy quotes turn an unclosed quote into one cell
// holding every later row of the file, silently; neither resumes after a
// bad row. Line endings are taken as encoding/csv takes them: "\r\n" is
// "\n", and blank lines are skipped.
type quotedReader struct {
	br    *bufio.Reader
	lim   biblio.Limits
	buf   []byte
	comma byte
	n     int        // lines read from br so far
	queue []physLine // lines given back after a malformed row, in order
	start int        // the line the last row started on
}

func newQuotedReader(br *bufio.Reader, comma rune, lim biblio.Limits) *quotedReader {
	return &quotedReader{br: br, comma: byte(comma), lim: lim}
}

func (q *quotedReader) line() int { return q.start }

// take returns the next line, from the lines given back first.
func (q *quotedReader) take() (physLine, error) {
	if len(q.queue) > 0 {
		l := q.queue[0]
		q.queue = q.queue[1:]
		return l, nil
	}
	s, long, err := readLine(q.br, q.lim.MaxLine, &q.buf)
	if err != nil {
		return physLine{}, err
	}
	q.n++
	return physLine{text: s, n: q.n, long: long}, nil
}

// giveBack puts lines read past a malformed row's first line back in
// front of the queue, so they are read again as rows of their own.
func (q *quotedReader) giveBack(lines []physLine) {
	if len(lines) > 0 {
		q.queue = append(append([]physLine(nil), lines...), q.queue...)
	}
}

func (q *quotedReader) Read() ([]string, string, error) {
	for {
		if len(q.queue) == 0 {
			q.n += biblio.SkipBlankLines(q.br)
		}
		first, err := q.take()
		if err != nil {
			return nil, "", err
		}
		if first.long {
			q.start = first.n
			return nil, biblio.LineTooLong(q.lim.MaxLine), nil
		}
		if first.text == "" {
			continue
		}
		q.start = first.n
		row, more, problem, err := q.split(first)
		if err != nil {
			return nil, "", err
		}
		if problem != "" {
			q.giveBack(more)
			return nil, "malformed CSV row: " + problem, nil
		}
		return row, "", nil
	}
}

// split reads one row starting at first. It returns the cells, the lines
// after first that the row took, and a problem if the row is malformed.
// Problems name no line or cell, so an import's summary counts them by kind;
// the record's line points at the row.
func (q *quotedReader) split(first physLine) (row []string, more []physLine, problem string, err error) {
	line, pos, size := first.text, 0, len(first.text)
	for {
		if pos >= len(line) || line[pos] != '"' {
			i := strings.IndexByte(line[pos:], q.comma)
			if i < 0 {
				return append(row, line[pos:]), more, "", nil
			}
			row = append(row, line[pos:pos+i])
			pos += i + 1
			continue
		}
		// A quoted cell.
		var b strings.Builder
		pos++
		for {
			i := strings.IndexByte(line[pos:], '"')
			if i < 0 {
				b.WriteString(line[pos:])
				if len(more) == maxQuotedLines {
					return nil, more, fmt.Sprintf("a quote opens a cell and is not closed within %d lines", maxQuotedLines), nil
				}
				next, err := q.take()
				if errors.Is(err, io.EOF) {
					return nil, more, "a quote opens a cell and is never closed", nil
				}
				if err != nil {
					return nil, nil, "", err
				}
				more = append(more, next)
				if size += len(next.text) + 1; next.long || size > q.lim.MaxRecord {
					// Given back, an over-long line is reported on its own.
					return nil, more, fmt.Sprintf("a quote opens a cell and is not closed within %s", biblio.Size(int64(q.lim.MaxRecord))), nil
				}
				b.WriteByte('\n')
				line, pos = next.text, 0
				continue
			}
			b.WriteString(line[pos : pos+i])
			pos += i + 1
			switch {
			case pos < len(line) && line[pos] == '"':
				b.WriteByte('"')
				pos++
				continue
			case pos == len(line):
				return append(row, b.String()), more, "", nil
			case line[pos] == q.comma:
				row = append(row, b.String())
				pos++
			default:
				if len(more) > 0 {
					return nil, more, "a quote opens a cell and is not closed on its line; the cell runs on to a stray quote on a later line", nil
				}
				return nil, more, `text after the closing quote of a cell (a quote inside a quoted cell is written "")`, nil
			}
			break
		}
	}
}

// tabReader splits lines on tabs, with no quoting.
type tabReader struct {
	br   *bufio.Reader
	max  int
	buf  []byte
	n    int
	last int
}

func (t *tabReader) Read() ([]string, string, error) {
	for {
		t.n += biblio.SkipBlankLines(t.br)
		s, long, err := readLine(t.br, t.max, &t.buf)
		if err != nil {
			return nil, "", err
		}
		t.n++
		if long {
			t.last = t.n
			return nil, biblio.LineTooLong(t.max), nil
		}
		if s == "" {
			continue
		}
		t.last = t.n
		return strings.Split(s, "\t"), "", nil
	}
}

func (t *tabReader) line() int { return t.last }
