// Package svgw writes SVG documents by hand for the report's diagrams
// (PRISMA flow, screening progress): a few shapes and text, where a
// drawing library would add weight for nothing. Every piece of text and
// every attribute value is escaped here, in one place.
package svgw

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
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

// Open starts the document's root <svg> element, sized width × height
// and labelled by the ids in labelledBy (its title and description, so a
// screen reader names the image), and leaves the tag open for the
// diagram's own attributes; the caller writes the closing ">".
func (w *Writer) Open(width, height int, labelledBy, fontFamily string, fontSize int) {
	w.Raw(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1"`)
	w.Attr("width", strconv.Itoa(width))
	w.Attr("height", strconv.Itoa(height))
	w.Attr("viewBox", fmt.Sprintf("0 0 %d %d", width, height))
	w.Attr("role", "img")
	w.Attr("aria-labelledby", labelledBy)
	w.Attr("font-family", fontFamily)
	w.Attr("font-size", strconv.Itoa(fontSize))
}

// WriteTo writes the document to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	n, err := out.Write(w.b.Bytes())
	return int64(n), err
}
