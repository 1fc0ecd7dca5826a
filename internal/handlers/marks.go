package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// reasonPrefix names the per-paper exclusion reason inputs of the review
// form: "reason:<paper id>", next to "mark:" and "note:".
const reasonPrefix = "reason:"

// MarkInput is PUT /api/runs/:id/marks/:paper_id. MarkedBy is optional, as
// DecisionInput's decided_by; it defaults to "api".
type MarkInput struct {
	Mark     string `json:"mark"`
	Note     string `json:"note"`
	Reason   string `json:"reason"`
	MarkedBy string `json:"marked_by"`
}

// MarksJSON is GET /api/runs/:id/marks: each marked paper's current mark.
type MarksJSON struct {
	Marks []research.Mark `json:"marks"`
}

// PutMark handles PUT /api/runs/:id/marks/:paper_id (the paper ID
// URL-encoded, as DOIs hold slashes) → 200 with the stored mark; 422 naming
// the bad field, 404 for a paper not in the review, 409 when the run is
// not waiting at a review.
func (a *API) PutMark(c echo.Context) error {
	ctx := c.Request().Context()
	paperID, err := paperParam(c)
	if err != nil {
		return err
	}
	run, err := a.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	var in MarkInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	by, err := author(c, "marked_by", in.MarkedBy)
	if err != nil {
		return err
	}
	m := research.Mark{PaperID: paperID, Mark: in.Mark, Note: in.Note, Reason: in.Reason, By: by}.Normalize()
	if err := m.Validate(); err != nil {
		return err
	}
	cp, p, err := pendingReview(ctx, a.runs, run)
	if err != nil {
		return err
	}
	if _, ok := p.Collection.Paper(paperID); !ok {
		return fault.Errorf(fault.ENotFound, "paper %s is not in the review of run %s (iteration %d)", paperID, run.ID, p.Iteration)
	}
	saved, err := a.runs.SaveMarks(ctx, run.ID, cp.ID, []research.Mark{m})
	if err != nil {
		return err
	}
	publishMarks(a.engine, run.ID, cp.ID, p, saved)
	return c.JSON(http.StatusOK, saved[0])
}

// Marks handles GET /api/runs/:id/marks: the current mark of every paper
// marked in the run, in the order they were last marked.
func (a *API) Marks(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := a.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	marks, err := marksAs(ctx, a.runs, run, identityOf(c).name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, MarksJSON{Marks: marks})
}

// paperParam is the route's paper ID, decoded: echo matches the escaped
// path, so "doi:10.1093%2Fsleep%2F26.2.117" arrives still escaped (and an
// unescaped "a/b" arrives as is through the wildcard).
func paperParam(c echo.Context) (string, error) {
	id, err := url.PathUnescape(c.Param("*"))
	if err != nil {
		return "", &fault.Error{Code: fault.EInvalid, Message: "invalid paper id", Fields: map[string]string{"paper_id": err.Error()}}
	}
	return id, nil
}

// pendingReview is the review checkpoint run waits at, with its payload;
// EConflict when it waits at none (still searching, at the strategy
// checkpoint, finished), since marks belong to a review in progress.
func pendingReview(ctx context.Context, runs RunStore, run engine.Run) (engine.Checkpoint, pipeline.ResultPayload, error) {
	var p pipeline.ResultPayload
	if run.Status == engine.StatusWaiting && run.CheckpointID != "" {
		cps, err := runs.Checkpoints(ctx, run.ID)
		if err != nil {
			return engine.Checkpoint{}, p, err
		}
		for _, cd := range cps {
			cp := cd.Checkpoint
			if cp.ID == run.CheckpointID && cp.Kind == pipeline.KindResultReview && cp.Status == engine.CheckpointPending && cd.Decision == nil {
				p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
				return cp, p, err
			}
		}
	}
	return engine.Checkpoint{}, p, fault.Errorf(fault.EConflict, "run %s is not waiting at a review (it is %s at %q): papers can be marked only while their review is open", run.ID, run.Status, run.Step)
}

// SaveMarks handles POST /runs/:id/checkpoints/:cp/marks, what each mark
// control of the review form sends (htmx) the moment it changes: the
// paper's "mark:", "note:" and "reason:" fields as the form names them.
// It stores what changed and answers the paper's save status fragment;
// a decided checkpoint is 409, a bad mark 422.
func (h *Runs) SaveMarks(c echo.Context) error {
	run, cp, err := h.pendingCheckpoint(c, pipeline.KindResultReview)
	if fault.ErrorCode(err) == fault.EConflict && cp.ID != "" && h.savedAlready(c, run, cp) {
		// The review was decided meanwhile, typically by this page's own
		// submit, whose form carried the same marks: a save that would
		// change nothing is answered as one.
		return render(c, http.StatusOK, views.MarkSaved(0))
	}
	if err != nil {
		return err
	}
	p, form, err := reviewSubmit(c, cp)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	saved, err := saveFormMarks(ctx, h.runs, h.engine, run, cp, p, form, h.people.name(c))
	if err != nil {
		return err
	}
	// The review's counts ride along out of band, so its bar follows
	// every click.
	current, err := currentMarks(ctx, h.runs, run, h.people.name(c))
	if err != nil {
		return err
	}
	marks := make(map[string]string, len(current))
	for id, m := range current {
		marks[id] = m.Mark
	}
	if len(saved) > 0 {
		c.Response().Header().Set("HX-Trigger", marksSavedTrigger) // the progress panel redraws
	}
	pr := views.ProgressOf(p.Collection.Papers, marks)
	return render(c, http.StatusOK, templ.Join(views.MarkSaved(len(saved)), views.ReviewProgress(pr, true)))
}

// savedAlready says whether what a mark save posted at the decided review
// cp is what the papers' stored marks say already.
func (h *Runs) savedAlready(c echo.Context, run engine.Run, cp engine.Checkpoint) bool {
	p, form, err := reviewSubmit(c, cp)
	if err != nil {
		return false
	}
	changed, err := formChanges(c.Request().Context(), h.runs, run, p, form, h.people.name(c))
	return err == nil && len(changed) == 0
}

// EventMark is the event a saved mark publishes on the run's event stream:
// everyone viewing the run sees it as a progress line, and the review
// pages set the paper's mark, note and reason in place (MarkEvent).
const EventMark engine.EventType = "mark"

// MarkEvent is an EventMark's data, and the "mark" message of the run's
// event stream: the stored mark and the review checkpoint it belongs to,
// so a page showing another review leaves its papers alone.
type MarkEvent struct {
	research.Mark
	CheckpointID string `json:"checkpoint_id"`
}

// publishMarks announces saved marks to the run's viewers through the
// engine's event broker (which never blocks: a slow viewer misses it, and
// sees the mark when it next loads the page).
func publishMarks(e *engine.Engine, runID, checkpointID string, p pipeline.ResultPayload, saved []research.Mark) {
	if e == nil || e.Events() == nil {
		return
	}
	for _, m := range saved {
		title := m.PaperID
		if paper, ok := p.Collection.Paper(m.PaperID); ok {
			title = "“" + paper.Title + "”"
		}
		e.Events().Publish(engine.Event{Type: EventMark, RunID: runID, Step: pipeline.StepReview, Iteration: m.Iteration,
			Message: fmt.Sprintf("%s marked %s %s", m.By, title, m.Mark), Data: MarkEvent{Mark: m, CheckpointID: checkpointID}, At: m.At})
	}
}

// saveFormMarks stores the marks, notes and reasons a review form posted
// that differ from the papers' current ones (so a form submit without
// JavaScript saves them too, and an untouched paper is not marked), and
// returns what it stored, announced to the run's viewers (publishMarks):
// every way a mark is stored (a click, a form submit, a decision) comes
// through here or PutMark. A reason is kept only on a paper marked
// irrelevant, where the form shows it as meant.
func saveFormMarks(ctx context.Context, runs RunStore, e *engine.Engine, run engine.Run, cp engine.Checkpoint, p pipeline.ResultPayload, form url.Values, by string) ([]research.Mark, error) {
	changed, err := formChanges(ctx, runs, run, p, form, by)
	if err != nil || len(changed) == 0 {
		return nil, err
	}
	saved, err := runs.SaveMarks(ctx, run.ID, cp.ID, changed)
	if err != nil {
		return nil, err
	}
	publishMarks(e, run.ID, cp.ID, p, saved)
	return saved, nil
}

// formChanges are the marks a review form posted that differ from the
// papers' current ones (as by sees them), by by; a bad mark, or a paper
// not in the review, is fault.EInvalid naming the field.
func formChanges(ctx context.Context, runs RunStore, run engine.Run, p pipeline.ResultPayload, form url.Values, by string) ([]research.Mark, error) {
	current, err := currentMarks(ctx, runs, run, by)
	if err != nil {
		return nil, err
	}
	posted := map[string]research.Mark{}
	for k, vs := range form {
		if len(vs) == 0 {
			continue
		}
		for _, prefix := range []string{markPrefix, notePrefix, reasonPrefix} {
			id, ok := strings.CutPrefix(k, prefix)
			if !ok {
				continue
			}
			m, seen := posted[id]
			if !seen {
				m = current[id]
				m.PaperID = id
				if m.Mark == "" {
					m.Mark = research.MarkUnsure
				}
			}
			switch prefix {
			case markPrefix:
				m.Mark = vs[0]
			case notePrefix:
				m.Note = vs[0]
			case reasonPrefix:
				m.Reason = vs[0]
			}
			posted[id] = m
		}
	}
	var changed []research.Mark
	fe := fault.FieldErrors{}
	for _, paper := range p.Collection.Papers {
		m, ok := posted[paper.ID]
		if !ok {
			continue
		}
		delete(posted, paper.ID)
		m = m.Normalize()
		if m.Mark != research.MarkIrrelevant {
			m.Reason = ""
		}
		if err := m.Validate(); err != nil {
			for f, msg := range fault.ErrorFields(err) {
				fe.Add(f+":"+paper.ID, msg)
			}
			continue
		}
		was, had := current[paper.ID]
		if had && was.Same(m) || !had && m.Mark == research.MarkUnsure && m.Note == "" && m.Reason == "" {
			continue
		}
		m.By = by
		changed = append(changed, m)
	}
	for id := range posted {
		fe.Add(markPrefix+id, fmt.Sprintf("paper %s is not in this review", id))
	}
	if err := fe.Err("invalid marks"); err != nil {
		return nil, err
	}
	return changed, nil
}

// currentMarks is each paper's current mark, note and reason as the review
// shows it: the stored mark when there is one, else what the run's
// decisions recorded (relevant, irrelevant, a note), for runs marked
// before marks were stored. In a dual-screened run it is what person
// sees: their own marks of papers still being screened (screeningMarks).
func currentMarks(ctx context.Context, runs RunStore, run engine.Run, person string) (map[string]research.Mark, error) {
	sets, err := runSetsAs(ctx, runs, run, person)
	if err != nil {
		return nil, err
	}
	out := map[string]research.Mark{}
	for id, mark := range sets.Marks {
		out[id] = research.Mark{PaperID: id, Mark: mark, Note: sets.Notes[id], Reason: sets.Reasons[id]}
	}
	for id, note := range sets.Notes {
		if _, ok := out[id]; !ok {
			out[id] = research.Mark{PaperID: id, Mark: research.MarkUnsure, Note: note}
		}
	}
	return out, nil
}

// runSets separates a search run's papers by their current marks (empty
// sets for another workflow).
func runSets(ctx context.Context, runs RunStore, run engine.Run) (pipeline.Sets, error) {
	return runSetsAs(ctx, runs, run, "")
}

// runSetsAs is runSets as person sees the run (see marksAs).
func runSetsAs(ctx context.Context, runs RunStore, run engine.Run, person string) (pipeline.Sets, error) {
	if run.Workflow != pipeline.Name {
		return pipeline.SetsOf(pipeline.RunState{}, nil), nil
	}
	rs, err := pipeline.StateOf(run)
	if err != nil {
		return pipeline.Sets{}, err
	}
	marks, err := marksAs(ctx, runs, run, person)
	if err != nil {
		return pipeline.Sets{}, err
	}
	return pipeline.SetsOf(rs, marks), nil
}

// withStoredMarks completes a decision at a pending review with the marks
// saved click by click: marks the decision carries itself (the old way)
// are stored as mark events first and win for their papers; the stored
// marks of the other papers are merged into its feedback. A decision at
// another checkpoint, or with revised data that is not valid feedback
// (the engine refuses it with the reason), is returned unchanged.
func withStoredMarks(ctx context.Context, runs RunStore, e *engine.Engine, run engine.Run, cpID string, d engine.Decision) (engine.Decision, error) {
	cp, p, err := pendingReview(ctx, runs, run)
	if err != nil || cp.ID != cpID {
		return d, nil
	}
	fb, ok, err := pipeline.DecodeFeedback(d.RevisedData, p.Collection)
	if err != nil {
		return d, nil
	}
	if ok {
		if err := saveFeedbackMarks(ctx, runs, e, run, cp, fb, d.DecidedBy); err != nil {
			return d, err
		}
	}
	fb, marks, err := decisionMarks(ctx, runs, run, fb)
	if err != nil {
		return d, err
	}
	merged := pipeline.MergeMarks(fb, marks, p.Collection)
	if !ok && len(merged.MarkedRelevant)+len(merged.MarkedIrrelevant)+len(merged.PaperNotes) == 0 {
		return d, nil // nothing marked: the decision as it always was
	}
	if d.RevisedData, err = json.Marshal(merged); err != nil {
		return d, err
	}
	return d, nil
}

// saveFeedbackMarks stores the marks and notes a decision's feedback
// carries where they differ from the papers' current ones.
func saveFeedbackMarks(ctx context.Context, runs RunStore, e *engine.Engine, run engine.Run, cp engine.Checkpoint, fb research.UserFeedback, by string) error {
	form := url.Values{}
	for _, id := range fb.MarkedRelevant {
		form.Set(markPrefix+id, research.MarkRelevant)
	}
	for _, id := range fb.MarkedIrrelevant {
		form.Set(markPrefix+id, research.MarkIrrelevant)
	}
	for id, note := range fb.PaperNotes {
		form.Set(notePrefix+id, note)
	}
	p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
	if err != nil {
		return err
	}
	_, err = saveFormMarks(ctx, runs, e, run, cp, p, form, by)
	return err
}
