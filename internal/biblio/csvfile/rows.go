package csvfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
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

// physLine is one line of the file, without its line ending.
type physLine struct {
	text string
	n    int
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
	comma byte
	n     int        // lines read from br so far
	queue []physLine // lines given back after a malformed row, in order
	start int        // the line the last row started on
}

func newQuotedReader(br *bufio.Reader, comma rune) *quotedReader {
	return &quotedReader{br: br, comma: byte(comma)}
}

func (q *quotedReader) line() int { return q.start }

// take returns the next line, from the lines given back first.
func (q *quotedReader) take() (physLine, error) {
	if len(q.queue) > 0 {
		l := q.queue[0]
		q.queue = q.queue[1:]
		return l, nil
	}
	s, err := q.br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return physLine{}, err
	}
	if s == "" {
		return physLine{}, io.EOF
	}
	q.n++
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	return physLine{text: s, n: q.n}, nil
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
		first, err := q.take()
		if err != nil {
			return nil, "", err
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
	line, pos := first.text, 0
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
	n    int
	last int
}

func (t *tabReader) Read() ([]string, string, error) {
	for {
		s, err := t.br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, "", err
		}
		if s == "" {
			return nil, "", io.EOF
		}
		t.n++
		s = strings.TrimRight(s, "\r\n")
		if s == "" {
			continue
		}
		t.last = t.n
		return strings.Split(s, "\t"), "", nil
	}
}

func (t *tabReader) line() int { return t.last }
