// Package progress draws a run's screening progress: relevant papers
// found against papers screened, one step per screened paper across all
// iterations (research.GainCurve), as plain SVG written here, as the
// PRISMA diagram is (internal/report/prisma): a staircase, two axes and a
// knee mark need no drawing library, and writing it here keeps all of its
// escaping in one place. The SVG uses presentation attributes only (no
// <style>), so it is the same document whether served on its own or
// placed in a page whose policy forbids inline styles, and it carries its
// own text alternative: a <title> and a <desc> with the numbers.
package progress

import (
	"fmt"
	"strconv"
	"strings"

	"quarry/internal/research"
)

// Plot is what the progress plot shows.
type Plot struct {
	// Curve is the run's gain curve (research.GainCurve).
	Curve []research.GainPoint
	// Knee is the knee method's reading of it (research.KneeOf); a knee
	// found is marked on the curve once the method applies.
	Knee research.Knee
}

// Of builds the plot of a run from its mark events, oldest first.
func Of(events []research.Mark) Plot {
	c := research.GainCurve(events)
	return Plot{Curve: c, Knee: research.KneeOf(c)}
}

// Last is the curve's last point: papers screened and relevant now (zero
// for none).
func (p Plot) Last() research.GainPoint {
	if len(p.Curve) == 0 {
		return research.GainPoint{}
	}
	return p.Curve[len(p.Curve)-1]
}

// maxListed is how many points the text alternative lists one by one;
// a longer curve is described at its relevant papers' steps, sampled.
const maxListed = 25

// Summary is the plot's text alternative in one sentence: the totals.
func (p Plot) Summary() string {
	last := p.Last()
	if last.Screened == 0 {
		return "Relevant papers found against papers screened: no paper screened yet."
	}
	s := fmt.Sprintf("Relevant papers found against papers screened: %s screened, %d relevant.", count(last.Screened, "paper"), last.Relevant)
	if p.Knee.Found && p.Knee.Applies { // a knee of a few papers says nothing
		s += fmt.Sprintf(" The curve bends at %d screened (%d relevant).", p.Knee.At.Screened, p.Knee.At.Relevant)
	}
	return s
}

// Description lists the curve's numbers for a reader who cannot see it:
// after how many screened papers each relevant one was found (every
// step where the count rose), sampled evenly when there are many, and
// the last point.
func (p Plot) Description() string {
	var rises []research.GainPoint
	prev := 0
	for _, pt := range p.Curve {
		if pt.Relevant > prev {
			rises = append(rises, pt)
		}
		prev = pt.Relevant
	}
	if len(rises) == 0 {
		return p.Summary()
	}
	if len(rises) > maxListed {
		sampled := make([]research.GainPoint, 0, maxListed)
		for i := range maxListed {
			sampled = append(sampled, rises[i*(len(rises)-1)/(maxListed-1)])
		}
		rises = sampled
	}
	parts := make([]string, len(rises))
	for i, pt := range rises {
		parts[i] = fmt.Sprintf("%d relevant after %d screened", pt.Relevant, pt.Screened)
	}
	return p.Summary() + " Steps: " + strings.Join(parts, "; ") + "."
}

// Points writes the curve as "screened:relevant" pairs, space-separated:
// the data-points attribute, so a test (or a script) reads the numbers
// without reading the drawing.
func (p Plot) Points() string {
	parts := make([]string, len(p.Curve))
	for i, pt := range p.Curve {
		parts[i] = strconv.Itoa(pt.Screened) + ":" + strconv.Itoa(pt.Relevant)
	}
	return strings.Join(parts, " ")
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
