package research

import (
	"fmt"
	"strconv"
)

// Stopping rules say when screening more papers is unlikely to find many
// more relevant ones. They only ever suggest: the review page shows each
// as a hint naming its rule, and the researcher decides (a run never
// stops on its own).

// The knee method's parameters, from Cormack & Grossman, "Engineering
// quality and reliability in technology-assisted review", SIGIR 2016,
// pp. 75–84 (doi:10.1145/2911451.2911510).
const (
	// KneeMinScreened is the least number of screened papers before the
	// knee method may suggest stopping: 150.
	KneeMinScreened = 150
	// KneeRatio is the slope ratio the method asks for once at least
	// kneeRelevantCap relevant papers are found: 6.
	KneeRatio = 6
	// kneeRelevantCap: below it the required ratio is raised to
	// KneeRatio + kneeRelevantCap − relevant (156 − min(relevant, 150)),
	// the method's guard against stopping early on a topic with few
	// relevant papers, where one more found changes the slope a lot.
	kneeRelevantCap = 150
)

// DefaultStopWindow is the default k of the "no relevant paper in the last
// k screened" rule: 50, two review pages at the default 25 papers an
// iteration, and the smallest run of consecutive irrelevant records that
// ASReview's guidance on data-driven stopping lists (50, 100, 250, 500
// depending on the size of the set); a smaller k stops on a chance gap
// between two relevant papers.
const DefaultStopWindow = 50

// Rule names, as the hint shows them.
const (
	RuleKnee = "knee method, Cormack & Grossman 2016"
)

// RuleWindow names the "no relevant paper in the last k screened" rule.
func RuleWindow(k int) string {
	return fmt.Sprintf("no relevant paper in the last %d screened", k)
}

// Suggestion is what one stopping rule says about a run's gain curve.
type Suggestion struct {
	// Rule names the rule, e.g. RuleKnee.
	Rule string `json:"rule"`
	// Applies is false while the run is below the rule's scale (too few
	// papers screened for it to mean anything).
	Applies bool `json:"applies"`
	// Stop is true when the rule suggests stopping.
	Stop bool `json:"stop"`
	// Advice says what the rule found, in a sentence.
	Advice string `json:"advice"`
}

// Knee is the knee method's reading of a gain curve.
type Knee struct {
	// Screened and Relevant are the curve's last point (s and relret(s)).
	Screened, Relevant int
	// Found reports whether the curve has a knee; At is it.
	Found bool
	At    GainPoint
	// Ratio is the slope ratio at the knee and Threshold the least ratio
	// that suggests stopping at this many relevant papers.
	Ratio, Threshold float64
	// Applies and Stop are as in Suggestion.
	Applies, Stop bool
}

// KneeOf applies the knee method of Cormack & Grossman (SIGIR 2016) to a
// gain curve (GainCurve). The knee is the point i of the curve farthest
// above the straight line from the origin to its last point s: the
// difference curve of Satopää et al. 2011 ("Kneedle"), whose knee
// detection the paper uses, on the curve scaled to the unit square,
// taking its highest point rather than Kneedle's local maxima with a
// sensitivity threshold (a gain curve rises and then flattens, so the
// two agree on the knee that matters). The slope ratio is
//
//	ρ = (relret(i) / i) / ((1 + relret(s) − relret(i)) / (s − i)),
//
// the rate of relevant papers up to the knee over the rate since, with one
// relevant paper added after the knee so a run of none is not a division
// by zero. The method suggests stopping when ρ ≥ 156 − min(relret(s), 150)
// (that is ρ ≥ 6 once 150 relevant papers are found; higher before, so a
// topic with few relevant papers is not stopped early) and at least 150
// papers are screened; below 150 it does not apply.
func KneeOf(curve []GainPoint) Knee {
	var k Knee
	if len(curve) > 0 {
		last := curve[len(curve)-1]
		k.Screened, k.Relevant = last.Screened, last.Relevant
	}
	k.Threshold = float64(KneeRatio + kneeRelevantCap - min(k.Relevant, kneeRelevantCap))
	k.Applies = k.Screened >= KneeMinScreened
	if k.Relevant == 0 {
		return k // a flat curve has no knee
	}
	s, r := float64(k.Screened), float64(k.Relevant)
	best := 0.0
	for _, p := range curve[:len(curve)-1] {
		if d := float64(p.Relevant)/r - float64(p.Screened)/s; d > best {
			best, k.At, k.Found = d, p, true
		}
	}
	if !k.Found {
		return k
	}
	before := float64(k.At.Relevant) / float64(k.At.Screened)
	after := float64(1+k.Relevant-k.At.Relevant) / float64(k.Screened-k.At.Screened)
	k.Ratio = before / after
	k.Stop = k.Applies && k.Ratio >= k.Threshold
	return k
}

// Suggestion is the knee method's hint.
func (k Knee) Suggestion() Suggestion {
	s := Suggestion{Rule: RuleKnee, Applies: k.Applies, Stop: k.Stop}
	switch {
	case !k.Applies:
		s.Advice = fmt.Sprintf("does not apply yet: the method needs at least %d screened papers, and %s screened so far.",
			KneeMinScreened, papers(k.Screened, "is", "are"))
	case !k.Found:
		s.Advice = fmt.Sprintf("keep screening: %d screened, %d relevant, and the curve has no knee yet.", k.Screened, k.Relevant)
	case k.Stop:
		s.Advice = fmt.Sprintf("you could stop. The curve bends at %d screened (%d relevant); since then relevant papers come %s times more slowly, at least the method's %d (156 − min(relevant, 150)). The decision is yours.",
			k.At.Screened, k.At.Relevant, ratio(k.Ratio), int(k.Threshold))
	default:
		s.Advice = fmt.Sprintf("keep screening. The curve bends at %d screened (%d relevant), but relevant papers since then come only %s times more slowly, below the method's %d (156 − min(relevant, 150)).",
			k.At.Screened, k.At.Relevant, ratio(k.Ratio), int(k.Threshold))
	}
	return s
}

// WindowOf applies "no relevant paper in the last k screened" to a gain
// curve: it applies once k papers are screened and suggests stopping when
// none of the last k is relevant (by its current mark). A k below 1 is
// DefaultStopWindow.
func WindowOf(curve []GainPoint, k int) Suggestion {
	if k < 1 {
		k = DefaultStopWindow
	}
	s := Suggestion{Rule: RuleWindow(k)}
	n := len(curve)
	if n < k {
		s.Advice = fmt.Sprintf("does not apply yet: it looks back on %d screened papers, and %s screened so far.", k, papers(n, "is", "are"))
		return s
	}
	s.Applies = true
	lastRelevant := 0 // the step of the last relevant paper, 0 for none
	for i := n - 1; i >= 0; i-- {
		if i == 0 && curve[0].Relevant > 0 || i > 0 && curve[i].Relevant > curve[i-1].Relevant {
			lastRelevant = i + 1
			break
		}
	}
	since := n - lastRelevant
	switch {
	case since >= k && lastRelevant == 0:
		s.Stop = true
		s.Advice = fmt.Sprintf("you could stop: none of the %d screened papers is relevant. The decision is yours.", n)
	case since >= k:
		s.Stop = true
		s.Advice = fmt.Sprintf("you could stop: the last relevant paper was the %s of %d screened, %d papers ago. The decision is yours.", ordinal(lastRelevant), n, since)
	default:
		s.Advice = fmt.Sprintf("keep screening: the last relevant paper was the %s of %d screened, %d papers ago.", ordinal(lastRelevant), n, since)
	}
	return s
}

func papers(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func ratio(x float64) string {
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// ordinal writes n as "1st", "2nd", "23rd", "112th".
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}
