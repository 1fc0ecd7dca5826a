package medline

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"quarry/internal/biblio"
)

// width is the longest line the writer makes before wrapping at a space,
// close to what PubMed writes.
const width = 82

// Writer writes records in MEDLINE format with LF line endings, as PubMed
// does, one blank line after each record.
type Writer struct {
	bw  *bufio.Writer
	err error
}

// NewWriter returns a Writer to w; call Close to flush.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
}

// Write writes one record in PubMed's tag order.
func (w *Writer) Write(rec biblio.Record) error {
	p := rec.Paper
	w.field("PMID", p.PMID)
	w.field("VI", p.Volume)
	w.field("IP", p.Issue)
	if p.Year > 0 {
		w.field("DP", fmt.Sprintf("%04d", p.Year))
	}
	w.field("TI", p.Title)
	w.field("PG", p.Pages)
	if strings.TrimSpace(p.DOI) != "" {
		w.field("LID", p.DOI+" [doi]")
	}
	w.field("AB", p.Abstract)
	for i, n := range biblio.NamesOf(rec) {
		if n.Literal != "" || len(rec.Names) != len(p.Authors) && isCollective(p.Authors[i]) {
			w.field("CN", n.Display())
			continue
		}
		w.field("FAU", n.Inverted())
		w.field("AU", shortName(n))
	}
	extra := biblio.ExtraFields(rec)
	for _, n := range biblio.SplitEditors(extra[biblio.ExtraEditor]) {
		w.field("FED", n.Inverted())
		w.field("ED", shortName(n))
	}
	w.field("LA", extra[biblio.ExtraLanguage])
	w.field("IS", extra[biblio.ExtraISSN])
	w.field("ISBN", extra[biblio.ExtraISBN])
	w.field("PB", extra[biblio.ExtraPublisher])
	w.field("PL", extra[biblio.ExtraAddress])
	w.field("EN", extra[biblio.ExtraEdition])
	w.field("GN", biblio.NoteField(rec.Mark, rec.Note))
	w.field("PT", typeToPT[rec.Type])
	w.field("JT", p.Venue)
	for _, k := range rec.Keywords {
		w.field("OT", k)
	}
	if strings.TrimSpace(p.DOI) != "" {
		w.field("AID", p.DOI+" [doi]")
	}
	if strings.TrimSpace(p.ArxivID) != "" {
		w.field("AID", p.ArxivID+" [arxiv]")
	}
	if strings.TrimSpace(p.URL) != "" {
		w.field("AID", p.URL+" [url]")
	}
	w.line("")
	return w.err
}

// Close flushes buffered output; it does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// field writes "TAG - value", wrapping the value at spaces onto
// continuation lines indented by six spaces. Whitespace in the value is
// collapsed: MEDLINE cannot carry line breaks.
func (w *Writer) field(tag, value string) {
	words := strings.Fields(value)
	if len(words) == 0 {
		return
	}
	line := fmt.Sprintf("%-4s- %s", tag, words[0])
	for _, word := range words[1:] {
		if len(line)+1+len(word) > width {
			w.line(line)
			line = "      " + word
			continue
		}
		line += " " + word
	}
	w.line(line)
}

func (w *Writer) line(s string) {
	if w.err != nil {
		return
	}
	if _, err := w.bw.WriteString(s + "\n"); err != nil {
		w.err = err
	}
}

// shortName renders PubMed's AU form, "Smith JA".
func shortName(n biblio.Name) string {
	var ini strings.Builder
	for _, part := range strings.FieldsFunc(n.First, func(r rune) bool { return r == ' ' || r == '-' || r == '.' }) {
		for _, r := range part {
			ini.WriteRune(r)
			break
		}
	}
	return strings.Join(strings.Fields(strings.Join([]string{n.Last, strings.ToUpper(ini.String()), n.Suffix}, " ")), " ")
}

// collectiveWords mark a group author ("PRISMA Working Group", "World
// Health Organization"), which PubMed lists under CN, not FAU.
var collectiveWords = map[string]bool{
	"Group": true, "Consortium": true, "Collaboration": true, "Collaborative": true, "Committee": true,
	"Organization": true, "Organisation": true, "Society": true, "Association": true, "Network": true,
	"Investigators": true, "Team": true, "Council": true, "Institute": true, "Trialists": true, "Force": true,
}

func isCollective(name string) bool {
	words := strings.Fields(name)
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if collectiveWords[w] {
			return true
		}
	}
	return false
}
