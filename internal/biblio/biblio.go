// Package biblio is the common ground of the bibliographic file formats
// researchers exchange (BibTeX, RIS, CSL-JSON, MEDLINE, CSV, JSON Lines):
// one Record type every reader yields and every writer takes, the
// conventions that carry a researcher's marks and notes through formats
// that have no field for them, author-name handling, and content-based
// format detection.
//
// Each format lives in its own subpackage (biblio/bibtex, biblio/ris, ...)
// with a streaming Reader and a Writer; biblio/codecs picks one by name.
// Nothing here knows of HTTP, HTML or SQL.
package biblio

import (
	"encoding/json"
	"fmt"
	"quarry/internal/research"
	"regexp"
	"strings"
)

// Format names, as the --format flag, the export API and Detect spell them.
const (
	BibTeX  = "bibtex" // also BibLaTeX
	RIS     = "ris"
	CSLJSON = "csljson"
	MEDLINE = "medline" // PubMed's MEDLINE/.nbib
	CSV     = "csv"
	JSONL   = "jsonl"
	WoS     = "wos" // Web of Science plain text ("FN Clarivate Analytics Web of Science")
)

// Formats lists every format name, for messages and flag help.
var Formats = []string{BibTeX, RIS, CSLJSON, MEDLINE, CSV, JSONL, WoS}

// Publication types, normalised across formats (BibTeX @inproceedings,
// RIS CONF and CSL paper-conference are all Conference) so that a record
// keeps its kind when it changes format.
const (
	Article    = "article"
	Conference = "conference"
	Preprint   = "preprint"
	Book       = "book"
	Chapter    = "chapter"
	Thesis     = "thesis"
	Report     = "report"
	Misc       = "misc"
)

// Marks a researcher puts on a paper at the result review.
const (
	Relevant   = "relevant"
	Irrelevant = "irrelevant"
)

// Record is one bibliographic record in a file, mapped onto a paper.
// A reader returns exactly one of: a readable record (Paper set), a record
// deliberately left out (Skip says why, e.g. a rejected submission), or an
// unreadable one (Problem says why). Readers never stop for one bad record,
// so a large export with a few broken entries still imports.
type Record struct {
	// Line is the 1-based line where the record starts in its file, so an
	// error report points the user at it.
	Line  int
	Paper research.RawPaper
	// Type is one of the publication-type constants ("" when unknown).
	Type     string
	Keywords []string
	// Mark is Relevant, Irrelevant or "" (unscreened); Note is the
	// researcher's free-text note on this paper. Formats without fields for
	// them carry both in their note field (see NoteField).
	Mark string
	Note string
	// Names are the authors as the file split them (family, given, or a
	// corporate name kept whole), one per Paper.Authors entry after Finish;
	// nil when the file gave only display strings. Writers take the split
	// from here (NamesOf), since guessing it again from "Louis M. Wong Kee
	// Song" gives the family name "Song".
	Names []Name
	// Extra keeps source-specific fields (categories, track, ...) as a JSON
	// object, so nothing of the input is lost.
	Extra json.RawMessage
	// Warnings are what the reader read and could not keep (a year field
	// that holds no year): the record still imports, and the import
	// reports each warning with the record's line.
	Warnings []string
	Skip     string
	Problem  string
}

// Reader streams records from one file. Next returns io.EOF at the end;
// any other error means the file itself is unreadable (a broken gzip
// stream, an I/O error). A malformed record is not an error: it comes back
// as a Record with Problem and Line set.
type Reader interface {
	Next() (Record, error)
}

// Writer writes records in one format. Close writes what the format needs
// at the end (CSL-JSON's closing bracket) and flushes; it does not close
// the underlying io.Writer.
type Writer interface {
	Write(Record) error
	Close() error
}

// markPrefix introduces a researcher's mark in a format's note field:
// "Quarry mark: relevant" alone, or followed by "; " and the note. Readable
// in Zotero or EndNote, and parsed back by SplitNote.
const markPrefix = "Quarry mark: "

var markRE = regexp.MustCompile(`^Quarry mark: (relevant|irrelevant)(?:;\s*|\s*$)`)

// NoteField renders a mark and a note as one note-field value, for formats
// whose only place for them is a note (BibTeX note, RIS N1, CSL note).
func NoteField(mark, note string) string {
	note = strings.TrimSpace(note)
	if mark == "" {
		return note
	}
	if note == "" {
		return markPrefix + mark
	}
	return markPrefix + mark + "; " + note
}

// SplitNote is NoteField's inverse: it takes a mark off the front of a
// note-field value. A note without the prefix is all note.
func SplitNote(s string) (mark, note string) {
	s = strings.TrimSpace(s)
	m := markRE.FindStringSubmatch(s)
	if m == nil {
		return "", s
	}
	return m[1], strings.TrimSpace(s[len(m[0]):])
}

// Name is a person's name split the way citation formats store it, or a
// name that must not be split (an organisation: "National Nurses United"
// is not Mr United), kept whole in Literal.
type Name struct {
	Last    string `json:"family,omitempty"`
	First   string `json:"given,omitempty"`
	Suffix  string `json:"suffix,omitempty"`
	Literal string `json:"literal,omitempty"`
}

var suffixes = map[string]bool{"jr": true, "jr.": true, "sr": true, "sr.": true, "ii": true, "iii": true, "iv": true}

// ParseName reads a name written either way: "Last, First", "Last, Suffix,
// First" (BibTeX), "Last, First, Suffix" (RIS), or "First Last" where the
// last name is the final word plus any lower-case particles before it
// ("Ludwig van Beethoven" → van Beethoven, Ludwig).
func ParseName(s string) Name {
	s = strings.Join(strings.Fields(s), " ")
	if strings.Contains(s, ",") {
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		switch {
		case len(parts) == 2:
			return Name{Last: parts[0], First: parts[1]}
		case suffixes[strings.ToLower(parts[1])]:
			return Name{Last: parts[0], Suffix: parts[1], First: strings.Join(parts[2:], ", ")}
		default:
			return Name{Last: parts[0], First: parts[1], Suffix: strings.Join(parts[2:], ", ")}
		}
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		return Name{}
	}
	var suffix string
	if len(words) > 1 && suffixes[strings.ToLower(words[len(words)-1])] {
		suffix = words[len(words)-1]
		words = words[:len(words)-1]
	}
	i := len(words) - 1
	for i > 1 && isParticle(words[i-1]) {
		i--
	}
	return Name{Last: strings.Join(words[i:], " "), First: strings.Join(words[:i], " "), Suffix: suffix}
}

// isParticle tells whether a word joins the family name after it: any
// lower-case word ("van", "de la"), or a known particle however it is
// capitalised, since sources write "Hans P. A. Van Dongen" and he is Van
// Dongen, not Dongen.
func isParticle(w string) bool {
	if particles[strings.ToLower(w)] {
		return true
	}
	return w != "" && strings.ToLower(w) == w && strings.IndexFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0
}

// particles are the name particles of the European languages Quarry meets
// most, matched without regard to case.
var particles = map[string]bool{
	"van": true, "von": true, "vom": true, "zu": true, "de": true, "der": true, "den": true, "des": true,
	"del": true, "della": true, "dello": true, "dei": true, "degli": true, "da": true, "das": true, "do": true,
	"dos": true, "di": true, "du": true, "la": true, "le": true, "lo": true, "ten": true, "ter": true, "te": true,
	"op": true, "het": true, "'t": true, "y": true, "af": true, "av": true,
}

// Display renders the name as Quarry shows it ("First Last Suffix"), the
// form RawPaper.Authors holds. It has no commas: a comma would make the
// display form parse as an inverted one, and DisplayName must give the same
// answer however often it is applied (a malformed "A, B, C, D" included).
func (n Name) Display() string {
	if n.Literal != "" {
		return collapse(n.Literal)
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.Join(nonEmpty(n.First, n.Last, n.Suffix), " "), ",", " ")), " ")
}

// Inverted renders "Last, First" or "Last, First, Suffix" (RIS, CSV); a
// name with a suffix and no first name keeps the empty slot ("Last, ,
// Suffix") so the suffix is not read back as a first name.
func (n Name) Inverted() string {
	if n.Literal != "" {
		return noCommas(n.Literal)
	}
	last, first, suffix := noCommas(n.Last), noCommas(n.First), noCommas(n.Suffix)
	switch {
	case first == "" && suffix == "":
		return last
	case suffix == "":
		return last + ", " + first
	default:
		return last + ", " + first + ", " + suffix
	}
}

func noCommas(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, ",", " ")), " ")
}

func nonEmpty(xs ...string) []string {
	out := xs[:0:0]
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// NamesOf is the split of each of the record's authors: the file's own
// (Record.Names) when it has one per author, then the search source's
// (Paper.AuthorNames), GuessName's otherwise.
func NamesOf(r Record) []Name {
	if len(r.Names) == len(r.Paper.Authors) {
		return r.Names
	}
	out := make([]Name, len(r.Paper.Authors))
	if len(r.Paper.AuthorNames) == len(r.Paper.Authors) {
		for i, n := range r.Paper.AuthorNames {
			out[i] = Name{Last: n.Family, First: n.Given, Literal: n.Literal}
		}
		return out
	}
	for i, a := range r.Paper.Authors {
		out[i] = GuessName(a)
	}
	return out
}

// DisplayName converts a name in any form ParseName reads to the display
// form; readers apply it to every author so papers from a BibTeX file and
// from a search source look alike.
func DisplayName(s string) string { return ParseName(s).Display() }

// Finish tidies a record a reader has filled in and decides whether it is
// usable: whitespace collapsed, identifiers stripped of resolver prefixes,
// authors in display form, the mark and note split out of a note field if
// the reader put them together, and the paper's stable ID set. A record
// without a title, or with an impossible year, gets a Problem instead.
func Finish(r *Record) {
	if r.Problem != "" || r.Skip != "" {
		return
	}
	p := &r.Paper
	p.Title = collapse(p.Title)
	p.Venue = collapse(p.Venue)
	p.Abstract = strings.TrimSpace(p.Abstract)
	p.Volume = collapse(p.Volume)
	p.Issue = collapse(p.Issue)
	p.Pages = collapse(p.Pages)
	p.URL = strings.TrimSpace(p.URL)
	p.PMID = strings.TrimSpace(p.PMID)
	if d := strings.TrimSpace(p.DOI); d != "" {
		if n := research.NormalizeDOI(d); n != "" {
			p.DOI = trimResolver(d)
		} else {
			p.DOI = d
		}
	}
	p.ArxivID = strings.TrimSpace(p.ArxivID)
	if len(r.Names) > 0 {
		// The split the file gave wins; Authors are its display forms.
		names := r.Names[:0]
		p.Authors = p.Authors[:0]
		for _, n := range r.Names {
			if a := n.Display(); a != "" {
				names = append(names, n)
				p.Authors = append(p.Authors, a)
			}
		}
		r.Names = names
	} else {
		var authors []string
		for _, a := range p.Authors {
			// No name holds a ';': an entry that does is several names
			// a source ran together ("A B; C D"), which a format that
			// lists names with ';' (CSV) would split anyway.
			for _, part := range strings.Split(a, ";") {
				if part = DisplayName(part); part != "" {
					authors = append(authors, part)
				}
			}
		}
		p.Authors = authors
	}
	if len(p.Authors) == 0 {
		p.Authors, r.Names = nil, nil
	}
	kws := r.Keywords[:0]
	for _, k := range r.Keywords {
		if k = collapse(k); k != "" {
			kws = append(kws, k)
		}
	}
	r.Keywords = kws
	if len(r.Keywords) == 0 {
		r.Keywords = nil
	}
	r.Note = strings.TrimSpace(r.Note)
	if r.Mark == "" {
		r.Mark, r.Note = SplitNote(r.Note)
	}
	switch {
	case p.Title == "":
		r.Problem = "missing title"
	default:
		if p.Year < 0 || p.Year > 3000 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("year %d out of range", p.Year))
			p.Year = 0
		}
		p.ID = research.StableID(*p)
	}
}

// undated holds what reference managers and style guides write in a year
// field for a work that has no date yet, in lower case with brackets and
// a final period taken off; NotAYear lets such a value through as an
// unknown year rather than a mistake.
var undated = map[string]bool{
	"n.d": true, "nd": true, "no date": true, "undated": true, "s.d": true, "s.a": true,
	"in press": true, "forthcoming": true, "to appear": true, "submitted": true, "accepted": true,
	"in preparation": true, "in review": true, "under review": true, "unpublished": true,
}

// maxYearInMessage bounds how much of a bad year value a Problem quotes, so
// a field holding a whole paragraph does not become the import's error line
// (and a distinct skip reason per record).
const maxYearInMessage = 40

// NotAYear is the warning for a record whose year field holds value and
// yet yielded no year ("abc", "12345", true, EndNote's placeholder "Year",
// a BC date): "" when value is blank, zero (how some tools write
// "unknown"), or one of the words for a work not dated yet ("n.d.", "in
// press", "forthcoming", ...), all of which import as an unknown year.
// Readers call it when they read year 0 and put a non-empty answer in
// Record.Warnings: the record imports without its year (its title and DOI
// are worth more than a lost year), and the message, which quotes the
// value, tells the person importing what to fix in the file.
func NotAYear(value string) string {
	v := strings.TrimSpace(value)
	if v == "" || strings.Trim(v, "0") == "" {
		return ""
	}
	key := strings.TrimSuffix(collapse(strings.ToLower(strings.Trim(v, "()[]{} \t"))), ".")
	if undated[key] {
		return ""
	}
	if r := []rune(v); len(r) > maxYearInMessage {
		v = strings.TrimSpace(string(r[:maxYearInMessage])) + "…"
	}
	return fmt.Sprintf("year %q is not a year", v)
}

var resolverRE = regexp.MustCompile(`(?i)^(https?://(dx\.)?doi\.org/|doi:\s*)`)

func trimResolver(d string) string { return resolverRE.ReplaceAllString(d, "") }

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// Comparable returns the parts of r that every export format carries, so a
// round-trip test can compare what was written with what was read back:
// the line, the source and rank (where a search found it), related IDs and
// Extra are properties of one file or one run, not of the record.
func Comparable(r Record) Record {
	p := r.Paper
	p.Source, p.Rank, p.Sources, p.Related = "", 0, nil, nil
	return Record{Paper: p, Type: r.Type, Keywords: r.Keywords, Mark: r.Mark, Note: r.Note}
}
