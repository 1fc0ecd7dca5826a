// Package csljson reads and writes CSL-JSON, the citation data format of
// citeproc and of Zotero's "Export as CSL JSON": one JSON array of items.
//
// The reader streams the array item by item: it finds where each item ends
// by counting brackets outside strings (scanValue), keeps the item's bytes
// up to the record limit and decodes them with encoding/json, so a
// 100k-item export reads in memory bounded by the limit. An item with
// fields of the wrong type, or longer than the limit, is a record with
// Problem set and the reader goes on with the next item; broken JSON syntax
// cannot be resynchronised (there is no record boundary a parser can find
// again in arbitrary JSON), so it ends the file with one Problem record for
// the rest. Invalid UTF-8 inside strings is replaced with U+FFFD by
// encoding/json.
//
// Names keep CSL's split (Record.Names); titles' rich-text markup becomes
// plain text; variables the record has no field for go to Record.Extra
// under the keys the BibTeX reader uses where they mean the same
// (publisher, address, isbn, editor, ...; see extra.go) and are written
// back, so an export re-imports without loss.
package csljson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// Reader streams the items of one CSL-JSON file as records.
type Reader struct {
	br *bufio.Reader
	// line is the line of the next byte to read.
	line int
	// buf holds the item being read, at most lim.MaxRecord bytes.
	buf []byte
	// array says the file is a JSON array (the normal case) rather than
	// one or more top-level objects.
	array   bool
	started bool
	done    bool
	// items counts the items read, so the reader knows whether a comma
	// must come before the next.
	items int
	lim   biblio.Limits
}

// NewReader reads CSL-JSON from r with the default limits. Decompression
// is the caller's job.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 1<<16), line: 1, lim: biblio.Limits{}.OrDefault()}
}

// WithLimits sets the limits (zero fields: the defaults); call it before
// the first Next. An item longer than Limits.MaxRecord bytes, or holding a
// string longer than Limits.MaxLine (one field value), is a Problem record
// at its line: the reader keeps no more than MaxRecord bytes of it, reads
// the rest to find where the item ends and drops it, and goes on with the
// next item.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	return r
}

// Next returns the next item as a record, or io.EOF after the last one.
func (r *Reader) Next() (biblio.Record, error) {
	if r.done {
		return biblio.Record{}, io.EOF
	}
	if !r.started {
		r.started = true
		if rec, err := r.start(); err != nil || rec.Problem != "" {
			r.done = true
			return rec, err
		}
	}
	c, err := r.skipSpace()
	if err != nil {
		return r.ended(err)
	}
	if r.array {
		switch {
		case c == ']':
			r.done = true // what follows the array is not read
			return biblio.Record{}, io.EOF
		case r.items > 0 && c != ',':
			return r.syntax(fmt.Sprintf("invalid character %s after array element", quoteChar(c)))
		case r.items > 0:
			_, _ = r.br.Discard(1)
			if c, err = r.skipSpace(); err != nil {
				return r.ended(err)
			}
		}
	}
	if bytes.IndexByte([]byte(",:]}"), c) >= 0 {
		return r.syntax(fmt.Sprintf("invalid character %s looking for beginning of value", quoteChar(c)))
	}
	line := r.line
	raw, problem, err := r.scanValue()
	if err != nil {
		r.line = line // the broken item's line, not the last one read
		return r.ended(err)
	}
	r.items++
	if problem != "" {
		return biblio.Record{Line: line, Problem: problem}, nil
	}
	rec, syn := mapItem(raw)
	if syn != nil {
		// The line of the offending byte: the item's, plus the new lines
		// before it.
		at := line + bytes.Count(raw[:max(0, min(len(raw), int(syn.Offset)-1))], []byte("\n"))
		r.done = true
		return biblio.Record{Line: line, Problem: fmt.Sprintf("invalid JSON at line %d: %s; the rest of the file cannot be read", at, syn.Error())}, nil
	}
	rec.Line = line
	return rec, nil
}

// start skips a byte-order mark and leading white space and decides
// whether the file is an array of items or a lone item.
func (r *Reader) start() (biblio.Record, error) {
	if bom, _ := r.br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = r.br.Discard(3)
	}
	c, err := r.skipSpace()
	switch {
	case errors.Is(err, io.EOF):
		r.done = true
		return biblio.Record{}, io.EOF
	case err != nil:
		return biblio.Record{}, fmt.Errorf("csljson: read: %w", err)
	case c == '[':
		r.array = true
		_, _ = r.br.Discard(1)
		return biblio.Record{}, nil
	case c == '{':
		return biblio.Record{}, nil
	}
	return biblio.Record{Line: r.line, Problem: "not CSL-JSON: the file is neither a JSON array nor an object"}, nil
}

// skipSpace discards white space, counting lines, and returns the next
// byte without consuming it.
func (r *Reader) skipSpace() (byte, error) {
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case '\n':
			r.line++
		case ' ', '\t', '\r':
		default:
			_ = r.br.UnreadByte()
			return c, nil
		}
	}
}

// scanValue reads the JSON value that starts at the next byte (not white
// space) to its end, found by counting brackets outside strings: not a
// parse, which json.Unmarshal does on the bytes kept, but enough to find
// where an item ends without holding it. It keeps the first lim.MaxRecord
// bytes; a longer value, or one holding a string longer than
// lim.MaxLine, is read to its end and dropped, and problem says why.
// A string ends at a control character too (JSON forbids them there), so
// a missing quote is found on its own line rather than at the end of the
// file. err is io.ErrUnexpectedEOF when the input ends inside the value.
func (r *Reader) scanValue() (raw []byte, problem string, err error) {
	r.buf = r.buf[:0]
	first, _ := r.br.Peek(1)
	scalar := first[0] != '{' && first[0] != '[' && first[0] != '"'
	depth, inString, escaped := 0, false, false
	// done counts the value's bytes before chunk, strStart is where the
	// string being read began, so a string's length is known however many
	// chunks it spans.
	done, strStart := 0, 0
	long, fieldLong := false, false
	for {
		chunk, err := r.br.Peek(max(1, r.br.Buffered()))
		if len(chunk) == 0 {
			if errors.Is(err, io.EOF) {
				if scalar {
					return r.buf, r.tooLong(long, fieldLong), nil
				}
				err = io.ErrUnexpectedEOF
			}
			return nil, "", err
		}
		end := -1
		for i := 0; i < len(chunk); i++ {
			if inString && !escaped {
				// Most of an item is string contents: jump to what can
				// end or escape one.
				j := bytes.IndexAny(chunk[i:], stringSpecial)
				if j < 0 {
					break
				}
				i += j
			}
			c := chunk[i]
			if c == '\n' {
				r.line++
			}
			switch {
			case scalar:
				if bytes.IndexByte([]byte(" \t\r\n,:[]{}\""), c) >= 0 {
					if c == '\n' {
						r.line-- // not consumed
					}
					end = i
				}
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					fieldLong = fieldLong || done+i-strStart-1 > r.lim.MaxLine
					if depth == 0 {
						end = i + 1
					}
				case c < 0x20:
					end = i + 1
				}
			case c == '"':
				inString, strStart = true, done+i
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				if depth--; depth == 0 {
					end = i + 1
				}
			}
			if end >= 0 {
				break
			}
		}
		take := chunk
		if end >= 0 {
			take = chunk[:end]
		}
		done += len(take)
		fieldLong = fieldLong || inString && done-strStart-1 > r.lim.MaxLine
		switch {
		case long || fieldLong:
			r.buf = r.buf[:0]
		case len(r.buf)+len(take) > r.lim.MaxRecord:
			long, r.buf = true, r.buf[:0]
		default:
			if need := len(r.buf) + len(take); need > cap(r.buf) {
				// Doubling, not append's 1.25 for large slices: a long
				// item allocates about twice the limit, not five times.
				r.buf = slices.Grow(r.buf, min(max(need, 2*cap(r.buf)), r.lim.MaxRecord)-len(r.buf))
			}
			r.buf = append(r.buf, take...)
		}
		_, _ = r.br.Discard(len(take))
		if end >= 0 {
			return r.buf, r.tooLong(long, fieldLong), nil
		}
	}
}

// tooLong is the Problem of a value over the record limit (long) or
// holding a string over the field limit, or "".
func (r *Reader) tooLong(long, fieldLong bool) string {
	switch {
	case fieldLong:
		return fmt.Sprintf("a field value longer than %s (the field limit); skipped", biblio.Size(int64(r.lim.MaxLine)))
	case long:
		return biblio.RecordTooLong(r.lim.MaxRecord)
	}
	return ""
}

// stringSpecial are the bytes that end a JSON string, escape the next
// byte, or may not be in one (the control characters).
const stringSpecial = "\"\\\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"

// ended turns the end of the input (or a failing read) where more JSON
// was due into the final Problem record, or into an error if the reader
// failed.
func (r *Reader) ended(err error) (biblio.Record, error) {
	r.done = true
	switch {
	case errors.Is(err, io.EOF) && !r.array:
		return biblio.Record{}, io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return biblio.Record{Line: r.line, Problem: "file ends in the middle of the JSON; the rest of the file cannot be read"}, nil
	}
	return biblio.Record{}, fmt.Errorf("csljson: read: %w", err)
}

// syntax is the final Problem record of a file whose JSON breaks at the
// current line.
func (r *Reader) syntax(msg string) (biblio.Record, error) {
	r.done = true
	return biblio.Record{Line: r.line, Problem: fmt.Sprintf("invalid JSON at line %d: %s; the rest of the file cannot be read", r.line, msg)}, nil
}

// quoteChar writes a byte as encoding/json's syntax errors do: 'x'.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// item is the part of a CSL-JSON item Quarry reads. The id is ignored:
// Quarry derives its own stable IDs.
type item struct {
	Type           string            `json:"type"`
	Genre          string            `json:"genre"`
	Title          string            `json:"title"`
	Author         []name            `json:"author"`
	Issued         *date             `json:"issued"`
	ContainerTitle string            `json:"container-title"`
	Volume         biblio.FlexString `json:"volume"`
	Issue          biblio.FlexString `json:"issue"`
	Page           biblio.FlexString `json:"page"`
	Number         biblio.FlexString `json:"number"`
	Publisher      string            `json:"publisher"`
	Archive        string            `json:"archive"`
	Abstract       string            `json:"abstract"`
	DOI            string            `json:"DOI"`
	PMID           biblio.FlexString `json:"PMID"`
	URL            string            `json:"URL"`
	Keyword        keywords          `json:"keyword"`
	Note           string            `json:"note"`
}

// name is a CSL name variable: a person split into parts, or a literal
// (an organisation).
type name struct {
	Family   string `json:"family,omitempty"`
	Given    string `json:"given,omitempty"`
	Dropping string `json:"dropping-particle,omitempty"`
	Particle string `json:"non-dropping-particle,omitempty"`
	Suffix   string `json:"suffix,omitempty"`
	Literal  string `json:"literal,omitempty"`
}

// split is the name as biblio keeps it: the non-dropping particle ("van"
// in van Gogh) joins the family name, the dropping one the given names.
func (n name) split() biblio.Name {
	if lit := strings.TrimSpace(n.Literal); lit != "" {
		return biblio.Name{Literal: lit}
	}
	return biblio.Name{
		Last:   strings.TrimSpace(n.Particle + " " + n.Family),
		First:  strings.TrimSpace(n.Given + " " + n.Dropping),
		Suffix: strings.TrimSpace(n.Suffix),
	}
}

// date is a CSL date: date-parts ([[2020, 5, 1]], numbers or strings),
// or a raw or literal string from which the year is taken.
type date struct {
	DateParts [][]biblio.FlexString `json:"date-parts,omitempty"`
	Raw       string                `json:"raw,omitempty"`
	Literal   string                `json:"literal,omitempty"`
}

var yearRE = regexp.MustCompile(`\b\d{4}\b`)

// year returns the date's year, or 0 and the first non-blank value it
// looked at (for biblio.NotAYear) when none of them holds a year.
func (d *date) year() (int, string) {
	if d == nil {
		return 0, ""
	}
	var seen string
	if len(d.DateParts) > 0 && len(d.DateParts[0]) > 0 {
		s := strings.TrimSpace(string(d.DateParts[0][0]))
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > -1e6 && f < 1e6 {
			return int(f), ""
		}
		seen = s
	}
	for _, s := range []string{d.Raw, d.Literal} {
		if y := yearRE.FindString(s); y != "" {
			n, _ := strconv.Atoi(y)
			return n, ""
		}
		if seen == "" {
			seen = strings.TrimSpace(s)
		}
	}
	return 0, seen
}

// keywords reads CSL's keyword variable: one string separated by
// semicolons if it has any (keywords with commas, "Databases, Protein",
// as Quarry writes them), by commas otherwise (as Zotero writes its tags),
// or a list of strings some tools write instead.
type keywords []string

func (k *keywords) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		sep := ","
		if strings.Contains(s, ";") {
			sep = ";"
		}
		*k = strings.Split(s, sep)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*k = list
	return nil
}

// mapItem decodes one item and maps it onto a finished record, or
// returns the syntax error that makes raw not JSON at all (json.Unmarshal
// checks the syntax of all of raw before it decodes any of it).
func mapItem(raw []byte) (biblio.Record, *json.SyntaxError) {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return biblio.Record{}, syn
		}
		return biblio.Record{Problem: itemProblem(err)}, nil
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(raw, &all) // an object: item decoded
	rec := biblio.Record{
		Paper: research.RawPaper{
			Title:    richText(it.Title),
			Venue:    richText(it.ContainerTitle),
			Volume:   string(it.Volume),
			Issue:    string(it.Issue),
			Pages:    string(it.Page),
			Abstract: it.Abstract,
			DOI:      it.DOI,
			PMID:     string(it.PMID),
			URL:      it.URL,
		},
		Type:     readType(it),
		Keywords: it.Keyword,
		Note:     it.Note,
	}
	var year string
	if rec.Paper.Year, year = it.Issued.year(); rec.Paper.Year == 0 || rec.Paper.Year < 0 || rec.Paper.Year > 3000 {
		if rec.Paper.Year != 0 {
			year = strconv.Itoa(rec.Paper.Year) // BC (negative) or far future
		}
		rec.Paper.Year = 0
		if msg := biblio.NotAYear(year); msg != "" {
			rec.Warnings = append(rec.Warnings, msg)
		}
	}
	for _, a := range it.Author {
		n := a.split()
		rec.Names = append(rec.Names, n)
		rec.Paper.Authors = append(rec.Paper.Authors, n.Display())
	}
	publisherIsVenue := false
	if rec.Paper.Venue == "" && publishedBy[rec.Type] {
		// A book's, thesis's or report's venue is its publisher (the
		// university, the institution), as the BibTeX reader has it; it
		// is then not kept in Extra too, and the writer writes it back.
		rec.Paper.Venue = strings.TrimSpace(it.Publisher)
		publisherIsVenue = rec.Paper.Venue != ""
	}
	id, arxiv := cutArxiv(string(it.Number))
	if arxiv {
		rec.Paper.ArxivID = id
	}
	rec.Extra = readExtra(all, it, arxiv, len(rec.Warnings) > 0, publisherIsVenue)
	biblio.Finish(&rec)
	return rec, nil
}

func itemProblem(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			return fmt.Sprintf("malformed item: a JSON %s, not an object", typ.Value)
		}
		return fmt.Sprintf("malformed item: %q is a JSON %s of the wrong kind", typ.Field, typ.Value)
	}
	return "malformed item: " + err.Error()
}

// cutArxiv reads Zotero's "number": "arXiv:2101.00001".
func cutArxiv(number string) (string, bool) {
	number = strings.TrimSpace(number)
	if len(number) < 6 || !strings.EqualFold(number[:6], "arxiv:") {
		return "", false
	}
	return strings.TrimSpace(number[6:]), true
}

// readType maps a CSL type onto biblio's. Zotero exports preprints as
// "article" with publisher or archive "arXiv" (or another *rxiv server)
// and the arXiv ID in number; Quarry's writer marks them with genre.
func readType(it item) string {
	switch strings.ToLower(strings.TrimSpace(it.Type)) {
	case "":
		return ""
	case "article-journal", "article-magazine", "article-newspaper":
		return biblio.Article
	case "article":
		_, arxiv := cutArxiv(string(it.Number))
		server := strings.Contains(strings.ToLower(it.Publisher+" "+it.Archive), "rxiv")
		if arxiv || server || strings.Contains(strings.ToLower(it.Genre), "preprint") {
			return biblio.Preprint
		}
		return biblio.Article
	case "paper-conference":
		return biblio.Conference
	case "book":
		return biblio.Book
	case "chapter":
		return biblio.Chapter
	case "thesis":
		return biblio.Thesis
	case "report":
		return biblio.Report
	}
	return biblio.Misc
}

// publishedBy are the types whose venue is their publisher.
var publishedBy = map[string]bool{biblio.Book: true, biblio.Thesis: true, biblio.Report: true}

// cslTypes is readType's inverse for the writer.
var cslTypes = map[string]string{
	biblio.Article:    "article-journal",
	biblio.Conference: "paper-conference",
	biblio.Preprint:   "article",
	biblio.Book:       "book",
	biblio.Chapter:    "chapter",
	biblio.Thesis:     "thesis",
	biblio.Report:     "report",
	biblio.Misc:       "document",
}

// outItem is an item as the writer emits it, in CSL's own key spelling.
type outItem struct {
	ID             string `json:"id"`
	Type           string `json:"type,omitempty"`
	Genre          string `json:"genre,omitempty"`
	Title          string `json:"title"`
	Author         []name `json:"author,omitempty"`
	Issued         *date  `json:"issued,omitempty"`
	ContainerTitle string `json:"container-title,omitempty"`
	Volume         string `json:"volume,omitempty"`
	Issue          string `json:"issue,omitempty"`
	Page           string `json:"page,omitempty"`
	Number         string `json:"number,omitempty"`
	Publisher      string `json:"publisher,omitempty"`
	Abstract       string `json:"abstract,omitempty"`
	DOI            string `json:"DOI,omitempty"`
	PMID           string `json:"PMID,omitempty"`
	URL            string `json:"URL,omitempty"`
	Keyword        any    `json:"keyword,omitempty"`
	Note           string `json:"note,omitempty"`
}

// keys are the variables the item writes, which Extra must not repeat.
func (it outItem) keys() map[string]bool {
	k := map[string]bool{"id": true, "title": true, "type": true, "author": true, "keyword": true, "note": true, "issued": it.Issued != nil}
	for name, v := range map[string]string{"genre": it.Genre, "container-title": it.ContainerTitle, "volume": it.Volume, "publisher": it.Publisher,
		"issue": it.Issue, "page": it.Page, "number": it.Number, "abstract": it.Abstract, "DOI": it.DOI, "PMID": it.PMID, "URL": it.URL} {
		if v != "" {
			k[name] = true
		}
	}
	return k
}

// keywordValue writes keywords as CSL's one string: joined with ", " as
// Zotero does, or with "; " when a keyword holds a comma (the reader then
// splits at semicolons); a single keyword with a comma, or keywords with
// both separators, can only be a list.
func keywordValue(kws []string) any {
	if len(kws) == 0 {
		return nil
	}
	comma, semi := false, false
	for _, k := range kws {
		comma = comma || strings.Contains(k, ",")
		semi = semi || strings.Contains(k, ";")
	}
	switch {
	case !comma && !semi:
		return strings.Join(kws, ", ")
	case comma && !semi && len(kws) > 1:
		return strings.Join(kws, "; ")
	}
	return kws
}

// extraType is the CSL type the reader kept in Extra.
func extraType(raw json.RawMessage) string {
	var e struct {
		Type string `json:"csl_type"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &e) != nil {
		return ""
	}
	return e.Type
}

// Writer writes a CSL-JSON array one item per line, so large exports
// stream and diffs of two exports stay readable.
type Writer struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

// NewWriter writes CSL-JSON to w; Close writes the closing bracket.
func NewWriter(w io.Writer) *Writer {
	wr := &Writer{w: bufio.NewWriter(w)}
	wr.enc = json.NewEncoder(&wr.buf)
	wr.enc.SetEscapeHTML(false)
	return wr
}

// Write writes rec as one item. Its id is the paper's ID (or item-N when
// the record has none), which CSL requires to be unique in the file.
func (w *Writer) Write(rec biblio.Record) error {
	p := rec.Paper
	w.n++
	it := outItem{
		ID: p.ID, Type: cslTypes[rec.Type], Title: p.Title, ContainerTitle: p.Venue,
		Volume: p.Volume, Issue: p.Issue, Page: p.Pages, Abstract: p.Abstract,
		DOI: p.DOI, PMID: p.PMID, URL: p.URL,
		Keyword: keywordValue(rec.Keywords),
		Note:    biblio.NoteField(rec.Mark, rec.Note),
	}
	if t := extraType(rec.Extra); t != "" && readType(item{Type: t, Genre: it.Genre}) == rec.Type {
		it.Type = t // article-magazine stays article-magazine
	}
	if it.ID == "" {
		it.ID = fmt.Sprintf("item-%d", w.n)
	}
	if publishedBy[rec.Type] {
		// The venue is the publisher (see mapItem) unless Extra has
		// another publisher, which extraVars writes.
		var e struct {
			Publisher *string `json:"publisher"`
		}
		_ = json.Unmarshal(rec.Extra, &e)
		switch {
		case e.Publisher == nil:
			it.Publisher, it.ContainerTitle = p.Venue, ""
		case *e.Publisher == p.Venue:
			it.ContainerTitle = ""
		}
	}
	if rec.Type == biblio.Preprint {
		it.Genre = "preprint"
	}
	if p.ArxivID != "" {
		it.Number = "arXiv:" + p.ArxivID
	}
	if p.Year != 0 {
		it.Issued = &date{DateParts: [][]biblio.FlexString{{biblio.FlexString(strconv.Itoa(p.Year))}}}
	}
	for _, n := range biblio.NamesOf(rec) {
		it.Author = append(it.Author, name{Family: n.Last, Given: n.First, Suffix: n.Suffix, Literal: n.Literal})
	}
	w.buf.Reset()
	if w.n == 1 {
		w.buf.WriteString("[\n")
	} else {
		w.buf.WriteString(",\n")
	}
	if err := w.enc.Encode(it); err != nil {
		return fmt.Errorf("csljson: write: %w", err)
	}
	w.buf.Truncate(w.buf.Len() - 1) // Encode's newline: the separator comes first
	if vars := extraVars(rec.Extra, it.keys()); len(vars) > 0 {
		w.buf.Truncate(w.buf.Len() - 1) // the closing brace
		w.buf.Write(vars)
		w.buf.WriteByte('}')
	}
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("csljson: write: %w", err)
	}
	return nil
}

// Close ends the array and flushes; it does not close the underlying
// writer.
func (w *Writer) Close() error {
	end := "\n]\n"
	if w.n == 0 {
		end = "[]\n"
	}
	if _, err := w.w.WriteString(end); err != nil {
		return fmt.Errorf("csljson: write: %w", err)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("csljson: flush: %w", err)
	}
	return nil
}
