package views

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

// ExclusionReasons are the usual reasons to exclude a paper in screening,
// offered next to each paper (any other text is accepted too).
func ExclusionReasons() []string {
	return []string{"population", "intervention", "comparator", "outcome", "study design", "language", "duplicate", "other"}
}
