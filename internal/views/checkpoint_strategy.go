package views

import (
	"strconv"

	"quarry/internal/research"
)

// lastStrategyText says, at the last iteration's strategy checkpoint, what
// rejecting does: at iteration 1 there was no search before, so the run
// ends with no papers; later, with what the last search found.
func lastStrategyText(iteration int) string {
	const s = "No other strategy can be built: approve or save your edits to search; "
	if iteration <= 1 {
		return s + "rejecting this strategy ends the run without searching, so it completes with no papers."
	}
	return s + "rejecting this strategy ends the run without searching again, and the final collection is the last search's results with your marks applied."
}

// yearText is the intent's year range, "…" for an open end.
func yearText(y research.YearRange) string {
	from, to := "…", "…"
	if y.From != 0 {
		from = strconv.Itoa(y.From)
	}
	if y.To != 0 {
		to = strconv.Itoa(y.To)
	}
	return from + "–" + to
}

// conceptsText lists concepts with their synonyms, "a (x, y); b", built in
// Go because templ would put white space between loop items.
func conceptsText(cs []research.Concept) string { return research.ConceptList(cs) }
