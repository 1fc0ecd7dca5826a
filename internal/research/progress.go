package research

// GainPoint is one step of a run's gain curve: after Screened papers,
// Relevant of them are relevant.
type GainPoint struct {
	Screened int `json:"screened"`
	Relevant int `json:"relevant"`
}

// decisive reports whether a mark screens a paper: relevant or irrelevant
// decides it, unsure does not.
func decisive(mark string) bool { return mark == MarkRelevant || mark == MarkIrrelevant }

// GainCurve is the run's gain curve, relevant found against papers
// screened, from its mark events in the order they were made (oldest
// first, as the store keeps them across all iterations). It has one point
// per screened paper, in the order of each paper's first decisive mark
// (relevant or irrelevant), so a paper marked again never counts twice.
// Each paper counts as relevant by its current (latest) mark, which is
// the standard gain curve of technology-assisted review: the review order
// with today's judgements. A paper changed from relevant to irrelevant
// thus lowers the relevant count from its step on, the curve never falls,
// and its last point is the number of papers marked relevant now. A
// paper set back to unsure after a decisive mark keeps its step but is
// not relevant. No decisive mark gives an empty curve.
func GainCurve(events []Mark) []GainPoint {
	current := make(map[string]string, len(events))
	stepped := map[string]bool{}
	var order []string
	for _, e := range events {
		if decisive(e.Mark) && !stepped[e.PaperID] {
			stepped[e.PaperID] = true
			order = append(order, e.PaperID)
		}
		current[e.PaperID] = e.Mark
	}
	out := make([]GainPoint, len(order))
	relevant := 0
	for i, id := range order {
		if current[id] == MarkRelevant {
			relevant++
		}
		out[i] = GainPoint{Screened: i + 1, Relevant: relevant}
	}
	return out
}
