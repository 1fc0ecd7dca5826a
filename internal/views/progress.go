package views

import (
	"strconv"

	"quarry/internal/research"
)

// Screening is a run's screening progress as its page shows it: the plot
// (GET /runs/:id/progress.svg) with its text alternative, and what the
// stopping rules suggest, which the researcher may follow or not.
type Screening struct {
	RunID string
	// Version changes whenever the run's marks do (their count), so the
	// plot's address changes and a browser fetches it anew.
	Version int
	// Screened and Relevant are the curve's last point.
	Screened, Relevant int
	// Summary is the plot's alt text, Description its numbers.
	Summary, Description string
	// Suggestions are the stopping rules' hints, each naming its rule.
	Suggestions []research.Suggestion
}

func (p Screening) plotURL() string {
	return "/runs/" + p.RunID + "/progress.svg?v=" + strconv.Itoa(p.Version)
}

func (p Screening) downloadURL() string { return "/runs/" + p.RunID + "/progress.svg" }

// withScreening is f with the run's progress, which the page data holds
// (f may be a form sent back with errors, built without it).
func withScreening(f ReviewForm, p *Screening) ReviewForm {
	if f.Screening == nil {
		f.Screening = p
	}
	return f
}
