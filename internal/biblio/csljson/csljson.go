// Package csljson reads and writes CSL-JSON, the citation data format of
// citeproc and of Zotero's "Export as CSL JSON": one JSON array of items.
//
// The reader streams the array item by item with encoding/json's Decoder,
// so a 100k-item export reads in memory bounded by its largest item. An
// item with fields of the wrong type is a record with Problem set and the
// reader goes on with the next item; broken JSON syntax cannot be
// resynchronised (there is no record boundary a parser can find again in
// arbitrary JSON), so it ends the file with one Problem record for the rest.
// Invalid UTF-8 inside strings is replaced with U+FFFD by encoding/json.
package csljson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// Reader streams the items of one CSL-JSON file as records.
type Reader struct {
	br    *bufio.Reader
	lines *lineCounter
	dec   *json.Decoder
	// array says the file is a JSON array (the normal case) rather than
	// one or more top-level objects.
	array   bool
	started bool
	done    bool
	lim     biblio.Limits
}

// NewReader reads CSL-JSON from r with the default limits. Decompression
// is the caller's job.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 1<<16), lim: biblio.Limits{}.OrDefault()}
}

// WithLimits sets the limits (zero fields: the defaults); call it before
// the first Next. The decoder may read at most Limits.MaxRecord bytes for
// one item (with the white space before it): a longer item cannot be
// skipped without parsing it, so, like broken JSON, it ends the file with
// one Problem record, having held no more than the limit.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	return r
}

// errItemTooLong is what the decoder's input answers once an item has
// taken its budget.
var errItemTooLong = errors.New("item over the record limit")

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
	r.lines.budget = r.lim.MaxRecord
	if r.array && !r.dec.More() {
		r.done = true
		if _, err := r.dec.Token(); err != nil { // the closing bracket
			return r.broken(err)
		}
		return biblio.Record{}, io.EOF
	}
	var raw json.RawMessage
	r.lines.budget = r.lim.MaxRecord
	if err := r.dec.Decode(&raw); err != nil {
		r.done = true
		if !r.array && errors.Is(err, io.EOF) && r.lines.err == nil {
			return biblio.Record{}, io.EOF
		}
		return r.broken(err)
	}
	rec := mapItem(raw)
	rec.Line = r.lines.lineAt(r.dec.InputOffset() - int64(len(raw)))
	return rec, nil
}

// start skips a byte-order mark and leading white space and decides
// whether the file is an array of items or a lone item.
func (r *Reader) start() (biblio.Record, error) {
	if bom, _ := r.br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = r.br.Discard(3)
	}
	line := 1
	for {
		c, err := r.br.ReadByte()
		if errors.Is(err, io.EOF) {
			r.done = true
			return biblio.Record{}, io.EOF
		}
		if err != nil {
			return biblio.Record{}, fmt.Errorf("csljson: read: %w", err)
		}
		switch c {
		case '\n':
			line++
			continue
		case ' ', '\t', '\r':
			continue
		}
		_ = r.br.UnreadByte()
		r.lines = &lineCounter{r: r.br, line: line, budget: r.lim.MaxRecord}
		r.dec = json.NewDecoder(r.lines)
		switch c {
		case '[':
			r.array = true
			_, _ = r.dec.Token()
			return biblio.Record{}, nil
		case '{':
			return biblio.Record{}, nil
		}
		return biblio.Record{Line: line, Problem: "not CSL-JSON: the file is neither a JSON array nor an object"}, nil
	}
}

// broken turns a decoding failure into the final Problem record, or into
// an error if the underlying reader failed.
func (r *Reader) broken(err error) (biblio.Record, error) {
	if r.lines.err != nil {
		return biblio.Record{}, fmt.Errorf("csljson: read: %w", r.lines.err)
	}
	if errors.Is(err, errItemTooLong) {
		return biblio.Record{Line: r.lines.lineAt(r.dec.InputOffset()),
			Problem: fmt.Sprintf("an item longer than %s (the record limit); the rest of the file cannot be read", biblio.Size(int64(r.lim.MaxRecord)))}, nil
	}
	// The broken value starts after the white space and comma that follow
	// the last value decoded; the decoder still holds those bytes.
	off := r.dec.InputOffset()
	rest, _ := io.ReadAll(r.dec.Buffered())
	off += int64(len(rest) - len(bytes.TrimLeft(rest, " \t\r\n,")))
	rec := biblio.Record{
		Line:    r.lines.lineAt(off),
		Problem: "file ends in the middle of the JSON; the rest of the file cannot be read",
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		rec.Problem = fmt.Sprintf("invalid JSON at line %d: %s; the rest of the file cannot be read", r.lines.lineAt(max(off, syn.Offset)), syn.Error())
	}
	return rec, nil
}

// lineCounter passes bytes on to the JSON decoder and remembers where the
// newlines it has not yet been asked about are, so a decoder offset can
// be turned into a line number without keeping the input.
type lineCounter struct {
	r        io.Reader
	off      int64
	newlines []int64
	line     int
	// err is the last read error other than io.EOF: the decoder reports
	// it as a syntax problem, but it is an I/O failure.
	err error
	// budget is how many more bytes the decoder may read for the value
	// it is decoding; the reader sets it before each, and at zero Read
	// answers errItemTooLong, so one item never holds more.
	budget int
}

func (c *lineCounter) Read(p []byte) (int, error) {
	if c.budget <= 0 {
		return 0, errItemTooLong
	}
	p = p[:min(len(p), c.budget)]
	n, err := c.r.Read(p)
	c.budget -= n
	for i, buf := 0, p[:n]; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			break
		}
		c.newlines = append(c.newlines, c.off+int64(i+j))
		i += j + 1
	}
	c.off += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// lineAt returns the 1-based line of byte offset off; offsets must not
// decrease from one call to the next.
func (c *lineCounter) lineAt(off int64) int {
	i := 0
	for i < len(c.newlines) && c.newlines[i] < off {
		i++
	}
	c.line += i
	c.newlines = c.newlines[i:]
	return c.line
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

func (n name) display() string {
	if strings.TrimSpace(n.Literal) != "" {
		return n.Literal
	}
	return biblio.Name{
		Last:   strings.TrimSpace(n.Particle + " " + n.Family),
		First:  strings.TrimSpace(n.Given + " " + n.Dropping),
		Suffix: n.Suffix,
	}.Display()
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

// keywords reads CSL's keyword variable, a comma-separated string (as
// Zotero writes its tags), or a list of strings some tools write instead.
// A keyword that itself contains a comma cannot survive the string form.
type keywords []string

func (k *keywords) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*k = strings.Split(s, ",")
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*k = list
	return nil
}

// mapItem decodes one item and maps it onto a finished record.
func mapItem(raw json.RawMessage) biblio.Record {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return biblio.Record{Problem: itemProblem(err)}
	}
	rec := biblio.Record{
		Paper: research.RawPaper{
			Title:    it.Title,
			Venue:    it.ContainerTitle,
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
	if rec.Paper.Year, year = it.Issued.year(); rec.Paper.Year == 0 {
		rec.Problem = biblio.NotAYear(year)
	}
	for _, a := range it.Author {
		rec.Paper.Authors = append(rec.Paper.Authors, a.display())
	}
	if id, ok := cutArxiv(string(it.Number)); ok {
		rec.Paper.ArxivID = id
	}
	biblio.Finish(&rec)
	return rec
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
	Abstract       string `json:"abstract,omitempty"`
	DOI            string `json:"DOI,omitempty"`
	PMID           string `json:"PMID,omitempty"`
	URL            string `json:"URL,omitempty"`
	Keyword        string `json:"keyword,omitempty"`
	Note           string `json:"note,omitempty"`
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
		Keyword: strings.Join(rec.Keywords, ", "),
		Note:    biblio.NoteField(rec.Mark, rec.Note),
	}
	if it.ID == "" {
		it.ID = fmt.Sprintf("item-%d", w.n)
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
	for _, a := range p.Authors {
		n := biblio.ParseName(a)
		it.Author = append(it.Author, name{Family: n.Last, Given: n.First, Suffix: n.Suffix})
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
