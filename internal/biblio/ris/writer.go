package ris

import (
	"bufio"
	"fmt"
	"io"
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
	ty := typeToRIS[rec.Type]
	if ty == "" {
		ty = "GEN"
	}
	w.field("TY", ty)
	w.field("TI", p.Title)
	for _, a := range p.Authors {
		w.field("AU", biblio.ParseName(a).Inverted())
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
			w.field("DB", "PubMed")
		} else {
			w.field("AN", "PMID: "+p.PMID)
		}
	}
	for _, k := range rec.Keywords {
		w.field("KW", k)
	}
	w.field("N1", biblio.NoteField(rec.Mark, rec.Note))
	w.line("ER  - ")
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
