package progress

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"quarry/internal/report/svgw"
	"strconv"
)

// Layout, in SVG user units: the plot area inside margins for the title
// and the axes' labels.
const (
	width      = 640
	height     = 320
	left       = 60
	right      = 24
	top        = 44
	bottom     = 56
	plotW      = width - left - right
	plotH      = height - top - bottom
	maxTicks   = 6
	fontFamily = "system-ui, -apple-system, 'Segoe UI', sans-serif"
	ink        = "#111"
	grid       = "#ddd"
	curveInk   = "#1f5fa8"
	kneeInk    = "#b5520b"
)

// niceStep is the tick step for an axis up to n: 1, 2 or 5 times a power
// of ten, giving at most maxTicks steps.
func niceStep(n int) int {
	for base := 1; ; base *= 10 {
		for _, m := range []int{1, 2, 5} {
			if step := m * base; (n+step-1)/step <= maxTicks {
				return step
			}
		}
	}
}

// axisMax is n rounded up to a whole number of steps (at least one).
func axisMax(n int) (top, step int) {
	n = max(n, 1)
	step = niceStep(n)
	return (n + step - 1) / step * step, step
}

// svgWriter is the diagram's SVG document (svgw.Writer) with its shapes.
type svgWriter struct{ svgw.Writer }

func (w *svgWriter) text(x, y float64, s string, attrs ...string) {
	w.Raw("<text")
	w.Attr("x", num(x))
	w.Attr("y", num(y))
	for i := 0; i+1 < len(attrs); i += 2 {
		w.Attr(attrs[i], attrs[i+1])
	}
	w.Raw(">")
	w.Esc(s)
	w.Raw("</text>\n")
}

// num writes a coordinate to a hundredth of a unit, which no screen shows.
func num(x float64) string { return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) }

// WriteSVG draws the plot as a standalone SVG document. caption names the
// run (its question); it is escaped like every other text.
func (p Plot) WriteSVG(out io.Writer, caption string) error {
	last := p.Last()
	xMax, xStep := axisMax(last.Screened)
	yMax, yStep := axisMax(last.Relevant)
	px := func(x int) float64 { return float64(left) + float64(plotW)*float64(x)/float64(xMax) }
	py := func(y int) float64 { return float64(top+plotH) - float64(plotH)*float64(y)/float64(yMax) }

	var w svgWriter
	w.Open(width, height, "progress-title progress-desc", fontFamily, 12)
	w.Attr("data-screened", strconv.Itoa(last.Screened))
	w.Attr("data-relevant", strconv.Itoa(last.Relevant))
	w.Attr("data-points", p.Points())
	w.Raw(">\n<title id=\"progress-title\">")
	w.Esc("Screening progress: " + caption)
	w.Raw("</title>\n<desc id=\"progress-desc\">")
	w.Esc(p.Description())
	w.Raw("</desc>\n")
	w.Raw(`<rect width="100%" height="100%" fill="#fff"/>` + "\n")
	w.text(left, 24, "Relevant found against papers screened", "font-weight", "600", "font-size", "14", "fill", ink)

	// Grid and ticks.
	for x := 0; x <= xMax; x += xStep {
		w.Raw(fmt.Sprintf(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s"/>`+"\n", num(px(x)), top, num(px(x)), top+plotH, grid))
		w.text(px(x), float64(top+plotH+16), strconv.Itoa(x), "text-anchor", "middle", "fill", ink)
	}
	for y := 0; y <= yMax; y += yStep {
		w.Raw(fmt.Sprintf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s"/>`+"\n", left, num(py(y)), left+plotW, num(py(y)), grid))
		w.text(float64(left-8), py(y)+4, strconv.Itoa(y), "text-anchor", "end", "fill", ink)
	}
	w.Raw(fmt.Sprintf(`<path d="M%d %dV%dH%d" fill="none" stroke="%s" stroke-width="1.2"/>`+"\n", left, top, top+plotH, left+plotW, ink))
	w.text(float64(left+plotW/2), float64(height-12), "papers screened (in the order they were first marked)", "text-anchor", "middle", "fill", ink)
	cy := float64(top + plotH/2)
	w.text(16, cy, "relevant found", "text-anchor", "middle", "fill", ink, "transform", fmt.Sprintf("rotate(-90 16 %s)", num(cy)))

	if last.Screened == 0 {
		w.text(float64(left+plotW/2), cy, "No paper screened yet", "text-anchor", "middle", "fill", ink, "data-empty", "true")
	} else {
		// One step per screened paper: across to it, then up if relevant.
		var d bytes.Buffer
		fmt.Fprintf(&d, "M%s %s", num(px(0)), num(py(0)))
		prev := 0
		for _, pt := range p.Curve {
			fmt.Fprintf(&d, "H%s", num(px(pt.Screened)))
			if pt.Relevant != prev {
				fmt.Fprintf(&d, "V%s", num(py(pt.Relevant)))
				prev = pt.Relevant
			}
		}
		w.Raw("<path")
		w.Attr("d", d.String())
		w.Raw(` fill="none" stroke="` + curveInk + `" stroke-width="2" stroke-linejoin="round" data-curve="gain"/>` + "\n")
		w.Raw(fmt.Sprintf(`<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", num(px(last.Screened)), num(py(last.Relevant)), curveInk))
		label := fmt.Sprintf("%d screened · %d relevant", last.Screened, last.Relevant)
		w.text(float64(left+plotW), 24, label, "text-anchor", "end", "fill", ink, "data-label", "totals")
	}
	if k := p.Knee; k.Found && k.Applies {
		x, y := px(k.At.Screened), py(k.At.Relevant)
		w.Raw(fmt.Sprintf(`<circle cx="%s" cy="%s" r="5" fill="none" stroke="%s" stroke-width="2" data-knee="%d:%d"/>`+"\n",
			num(x), num(y), kneeInk, k.At.Screened, k.At.Relevant))
		lx, ly, anchor := x+8, y+16, "start"
		if ly > float64(top+plotH-4) {
			ly = y - 10
		}
		if lx > float64(left+plotW-90) {
			lx, anchor = x-8, "end"
		}
		w.text(lx, ly, fmt.Sprintf("knee (%d, %d)", k.At.Screened, k.At.Relevant), "fill", kneeInk, "text-anchor", anchor)
	}
	w.Raw("</svg>\n")
	_, err := w.WriteTo(out)
	return err
}
