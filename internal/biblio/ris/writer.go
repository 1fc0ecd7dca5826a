package ris

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"quarry/internal/biblio"
)

// Writer writes records as RIS with CRLF line endings (see the package
// documentation for why, and for how multi-line values are written).
type Writer struct {
	bw  *bufio.Writer
	err error
}

// NewWriter returns a Writer to w; call Close to flush.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
}

// Write writes one record. Skipped and unreadable records are written too
// if they have fields; callers filter them.
func (w *Writer) Write(rec biblio.Record) error {
	p := rec.Paper
	extra := biblio.ExtraFields(rec)
	ty := typeToRIS[rec.Type]
	if ty == "" {
		ty = "GEN"
	}
	if orig := extra["ris_TY"]; orig != "" && sameType(orig, rec.Type) {
		ty = orig
	}
	w.field("TY", ty)
	w.field("TI", p.Title)
	for _, n := range biblio.NamesOf(rec) {
		w.field("AU", risInverted(n))
	}
	editorTag := "ED"
	if rec.Type == biblio.Chapter || rec.Type == biblio.Conference {
		editorTag = "A2"
	}
	for _, n := range biblio.SplitEditors(extra[biblio.ExtraEditor]) {
		w.field(editorTag, risInverted(n))
	}
	if p.Year > 0 {
		w.field("PY", fmt.Sprintf("%04d", p.Year))
	}
	w.field("T2", p.Venue)
	w.field("VL", p.Volume)
	w.field("IS", p.Issue)
	sp, ep := splitPages(p.Pages)
	w.field("SP", sp)
	w.field("EP", ep)
	w.field("AB", p.Abstract)
	w.field("DO", p.DOI)
	w.field("UR", p.URL)
	if p.ArxivID != "" {
		w.field("AN", "arXiv:"+p.ArxivID)
	}
	if p.PMID != "" {
		if digits.MatchString(p.PMID) {
			w.field("AN", p.PMID)
			db := "PubMed"
			if v := extra["ris_DB"]; pubmed.MatchString(v) {
				db = v // the file's own name for it ("NLM", "MEDLINE")
			}
			w.field("DB", db)
		} else {
			w.field("AN", "PMID: "+p.PMID)
		}
	}
	for _, k := range rec.Keywords {
		w.field("KW", k)
	}
	w.field("PB", extra[biblio.ExtraPublisher])
	w.field("CY", extra[biblio.ExtraAddress])
	w.field("ET", extra[biblio.ExtraEdition])
	w.field("LA", extra[biblio.ExtraLanguage])
	w.field("T3", extra[biblio.ExtraSeries])
	w.field("SN", extra[biblio.ExtraISBN])
	w.field("SN", extra[biblio.ExtraISSN])
	if p.Year > 0 {
		delete(extra, "ris_PY") // an unreadable date the year now replaces
	}
	w.extraTags(extra, p.PMID != "" && digits.MatchString(p.PMID))
	w.field("N1", biblio.NoteField(rec.Mark, rec.Note))
	w.line("ER  - ")
	w.line("")
	return w.err
}

// extraTags writes back the tags a RIS reader kept in Extra ("ris_M3"),
// sorted.
func (w *Writer) extraTags(extra map[string]string, wroteDB bool) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		tag, ok := strings.CutPrefix(k, "ris_")
		if !ok || len(tag) != 2 || tag == "TY" || tag == "ER" || (tag == "DB" && wroteDB) {
			continue
		}
		if _, _, isTag := isTagLine(tag + "  - "); !isTag {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "ris_UR" {
			// One URL a tag, as the reader reads them.
			for _, v := range strings.Split(extra[k], "\n") {
				w.field("UR", v)
			}
			continue
		}
		// Repeated tags were kept a line apart; written as one tag with
		// continuation lines, they read back as the same text.
		w.field(k[4:], extra[k])
	}
}

// risInverted is the AU form of a name: "Last, First[, Suffix]", an
// organisation as it is, and a person known by one name with a trailing
// comma ("Plato,"), which the reader would otherwise take for an
// organisation, or for "Smith J." when it ends like initials.
func risInverted(n biblio.Name) string {
	v := n.Inverted()
	if n.Literal == "" && v != "" && !strings.Contains(v, ",") {
		v += ","
	}
	return v
}

// sameType tells whether a TY code read from a file still fits the
// record's type, so the writer can give the file's code back (EJOUR, not
// JOUR) unless the type was changed since.
func sameType(ty, typ string) bool {
	if t, ok := risToType[ty]; ok {
		return t == typ
	}
	return typ == biblio.Misc
}

// Close flushes buffered output; it does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// field writes a tag with its value, if any. Lines after the first are
// continuation lines; one that the reader could take for a tag line, or
// that starts with a space, gets one leading space, which the reader
// strips from every continuation line.
func (w *Writer) field(tag, value string) {
	if strings.TrimSpace(value) == "" {
		return
	}
	lines := strings.Split(value, "\n")
	w.line(tag + "  - " + lines[0])
	for _, l := range lines[1:] {
		if _, _, isTag := isTagLine(l); isTag || strings.HasPrefix(l, " ") {
			l = " " + l
		}
		w.line(l)
	}
}

func (w *Writer) line(s string) {
	if w.err != nil {
		return
	}
	if _, err := w.bw.WriteString(s + "\r\n"); err != nil {
		w.err = err
	}
}

// splitPages splits "123-130" into SP and EP. Anything the reader would
// not join back to the same text ("12 - 15", "e1234", "-5") goes whole
// into SP.
func splitPages(pages string) (sp, ep string) {
	i := strings.IndexByte(pages, '-')
	if i <= 0 || i == len(pages)-1 {
		return pages, ""
	}
	sp, ep = pages[:i], pages[i+1:]
	if sp != strings.TrimSpace(sp) || ep != strings.TrimSpace(ep) || strings.Contains(sp+ep, "\n") {
		return pages, ""
	}
	return sp, ep
}
