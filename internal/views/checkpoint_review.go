package views

import "quarry/internal/research"

// reviewEnterNotice is the review form's Enter notice. The handler that
// sets it does not know the run's bound and names the three usual buttons;
// at the last iteration only "Finish the run" is there, so the notice
// names that one instead.
func reviewEnterNotice(f ReviewForm) string {
	if f.EnterNotice == "" || !lastIteration(f.Iteration, f.MaxIterations) {
		return f.EnterNotice
	}
	return "Nothing was decided: Enter keeps your marks and notes on the page. Use Finish the run to decide."
}

// submittedTitle names a submitted paper by its title, or by its ID when
// the paper is not in the reviewed collection.
func submittedTitle(p SubmittedPaper) string {
	if p.Title != "" {
		return p.Title
	}
	return p.ID
}

// markParams are the fields a paper's mark controls send when one changes
// (htmx's hx-params): the CSRF token and that paper's mark, note and
// reason, not the whole form, so two people marking different papers of
// one review never overwrite each other's marks.
func markParams(paperID string) string {
	return "_csrf,mark:" + paperID + ",note:" + paperID + ",reason:" + paperID
}

// reviewReasons are the exclusion reasons the review offers: the
// configured ones, else the usual ones (any other text is accepted too).
func reviewReasons(f ReviewForm) []string {
	if len(f.ExclusionReasons) > 0 {
		return f.ExclusionReasons
	}
	return research.DefaultExclusionReasons()
}

// Progress is how far a review's screening has come: of its Total
// papers, how many are Screened (marked relevant or irrelevant; unsure
// is not yet a decision) and how many of those are Relevant.
type Progress struct {
	Screened, Total, Relevant int
}

// ProgressOf counts papers by their current marks (paper ID → mark); a
// paper listed twice counts once.
func ProgressOf(papers []research.ScoredPaper, marks map[string]string) Progress {
	var pr Progress
	seen := make(map[string]bool, len(papers))
	for _, p := range papers {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		pr.Total++
		switch marks[p.ID] {
		case MarkRelevant:
			pr.Screened++
			pr.Relevant++
		case MarkIrrelevant:
			pr.Screened++
		}
	}
	return pr
}

// progressOf is the review's progress: f.Progress when the handler
// counted it, else that of the papers f shows.
func progressOf(f ReviewForm) Progress {
	if f.Progress != nil {
		return *f.Progress
	}
	var papers []research.ScoredPaper
	for _, g := range f.Groups {
		papers = append(papers, g.Papers...)
	}
	return ProgressOf(papers, f.Marks)
}

// Drawn is a paper's stored mark, note and reason when the review form
// was drawn.
type Drawn struct{ Mark, Note, Reason string }

// drawnOf is paper id's Drawn: from f.Stored when the form shows posted
// values over the stored ones (a 422), else what the form shows. An
// empty mark is drawn as unsure, the radio checked for it.
func drawnOf(f ReviewForm, id string) Drawn {
	d := Drawn{Mark: f.Marks[id], Note: f.Notes[id], Reason: f.Reasons[id]}
	if f.Stored != nil {
		d = f.Stored[id]
	}
	if d.Mark == "" {
		d.Mark = MarkUnsure
	}
	return d
}
