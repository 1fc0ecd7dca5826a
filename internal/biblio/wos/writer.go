package wos

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"sort"
	"strings"

	"quarry/internal/biblio"
)

// Writer writes records as Web of Science plain text, with the file
// header before the first record and EF at Close.
type Writer struct {
	bw      *bufio.Writer
	err     error
	started bool
}

// NewWriter returns a Writer to w; call Close to flush.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
}

func (w *Writer) header() {
	if !w.started {
		w.started = true
		w.line("FN Clarivate Analytics Web of Science")
		w.line("VR 1.0")
	}
}

// Write writes one record.
func (w *Writer) Write(rec biblio.Record) error {
	w.header()
	p := rec.Paper
	extra := biblio.ExtraFields(rec)
	typ := rec.Type
	if typ == "" {
		typ = biblio.Misc
	}
	pt, dt := typeToWoS[typ][0], typeToWoS[typ][1]
	if ept, edt := cmp.Or(extra["wos_PT"], pt), cmp.Or(extra["wos_DT"], dt); typeOf(ept, edt) == typ {
		pt, dt = ept, edt // the file's own, unless the type was changed since
	}
	w.field("PT", pt)
	// AF lists every author in order, a group by its name as CA gives
	// it, so a group between two people keeps its place; the reader
	// knows the AF names that CA lists for groups.
	var people, groups []string
	for _, n := range biblio.NamesOf(rec) {
		if n.Literal != "" {
			groups = append(groups, n.Display())
			people = append(people, n.Display())
		} else {
			people = append(people, n.Inverted())
		}
	}
	w.list("AF", people)
	w.list("CA", groups)
	var eds []string
	for _, n := range biblio.SplitEditors(extra[biblio.ExtraEditor]) {
		eds = append(eds, n.Inverted())
	}
	w.list("BE", eds)
	w.field("TI", p.Title)
	w.field("SO", p.Venue)
	w.field("SE", extra[biblio.ExtraSeries])
	w.field("ET", extra[biblio.ExtraEdition])
	w.field("LA", extra[biblio.ExtraLanguage])
	w.field("DT", dt)
	w.field("DE", strings.Join(rec.Keywords, "; "))
	w.field("AB", p.Abstract)
	w.field("PU", extra[biblio.ExtraPublisher])
	w.field("PI", extra[biblio.ExtraAddress])
	w.field("SN", extra[biblio.ExtraISSN])
	w.field("BN", extra[biblio.ExtraISBN])
	if p.Year > 0 {
		w.field("PY", fmt.Sprintf("%04d", p.Year))
	}
	w.field("VL", p.Volume)
	w.field("IS", p.Issue)
	bp, ep, ok := strings.Cut(p.Pages, "-")
	if ok && bp != "" && ep != "" && !strings.ContainsAny(bp+ep, " \n-") {
		w.field("BP", bp)
		w.field("EP", ep)
	} else {
		w.field("BP", p.Pages)
	}
	w.field("DI", p.DOI)
	w.field("PM", p.PMID)
	w.field("UR", p.URL)
	w.field("XA", p.ArxivID)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if tag, ok := strings.CutPrefix(k, "wos_"); ok && len(tag) == 2 && tag != "PT" && tag != "DT" && tag != "ER" && tag != "EF" {
			if _, _, isTag := tagLine(tag); isTag {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if listTags[k[4:]] {
			w.list(k[4:], strings.Split(extra[k], "\n"))
		} else {
			w.field(k[4:], extra[k])
		}
	}
	w.field("N1", biblio.NoteField(rec.Mark, rec.Note))
	w.line("ER")
	w.line("")
	return w.err
}

// Close writes the end-of-file tag and flushes; it does not close the
// underlying writer.
func (w *Writer) Close() error {
	w.header()
	w.line("EF")
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// field writes a value on one line, its white space collapsed (Web of
// Science wraps long values; line breaks carry no meaning).
func (w *Writer) field(tag, value string) {
	if v := strings.Join(strings.Fields(value), " "); v != "" {
		w.line(tag + " " + v)
	}
}

// list writes one item a line, continuation lines indented by three spaces.
func (w *Writer) list(tag string, items []string) {
	first := true
	for _, it := range items {
		it = strings.Join(strings.Fields(it), " ")
		if it == "" {
			continue
		}
		if first {
			w.line(tag + " " + it)
			first = false
			continue
		}
		w.line("   " + it)
	}
}

func (w *Writer) line(s string) {
	if w.err != nil {
		return
	}
	if _, err := w.bw.WriteString(s + "\n"); err != nil {
		w.err = err
	}
}
