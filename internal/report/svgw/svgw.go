// Package svgw writes SVG documents by hand for the report's diagrams
// (PRISMA flow, screening progress): a few shapes and text, where a
// drawing library would add weight for nothing. Every piece of text and
// every attribute value is escaped here, in one place.
package svgw

import (
	"bytes"
	"encoding/xml"
	"io"
)

// Writer accumulates one SVG document.
type Writer struct{ b bytes.Buffer }

// Raw writes markup as is: only the diagram's own literals, never data.
func (w *Writer) Raw(s string) { w.b.WriteString(s) }

// Esc writes text, escaped.
func (w *Writer) Esc(s string) {
	_ = xml.EscapeText(&w.b, []byte(s)) // writes to a bytes.Buffer: cannot fail
}

// Attr writes ` name="value"`, the value escaped.
func (w *Writer) Attr(name, value string) {
	w.Raw(" " + name + `="`)
	w.Esc(value)
	w.Raw(`"`)
}

// WriteTo writes the document to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	n, err := out.Write(w.b.Bytes())
	return int64(n), err
}
