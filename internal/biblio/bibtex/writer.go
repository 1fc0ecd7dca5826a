package bibtex

import (
	"bufio"
	"encoding/json"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"quarry/internal/biblio"
)

// Writer writes records as BibTeX entries in UTF-8, which BibLaTeX/biber
// and modern BibTeX read, escaping exactly what the Reader would otherwise
// interpret; it implements biblio.Writer.
type Writer struct {
	w    *bufio.Writer
	keys map[string]bool
	next map[string]int // next suffix to try per base key
	b    strings.Builder
}

// NewWriter returns a Writer to w; Close flushes it.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), keys: map[string]bool{}, next: map[string]int{}}
}

// Close flushes what is buffered; it does not close the underlying writer.
func (w *Writer) Close() error { return w.w.Flush() }

// Write writes one record as one entry.
func (w *Writer) Write(rec biblio.Record) error {
	p := rec.Paper
	b := &w.b
	b.Reset()
	extra := extraFields(rec.Extra)
	typ, venueField := entryFor(rec.Type)
	if bt := extra["bibtex_type"]; fieldNameRE.MatchString(bt) && keepsType(bt, rec) {
		typ = bt // @inbook stays @inbook, @online stays @online
	}
	if venueField == "publisher" && (extra["publisher"] != "" && extra["publisher"] != p.Venue || extra["booktitle"] == p.Venue) {
		venueField = "booktitle" // a book whose venue is not its publisher
	}
	key := extra["bibtex_key"]
	if !keyRE.MatchString(key) || w.keys[key] {
		key = w.key(rec)
	}
	w.keys[key] = true
	b.WriteString("@" + typ + "{" + key + ",\n")
	written := map[string]bool{}
	field := func(name, value string) {
		written[name] = true
		if value != "" {
			b.WriteString("  " + name + " = {" + value + "},\n")
		}
	}
	field("title", escapeTitle(p.Title))
	field("author", authorList(rec))
	if p.Year > 0 {
		field("year", strconv.Itoa(p.Year))
	}
	if rec.Type == biblio.Article {
		// Always present, so an @article with an arXiv eprint and no
		// journal is not read back as a BibLaTeX preprint.
		venue := p.Venue
		if extra["fjournal"] == p.Venue && extra["journal"] != "" {
			venue = extra["journal"] // the abbreviation; fjournal follows from Extra
		}
		b.WriteString("  journal = {" + escape(venue) + "},\n")
		written["journal"] = true
	} else {
		field(venueField, escape(p.Venue))
	}
	field("volume", escape(p.Volume))
	field("number", escape(p.Issue))
	field("pages", escape(p.Pages))
	field("doi", escapeVerbatim(p.DOI))
	if p.ArxivID != "" {
		if rec.Type == biblio.Misc {
			// Mendeley's field: an arXiv eprint would make it a preprint.
			field("arxivid", escapeVerbatim(p.ArxivID))
		} else {
			field("eprint", escapeVerbatim(p.ArxivID))
			field("archiveprefix", "arXiv")
		}
	}
	if rec.Type == biblio.Preprint {
		field("pubstate", "preprint")
	}
	field("pmid", escapeVerbatim(p.PMID))
	field("url", escapeVerbatim(p.URL))
	field("keywords", keywordList(rec.Keywords))
	field("abstract", escape(p.Abstract))
	field("note", escape(biblio.NoteField(rec.Mark, rec.Note)))
	if g := extra["genre"]; g != "" && extra["type"] == "" {
		field("type", escape(g)) // see extra in reader.go
		written["genre"] = true
	}
	for _, name := range sortedKeys(extra) {
		if !written[name] && !notWritten[name] && fieldNameRE.MatchString(name) {
			field(name, escape(extra[name]))
		}
	}
	b.WriteString("}\n\n")
	_, err := w.w.WriteString(b.String())
	return err
}

// notWritten are Extra keys the writer does not write as fields: where
// the record came from (the entry type and key, used above) and what
// Quarry's library keeps there for itself (type, keywords, mark, note:
// written from the record). A crossref is written: the record already
// holds what it inherited, and the reference reads back as it was.
var notWritten = map[string]bool{
	"bibtex_type": true, "bibtex_key": true, "type": true, "keywords": true, "mark": true, "note": true,
}

var (
	fieldNameRE = regexp.MustCompile(`^[a-z][a-z0-9_:.+-]*$`)
	keyRE       = regexp.MustCompile(`^[^\s,{}()"#%'=~\\]+$`)
)

// extraFields reads the string values of a record's Extra (a
// JSON object), the fields another reader kept: publisher, isbn, editor,
// address and the rest, so an export carries them back out.
func extraFields(raw json.RawMessage) map[string]string {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		// Only text: a number or list (a corpus's times_listed) would
		// read back as text, a different value; the library keeps it on
		// re-import (extra is merged), and BibTeX has no field for it.
		if v, ok := v.(string); ok {
			out[strings.ToLower(k)] = v
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// keepsType reports whether writing rec as @entry reads
// back as its type: the same kind, or, for a preprint, an entry type the Reader
// takes for one when it has an eprint or pubstate (as the Writer writes).
func keepsType(entry string, rec biblio.Record) bool {
	switch {
	case rec.Type == biblio.Preprint:
		return entry == "article" || preprintCandidates[entry]
	case rec.Type == biblio.Chapter && typeOf(entry) == biblio.Book:
		// A book entry naming another book (booktitle, the venue) and
		// no publisher is read as a chapter (see kind).
		return extraFields(rec.Extra)["publisher"] == "" && !sameText(rec.Paper.Title, rec.Paper.Venue)
	}
	return typeOf(entry) == rec.Type
}

// typeOf is the biblio type the Reader gives an entry type (without the
// preprint rules).
func typeOf(entry string) string {
	if k, ok := entryKind[entry]; ok {
		return k
	}
	return biblio.Misc
}

// entryFor names the entry type and the field that holds the venue.
func entryFor(typ string) (entry, venue string) {
	switch typ {
	case biblio.Article:
		return "article", "journal"
	case biblio.Conference:
		return "inproceedings", "booktitle"
	case biblio.Book:
		return "book", "publisher"
	case biblio.Chapter:
		return "incollection", "booktitle"
	case biblio.Thesis:
		return "phdthesis", "school"
	case biblio.Report:
		return "techreport", "institution"
	default: // Preprint, Misc and unknown
		return "misc", "howpublished"
	}
}

// key builds a citation key people can type (smith2020deep), unique within
// this writer (smith2020deepa, ...b) so LaTeX can cite every entry.
func (w *Writer) key(rec biblio.Record) string {
	base := keyBase(rec)
	k := base
	for w.keys[k] {
		w.next[base]++
		k = base + suffix(w.next[base])
	}
	w.keys[k] = true
	return k
}

// generatedKey reports whether key is one the Writer would make for rec
// (its keyBase, with or without a disambiguating suffix), which the
// Reader then does not keep: an export re-imported into the same library
// reads as unchanged.
func generatedKey(key string, rec biblio.Record) bool {
	rest, ok := strings.CutPrefix(key, keyBase(rec))
	return ok && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz") == ""
}

// keyBase is the citation key before disambiguation: the first author's
// family name, the year and the title's first word.
func keyBase(rec biblio.Record) string {
	surname := "anon"
	if names := biblio.NamesOf(rec); len(names) > 0 {
		// The first family name word that is not a particle: Wong Kee
		// Song → wong, van Beethoven → beethoven, an organisation's
		// first word.
		n := names[0]
		words := strings.Fields(n.Last)
		if n.Literal != "" {
			words = strings.Fields(n.Literal)
		}
		for len(words) > 1 && strings.ToLower(words[0]) == words[0] {
			words = words[1:]
		}
		if len(words) > 0 {
			if s := fold(words[0], 20); s != "" {
				surname = s
			}
		}
	}
	year := ""
	if rec.Paper.Year > 0 {
		year = strconv.Itoa(rec.Paper.Year)
	}
	word := ""
	for _, t := range strings.Fields(rec.Paper.Title) {
		if t = fold(t, 20); t != "" && !stopWords[t] {
			word = t
			break
		}
	}
	return surname + year + word
}

// suffix is 1→a, 26→z, 27→aa.
func suffix(i int) string {
	var s []byte
	for ; i > 0; i = (i - 1) / 26 {
		s = append([]byte{byte('a' + (i-1)%26)}, s...)
	}
	return string(s)
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "on": true, "of": true, "in": true, "for": true,
	"and": true, "to": true, "with": true, "at": true, "by": true, "from": true,
}

// foldLetters are letters that carry no combining mark to strip.
var foldLetters = map[rune]string{
	'ß': "ss", 'æ': "ae", 'Æ': "ae", 'ø': "o", 'Ø': "o", 'ł': "l", 'Ł': "l",
	'œ': "oe", 'Œ': "oe", 'đ': "d", 'Đ': "d", 'ð': "d", 'þ': "th", 'ı': "i",
}

// fold lower-cases s to ASCII letters and digits (Müller → muller).
func fold(s string, limit int) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		if b.Len() >= limit {
			break
		}
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(unicode.ToLower(r))
		case foldLetters[r] != "":
			b.WriteString(foldLetters[r])
		}
	}
	return b.String()
}

var andWordRE = regexp.MustCompile(`(?i)(^|[ \t\n\r])and([ \t\n\r]|$)`)

// authorList writes the record's authors as BibTeX names joined by " and
// ": the file's split when the record has one (biblio.NamesOf), which
// bibName reads back as the same split; without one, the guessed split
// (organisations in braces, so BibTeX styles do not abbreviate them).
func authorList(rec biblio.Record) string {
	names := biblio.NamesOf(rec) // organisations guessed whole (biblio.GuessName)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if f := nameField(n); f != "" {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, " and ")
}

// nameField writes one name: {Literal}, "Last, First" or "Last, Suffix,
// First". Each part is written so that bibName reads it back whole: a
// part holding the word "and" or a comma goes in braces, and a family name
// of several words without a first name keeps its comma ("De Gaulle, ")
// so it is not split into first and last.
func nameField(n biblio.Name) string {
	protect := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if andWordRE.MatchString(s) || strings.Contains(s, ",") || strings.EqualFold(s, "others") {
			return "{" + escape(s) + "}"
		}
		return escape(s)
	}
	if lit := strings.Join(strings.Fields(n.Literal), " "); lit != "" {
		return "{" + escape(lit) + "}"
	}
	last, first, suffix := protect(n.Last), protect(n.First), protect(n.Suffix)
	switch {
	case last == "" && first == "" && suffix == "":
		return ""
	case suffix != "":
		return last + ", " + suffix + ", " + first
	case first != "":
		return last + ", " + first
	case strings.Contains(last, " "):
		return last + ","
	default:
		return last
	}
}

// keywordList joins keywords with ", "; a separator inside a keyword goes
// in braces of its own ("a{,} b") so the Reader does not split there. The
// whole keyword is not braced: a field that is one braced group is Web of
// Science's {{a; b}}, which the Reader unwraps and splits.
func keywordList(kws []string) string {
	parts := make([]string, 0, len(kws))
	for _, k := range kws {
		e := escape(k)
		e = strings.ReplaceAll(strings.ReplaceAll(e, ",", "{,}"), ";", "{;}")
		parts = append(parts, e)
	}
	return strings.Join(parts, ", ")
}

// escapeTitle escapes a title and puts words with inner capitals (DNA,
// iPhone) in braces, so BibTeX styles that lower-case titles keep them.
func escapeTitle(t string) string {
	words := strings.Split(t, " ")
	for i, w := range words {
		e := escape(w)
		if hasInnerUpper(w) {
			e = "{" + e + "}"
		}
		words[i] = e
	}
	return strings.Join(words, " ")
}

func hasInnerUpper(w string) bool {
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// escape writes s so that the Reader's LaTeX decoding gives s back: the
// characters LaTeX interprets become commands, ligatures (--, “, ”) are
// broken with {}, and line breaks become \\ except a plain paragraph break,
// which stays a blank line for readability.
func escape(s string) string {
	if !strings.ContainsAny(s, "\\{}&%$#_~^-`'\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '{':
			b.WriteString(`\textbraceleft{}`)
		case '}':
			b.WriteString(`\textbraceright{}`)
		case '&', '%', '$', '#', '_':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '-', '`', '\'':
			b.WriteByte(c)
			if i+1 < len(s) && s[i+1] == c {
				b.WriteString("{}")
			}
		case '\n':
			if i > 0 && !isBlank(s[i-1]) && i+2 < len(s) && s[i+1] == '\n' && !isBlank(s[i+2]) && s[i+2] != '@' {
				b.WriteString("\n\n")
				i++
				continue
			}
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeVerbatim writes a verbatim field (url, doi, eprint): only
// backslashes and braces are escaped, and an '@' that would start a line,
// which the Reader would take for the next entry.
func escapeVerbatim(s string) string {
	if !strings.ContainsAny(s, "\\{}@") {
		return s
	}
	var b strings.Builder
	lineStart := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '{', '}':
			b.WriteByte('\\')
		case '@':
			if lineStart {
				b.WriteByte('\\')
			}
		}
		b.WriteByte(c)
		lineStart = c == '\n' || lineStart && (c == ' ' || c == '\t')
	}
	return b.String()
}
