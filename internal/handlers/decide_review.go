package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// markPrefix names the per-paper radio groups: "mark:<paper id>";
// notePrefix the per-paper note inputs: "note:<paper id>".
const (
	markPrefix = "mark:"
	// wasPrefix, wasNotePrefix and wasReasonPrefix name a paper's mark,
	// note and reason as the review form drew them (dropUnchanged).
	wasPrefix       = "was:"
	wasNotePrefix   = "was-note:"
	wasReasonPrefix = "was-reason:"
	notePrefix      = "note:"
)

// reviewFormOf fills the review form from a checkpoint's payload and the
// notes kept from earlier reviews.
func reviewFormOf(runID string, cp engine.Checkpoint, p pipeline.ResultPayload, notes map[string]string) views.ReviewForm {
	it := p.Iteration
	if it == 0 {
		it = cp.Iteration
	}
	if notes == nil {
		notes = map[string]string{}
	}
	return views.ReviewForm{
		RunID: runID, CheckpointID: cp.ID, Iteration: it, Groups: groupsOf(p.Collection),
		Sources: p.Collection.Sources, Marks: map[string]string{}, Notes: notes, Accumulated: p.AccumulatedPapers,
		CanShowMore: pipeline.HasMore(p.Collection),
	}
}

// paperNotesOf returns the notes a search run keeps on its papers (nil for
// other workflows), so the review form shows them again.
func paperNotesOf(run engine.Run) (map[string]string, error) {
	if run.Workflow != pipeline.Name {
		return nil, nil
	}
	rs, err := pipeline.StateOf(run)
	return rs.Workflow.PaperNotes, err
}

// feedbackOf turns the marks and notes into the UserFeedback the engine
// expects, in the order the papers are shown so the result is stable. A
// note goes into the feedback when it says something or clears one of
// prev, the notes kept so far; it returns the marks and notes as posted.
func feedbackOf(p pipeline.ResultPayload, form url.Values, prev map[string]string) (research.UserFeedback, map[string]string, map[string]string) {
	fb := research.UserFeedback{MarkedRelevant: []string{}, MarkedIrrelevant: []string{}, FreeTextFeedback: strings.TrimSpace(form.Get("free_text_feedback"))}
	marks, notes := map[string]string{}, map[string]string{}
	for k, vs := range form {
		if len(vs) == 0 {
			continue
		}
		if id, ok := strings.CutPrefix(k, markPrefix); ok {
			marks[id] = vs[0]
		}
		if id, ok := strings.CutPrefix(k, notePrefix); ok {
			note := strings.TrimSpace(vs[0])
			notes[id] = note
			if note != "" || prev[id] != "" {
				if fb.PaperNotes == nil {
					fb.PaperNotes = map[string]string{}
				}
				fb.PaperNotes[id] = note
			}
		}
	}
	seen := map[string]bool{}
	for _, paper := range p.Collection.Papers {
		seen[paper.ID] = true
		switch marks[paper.ID] {
		case views.MarkRelevant:
			fb.MarkedRelevant = append(fb.MarkedRelevant, paper.ID)
		case views.MarkIrrelevant:
			fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, paper.ID)
		}
	}
	// Marks for papers not in the collection go through so that
	// ValidateAgainst reports them instead of them vanishing silently.
	for id, m := range marks {
		if seen[id] {
			continue
		}
		switch m {
		case views.MarkRelevant:
			fb.MarkedRelevant = append(fb.MarkedRelevant, id)
		case views.MarkIrrelevant:
			fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, id)
		}
	}
	return fb, marks, notes
}

// reviewSubmit reads what a review form's request is about: the review's
// papers (the checkpoint's payload) and the submitted form.
func reviewSubmit(c echo.Context, cp engine.Checkpoint) (pipeline.ResultPayload, url.Values, error) {
	p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
	if err != nil {
		return p, nil, err
	}
	form, err := c.FormParams()
	if err != nil {
		return p, nil, fault.Errorf(fault.EInvalid, "unreadable form: %v", err)
	}
	dropUnchanged(form)
	return p, form, nil
}

// dropUnchanged removes from a review form the marks, notes and reasons
// left as the page drew them (its was:, was-note: and was-reason: fields):
// a page drawn before a teammate's mark reached it would otherwise send
// its stale "unsure" back over that mark. Only what the person changed is
// saved; a paper whose fields are all dropped takes its stored mark.
func dropUnchanged(form url.Values) {
	for k := range form {
		id, ok := strings.CutPrefix(k, wasPrefix)
		if !ok {
			continue
		}
		for field, was := range map[string]string{markPrefix: wasPrefix, notePrefix: wasNotePrefix, reasonPrefix: wasReasonPrefix} {
			if vs, sent := form[field+id]; sent && len(vs) > 0 && vs[0] == form.Get(was+id) {
				delete(form, field+id)
			}
		}
	}
}

// DecideReview handles POST /runs/:id/checkpoints/:cp/review: approve
// (finish), edit (iterate with this feedback) or reject, with the marks and
// per-paper notes as UserFeedback; op=keep (what Enter in a note presses)
// only re-renders the form with what was typed. A mark that is not
// relevant, irrelevant or unsure, or names a paper outside the review, is
// refused: the form comes back with everything else kept (422). A
// checkpoint decided meanwhile shows the new state, who decided and what
// this submit carried (409).
func (h *Runs) DecideReview(c echo.Context) error {
	run, cp, err := h.pendingCheckpoint(c, pipeline.KindResultReview)
	if fault.ErrorCode(err) == fault.EConflict {
		// Decided meanwhile: what this submit carried is shown with the
		// conflict, from the checkpoint's papers where it can be read.
		p, _ := engine.PayloadAs[pipeline.ResultPayload](cp)
		form, _ := c.FormParams()
		_, marks, notes := feedbackOf(p, form, nil)
		return h.conflictPageWith(c, run.ID, err, submittedReview(p, marks, notes, form.Get("free_text_feedback")))
	}
	if err != nil {
		return err
	}
	p, form, err := reviewSubmit(c, cp)
	if err != nil {
		return err
	}
	prev, err := paperNotesOf(run)
	if err != nil {
		return err
	}
	fb, marks, notes := feedbackOf(p, form, prev)
	f := reviewFormOf(run.ID, cp, p, notes)
	f.Marks, f.Feedback = marks, form.Get("free_text_feedback")
	f.Reasons = formReasons(form)
	if form.Get("op") == "keep" {
		// Enter in a note: the form's first submit button keeps the marks
		// and notes on the page, saved (so without JavaScript too), and
		// decides nothing.
		if errs := badMarks(p, marks); len(errs) == 0 {
			if _, err := saveFormMarks(c.Request().Context(), h.runs, h.engine, run, cp, p, form, h.people.name(c)); err != nil && fault.ErrorCode(err) != fault.EInvalid {
				return err
			}
		}
		f.EnterNotice = "Nothing was decided: Enter keeps your marks and notes on the page. Use Approve and finish, Iterate with this feedback or Reject these results to decide."
		return h.renderReview(c, run, http.StatusOK, f)
	}
	d := engine.Decision{Action: engine.DecisionAction(form.Get("action")), DecidedBy: h.people.name(c)}
	errs := badMarks(p, marks)
	if err := fb.ValidateAgainst(p.Collection); err != nil {
		maps.Copy(errs, fault.ErrorFields(err))
	}
	if len(errs) > 0 {
		f.Errors = errs
		return h.renderReview(c, run, http.StatusUnprocessableEntity, f)
	}
	// The form's marks are saved as mark events first (without
	// JavaScript this is where they are saved), then the stored marks of
	// papers the form did not carry join the feedback.
	ctx := c.Request().Context()
	if _, err := saveFormMarks(ctx, h.runs, h.engine, run, cp, p, form, d.DecidedBy); err != nil {
		if fault.ErrorCode(err) == fault.EConflict {
			return h.conflictPageWith(c, run.ID, err, submittedReview(p, marks, notes, f.Feedback))
		}
		return err
	}
	fb, stored, err := decisionMarks(ctx, h.runs, run, fb)
	if fault.ErrorCode(err) == fault.EConflict {
		return h.conflictPageWith(c, run.ID, err, submittedReview(p, marks, notes, f.Feedback))
	}
	if err != nil {
		return err
	}
	fb = pipeline.MergeMarks(fb, stored, p.Collection)
	if d.RevisedData, err = json.Marshal(fb); err != nil {
		return err
	}
	err = h.engine.Decide(ctx, run.ID, cp.ID, d)
	switch fault.ErrorCode(err) {
	case "":
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case fault.EConflict:
		return h.conflictPageWith(c, run.ID, err, submittedReview(p, marks, notes, f.Feedback))
	case fault.EInvalid:
		f.Errors = fault.ErrorFields(err)
		if len(f.Errors) == 0 {
			f.Errors = map[string]string{"decision": fault.ErrorMessage(err)}
		}
		return h.renderReview(c, run, http.StatusUnprocessableEntity, f)
	}
	return err
}

// formReasons are the exclusion reasons a review form posted, by paper.
func formReasons(form url.Values) map[string]string {
	out := map[string]string{}
	for k, vs := range form {
		if id, ok := strings.CutPrefix(k, reasonPrefix); ok && len(vs) > 0 {
			out[id] = vs[0]
		}
	}
	return out
}

// badMarks names every posted mark that is not one of the three the form
// offers, keyed by its form field ("mark:<paper id>"), so a tampered or
// garbled value is refused instead of silently counting as unsure.
func badMarks(p pipeline.ResultPayload, marks map[string]string) map[string]string {
	errs := map[string]string{}
	for id, m := range marks {
		switch m {
		case views.MarkRelevant, views.MarkIrrelevant, views.MarkUnsure:
			continue
		}
		name := id
		if paper, ok := p.Collection.Paper(id); ok {
			name = "“" + paper.Title + "”"
		}
		errs[markPrefix+id] = fmt.Sprintf("the mark of %s is %q; choose %s, %s or %s", name, m, views.MarkRelevant, views.MarkIrrelevant, views.MarkUnsure)
	}
	return errs
}

// submittedReview is what a review submit carried that a person typed or
// chose — the feedback, the relevant and irrelevant marks, the notes — for
// the conflict page; nil when it carried none of that.
func submittedReview(p pipeline.ResultPayload, marks, notes map[string]string, feedback string) *views.SubmittedReview {
	s := views.SubmittedReview{Feedback: strings.TrimSpace(feedback)}
	add := func(id, title string) {
		mark := marks[id]
		if mark == views.MarkUnsure {
			mark = ""
		}
		if mark != "" || notes[id] != "" {
			s.Papers = append(s.Papers, views.SubmittedPaper{ID: id, Title: title, Mark: mark, Note: notes[id]})
		}
	}
	shown := map[string]bool{}
	for _, paper := range p.Collection.Papers {
		shown[paper.ID] = true
		add(paper.ID, paper.Title)
	}
	var rest []string
	for id := range marks {
		if !shown[id] {
			rest = append(rest, id)
		}
	}
	for id := range notes {
		if !shown[id] && marks[id] == "" {
			rest = append(rest, id)
		}
	}
	slices.Sort(rest)
	for _, id := range rest {
		add(id, "")
	}
	if s.Feedback == "" && len(s.Papers) == 0 {
		return nil
	}
	return &s
}

// renderReview answers a review form's POST with the run page holding f:
// what was posted, for the papers the page showed, over the papers'
// stored marks, listed as the form's query asks (the page it came from).
func (h *Runs) renderReview(c echo.Context, run engine.Run, status int, f views.ReviewForm) error {
	d, err := runData(c.Request().Context(), h.runs, h.engine, run, h.people.page(c), h.settings.stopWindow)
	if err != nil {
		return err
	}
	if stored := d.Review; stored != nil {
		f.Stored = map[string]views.Drawn{}
		for _, paper := range stored.Groups {
			for _, sp := range paper.Papers {
				f.Stored[sp.ID] = views.Drawn{Mark: stored.Marks[sp.ID], Note: stored.Notes[sp.ID], Reason: stored.Reasons[sp.ID]}
			}
		}
		f.Marks, f.Notes, f.Reasons = overlay(stored.Marks, f.Marks), overlay(stored.Notes, f.Notes), overlay(stored.Reasons, f.Reasons)
		f.Highlight, f.Progress = stored.Highlight, stored.Progress
	}
	confirm := f.List.Confirm
	f = listReview(f, reviewQueryOf(c.QueryParams()))
	f.List.Confirm = confirm
	d.Review = &f
	return render(c, status, views.RunPage(h.settings.apply(d)))
}

// overlay is base with over's entries on top.
func overlay(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}
