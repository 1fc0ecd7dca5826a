package prisma

import (
	"fmt"
	"io"
	"quarry/internal/report/svgw"
	"strconv"
	"unicode/utf8"
)

// Box names, the data-box attribute of each box's group in the SVG, so a
// test (or a script) finds a box without reading its layout.
const (
	BoxIdentified  = "identified"
	BoxRemoved     = "removed"
	BoxPresented   = "presented"
	BoxNotScreened = "not-screened"
	BoxScreened    = "screened"
	BoxExcluded    = "excluded"
	BoxIncluded    = "included"
)

// Layout, in SVG user units: a phase band on the left, the main column of
// boxes down the middle, the side boxes (what left the flow) on the right.
const (
	width      = 820
	bandX      = 8
	bandW      = 26
	mainX      = 50
	mainW      = 370
	sideX      = 460
	sideW      = 350
	lineH      = 17
	padY       = 10
	rowGap     = 28
	titleH     = 34
	maxLabel   = 44 // runes of a source or reason name before "…"
	fontFamily = "system-ui, -apple-system, 'Segoe UI', sans-serif"
)

// minRowH is each row's least height, so the phase bands' labels fit:
// Identification (row 0), Screening (rows 1 and 2 together), Included.
var minRowH = [4]int{112, 0, 0, 72}

// line is one line of a box: its text and, for a line that states a
// number, the label and number it states (data-label, data-n).
type line struct {
	text  string
	label string
	n     int
	bold  bool
	count bool
}

type box struct {
	name  string
	n     int
	lines []line
}

func (b box) height() int { return 2*padY + lineH*len(b.lines) }

func head(text string, n int) line {
	return line{text: fmt.Sprintf("%s (n = %d)", text, n), bold: true}
}

func item(label string, n int) line {
	l := truncate(label)
	return line{text: fmt.Sprintf("%s (n = %d)", l, n), label: label, n: n, count: true}
}

// truncate shortens a name from the run's data (a file name, a reason) so
// it stays inside its box.
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxLabel {
		return s
	}
	r := []rune(s)
	return string(r[:maxLabel-1]) + "…"
}

// boxes lays the flow out as its seven boxes.
func (f Flow) boxes() (identified, removed, presented, notScreened, screened, excluded, included box) {
	identified = box{name: BoxIdentified, n: f.Identified, lines: []line{head("Records identified", f.Identified)}}
	if len(f.Sources) > 0 {
		identified.lines = append(identified.lines, line{text: "Databases and sources searched:"})
		for _, c := range f.Sources {
			identified.lines = append(identified.lines, item(c.Label, c.N))
		}
	}
	if len(f.Files) > 0 {
		identified.lines = append(identified.lines, line{text: "Files attached (exports of other databases):"})
		for _, c := range f.Files {
			identified.lines = append(identified.lines, item(c.Label, c.N))
		}
	}
	removedN := f.Duplicates + f.Repeats + f.NoTitle
	removed = box{name: BoxRemoved, n: removedN, lines: []line{
		head("Records removed before screening", removedN),
		item("Duplicate records removed", f.Duplicates),
		item("Found again in a later iteration", f.Repeats),
		item("Records without a title", f.NoTitle),
	}}
	presented = box{name: BoxPresented, n: f.Presented, lines: []line{head("Records presented for screening", f.Presented)}}
	notScreened = box{name: BoxNotScreened, n: f.NotScreened, lines: []line{head("Records not screened (never marked)", f.NotScreened)}}
	screened = box{name: BoxScreened, n: f.Screened, lines: []line{head("Records screened (marked)", f.Screened)}}
	excluded = box{name: BoxExcluded, n: f.Excluded, lines: []line{head("Records excluded (marked irrelevant)", f.Excluded)}}
	for _, c := range f.Reasons {
		excluded.lines = append(excluded.lines, item(c.Label, c.N))
	}
	included = box{name: BoxIncluded, n: f.Included, lines: []line{
		head("Records included (marked relevant)", f.Included),
		{text: "the run's final collection"},
	}}
	return
}

// svgWriter is the diagram's SVG document (svgw.Writer) with its shapes.
type svgWriter struct{ svgw.Writer }

func (w *svgWriter) text(x, y int, s string, attrs ...string) {
	w.Raw("<text")
	w.Attr("x", strconv.Itoa(x))
	w.Attr("y", strconv.Itoa(y))
	for i := 0; i+1 < len(attrs); i += 2 {
		w.Attr(attrs[i], attrs[i+1])
	}
	w.Raw(">")
	w.Esc(s)
	w.Raw("</text>\n")
}

func (w *svgWriter) box(x, y, wd int, b box) {
	w.Raw("<g")
	w.Attr("data-box", b.name)
	w.Attr("data-n", strconv.Itoa(b.n))
	w.Raw(">\n")
	w.Raw(fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="%d" rx="4" class="box"/>`+"\n", x, y, wd, b.height()))
	for i, l := range b.lines {
		var attrs []string
		if l.bold {
			attrs = append(attrs, "font-weight", "600")
		}
		if l.count {
			attrs = append(attrs, "data-label", l.label, "data-n", strconv.Itoa(l.n))
		}
		indent := 10
		if l.count {
			indent = 22
		}
		w.text(x+indent, y+padY+lineH*i+13, l.text, attrs...)
	}
	w.Raw("</g>\n")
}

func (w *svgWriter) arrow(x1, y1, x2, y2 int) {
	w.Raw(fmt.Sprintf(`<line x1="%d" y1="%d" x2="%d" y2="%d" class="arrow" marker-end="url(#prisma-arrow)"/>`+"\n", x1, y1, x2, y2))
}

// band is a phase label down the left edge, spanning y to y+h.
func (w *svgWriter) band(y, h int, label string) {
	w.Raw(fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="%d" rx="4" class="band"/>`+"\n", bandX, y, bandW, h))
	cx, cy := bandX+bandW/2, y+h/2
	w.Raw(fmt.Sprintf(`<text x="%d" y="%d" text-anchor="middle" dominant-baseline="middle" font-weight="600" transform="rotate(-90 %d %d)">`, cx, cy, cx, cy))
	w.Esc(label)
	w.Raw("</text>\n")
}

// WriteSVG draws the flow as a standalone SVG document. caption names the
// run (its question); it is escaped like every other text.
func (f Flow) WriteSVG(out io.Writer, caption string) error {
	identified, removed, presented, notScreened, screened, excluded, included := f.boxes()
	type row struct{ main, side *box }
	rows := []row{{&identified, &removed}, {&presented, &notScreened}, {&screened, &excluded}, {&included, nil}}
	ys := make([]int, len(rows))
	hs := make([]int, len(rows))
	y := titleH
	for i, r := range rows {
		ys[i] = y
		hs[i] = r.main.height()
		if r.side != nil {
			hs[i] = max(hs[i], r.side.height())
		}
		hs[i] = max(hs[i], minRowH[i]) // room for a phase band's label
		y += hs[i] + rowGap
	}
	height := y - rowGap + 30

	var w svgWriter
	w.Open(width, height, "prisma-title", fontFamily, 13)
	w.Raw(">\n<title id=\"prisma-title\">")
	w.Esc("PRISMA 2020 flow diagram: " + caption)
	w.Raw("</title>\n")
	w.Raw(`<defs><marker id="prisma-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#444"/></marker>` +
		`<style>.box{fill:#fff;stroke:#444;stroke-width:1.2}.band{fill:#dbe7f3;stroke:#7a9cc0}.arrow{stroke:#444;stroke-width:1.4}text{fill:#111}</style></defs>` + "\n")
	w.Raw(`<rect width="100%" height="100%" fill="#fff"/>` + "\n")
	w.text(mainX, 22, "PRISMA 2020 flow of this run ("+plural(f.Iterations, "reviewed iteration")+")", "font-weight", "600", "font-size", "15")

	w.band(ys[0], hs[0], "Identification")
	w.band(ys[1], ys[2]+hs[2]-ys[1], "Screening")
	w.band(ys[3], hs[3], "Included")
	for i, r := range rows {
		w.box(mainX, ys[i], mainW, *r.main)
		if r.side != nil {
			w.box(sideX, ys[i], sideW, *r.side)
			mid := ys[i] + min(r.main.height(), r.side.height())/2
			w.arrow(mainX+mainW, mid, sideX, mid)
		}
		if i+1 < len(rows) {
			w.arrow(mainX+mainW/2, ys[i]+r.main.height(), mainX+mainW/2, ys[i+1])
		}
	}
	w.text(mainX, height-10, "Counted from the run's audit trail; records are per search, before deduplication across iterations.", "font-size", "11")
	w.Raw("</svg>\n")
	_, err := w.WriteTo(out)
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
