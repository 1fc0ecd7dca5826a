package views

import (
	"fmt"
	"strconv"

	"quarry/internal/research"
)

// findingsBlockingText says how many findings block approval and when
// they stop blocking: the gate relaxes by iteration.
func findingsBlockingText(f StrategyForm) string {
	n := len(research.Blocking(f.Findings))
	s := fmt.Sprintf("%d findings block", n)
	if n == 1 {
		s = "1 finding blocks"
	}
	return fmt.Sprintf("%s approving this strategy as it is at iteration %d (iterations 1–2: every finding blocks; 3–4: MUST and SHOULD; from 5: only MUST).", s, f.Iteration)
}

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

// clarifyOther is the value of a clarifying question's "Other" radio
// button: the answer is then the text typed beside it.
const clarifyOther = "__other__"

// ClarifyOther is clarifyOther for the handler that reads the form.
const ClarifyOther = clarifyOther

// clarifyID is the id of a clarifying question's option's radio button.
func clarifyID(question string, option int) string {
	return "clarify-" + question + "-" + strconv.Itoa(option)
}
