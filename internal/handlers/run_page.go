package handlers

import (
	"cmp"
	"context"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/research"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// Show handles GET /runs/:id: the share link. Opening it remembers the run
// in this browser's list.
// It is rendered once per run stamp and list query (runCache.page), the
// person's CSRF token filled in per request.
func (h *Runs) Show(c echo.Context) error {
	e, err := h.cache.getFor(c.Request().Context(), h.runs, c.Param("id"), h.people.name(c))
	if err != nil {
		return err
	}
	if err := h.people.remember(c, e.run.ID); err != nil {
		return err
	}
	k := pageKey{query: reviewQueryOf(c.QueryParams()), undo: c.QueryParam("undo"), list: isListRequest(c)}
	return h.cache.page(c, e, h.engine, k, h.people.page(c))
}

// reviewSettings are the server's settings a review shows: the exclusion
// reasons it offers (empty: the defaults) and k of its "no relevant paper
// in the last k screened" suggestion (0: the default).
type reviewSettings struct {
	reasons    []string
	stopWindow int
}

// apply gives d's review form, if any, the exclusion reasons. The form is
// copied, as a cached page's is shared by every request.
func (s reviewSettings) apply(d views.RunData) views.RunData {
	if d.Review != nil {
		f := *d.Review
		f.ExclusionReasons = s.reasons
		d.Review = &f
	}
	return d
}

// ToRunPage handles GET on a checkpoint form's POST-only action. A browser
// shows that address after the form was answered in place (422 with its
// errors, 409) and static/app.js could not replace it, and reloading it,
// a bookmark or a history entry would be a 405: it leads to the run's page
// (the review list as the action's query had it).
func (h *Runs) ToRunPage(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, runListURL(c.Param("id"), reviewQueryOf(c.QueryParams()).Values()))
}

// runData builds the run page's props from the run's view; stopWindow is
// k of the review's "no relevant paper in the last k screened" suggestion.
func runData(ctx context.Context, rs RunStore, e *engine.Engine, run engine.Run, page views.Page, stopWindow int) (views.RunData, error) {
	v, err := loadView(ctx, rs, run)
	if err != nil {
		return views.RunData{}, err
	}
	var sets pipeline.Sets
	review := v.Pending != nil && v.Pending.Kind == pipeline.KindResultReview
	if review || v.Run.IsComplete() {
		if sets, err = runSets(ctx, rs, run); err != nil {
			return views.RunData{}, err
		}
	}
	d, err := runDataOf(e, run, v, sets, page)
	if err != nil || !showsProgress(run, review) {
		return d, err
	}
	events, err := rs.MarkEvents(ctx, run.ID)
	if err != nil {
		return d, err
	}
	d.Screening = screeningOf(run.ID, events, stopWindow)
	return d, nil
}

// runDataOf builds the run page's props from the run's view and sets
// (which only the review and a complete run's page use).
func runDataOf(e *engine.Engine, run engine.Run, v runview.View, sets pipeline.Sets, page views.Page) (views.RunData, error) {
	bound := loopBound(e, run)
	d := views.RunData{
		Page: page, Question: v.Question, MaxIterations: bound,
		Status: statusOf(run), Decisions: decisionRows(run.ID, v.Decisions, v.Timers), History: historyRows(v.History),
		Accumulated: v.Accumulated, HasReport: run.Workflow == pipeline.Name,
		HasPapers: run.Workflow == pipeline.Name && v.LastResult != nil, HasAccumulated: len(v.Accumulated) > 0,
		Notes: v.Notes, LLMUsage: v.LLMUsage,
	}
	if plan := pipeline.ScreeningPlanOf(run); run.Workflow == pipeline.Name && plan.Dual() {
		d.DualScreening, d.Screeners = true, plan.Reviewers
	}
	if err := pendingForm(&d, e, v, bound); err != nil {
		return d, err
	}
	return withSets(d, v, sets), nil
}

// withSets puts the papers' current marks into the run page's props
// (which only the review and a complete run's page show); d's review form
// is copied, not changed.
func withSets(d views.RunData, v runview.View, sets pipeline.Sets) views.RunData {
	if d.Review != nil {
		// The review shows each paper's current mark, saved click by
		// click, in this iteration and the ones after.
		f := *d.Review
		f.Marks, f.Notes, f.Reasons = sets.Marks, sets.Notes, sets.Reasons
		if v.LastResult != nil {
			// Counted over every paper under review, not only those
			// the form lists.
			pr := views.ProgressOf(v.LastResult.Collection.Papers, sets.Marks)
			f.Progress = &pr
		}
		d.Review = &f
	}
	if _, ok := v.FinalCollection(); ok && (d.Review != nil || v.Run.IsComplete()) {
		d.Final = &views.PaperGroupSet{Relevant: sets.Relevant, NotScreened: sets.NotScreened, Rejected: sets.Irrelevant,
			Marks: sets.Marks, Notes: sets.Notes, Reasons: sets.Reasons}
	}
	return d
}

// pendingForm puts the form of the checkpoint the run waits at, if any,
// into the page.
func pendingForm(d *views.RunData, e *engine.Engine, v runview.View, bound int) error {
	cp, run := v.Pending, v.Run
	if cp == nil {
		return nil
	}
	switch cp.Kind {
	case pipeline.KindStrategyConfirmation:
		p, err := engine.PayloadAs[pipeline.StrategyPayload](*cp)
		if err != nil {
			return err
		}
		f := strategyFormOf(run.ID, *cp, p, knownSources(e))
		f.MaxIterations = bound
		d.Strategy = &f
	case pipeline.KindClarify:
		p, err := engine.PayloadAs[pipeline.ClarifyPayload](*cp)
		if err != nil {
			return err
		}
		d.Clarify = &views.ClarifyForm{RunID: run.ID, CheckpointID: cp.ID, Question: p.Question, Questions: p.Questions}
	case pipeline.KindResultReview:
		p, err := engine.PayloadAs[pipeline.ResultPayload](*cp)
		if err != nil {
			return err
		}
		f := reviewFormOf(run.ID, *cp, p, v.PaperNotes)
		f.MaxIterations = bound
		if f.Highlight, err = highlightTerms(run, v); err != nil {
			return err
		}

		f.Feedback = draftBefore(v.Decisions, cp.Iteration)
		d.Review = &f
	case flow.KindGate:
		p, err := engine.PayloadAs[flow.GatePayload](*cp)
		if err != nil {
			return err
		}
		d.Gate = gateFormOf(run.ID, cp.ID, p)
		d.Gate.Approval = gateApprovalOf(v.Votes, cp.ID)
		d.Gate.Timer = gateTimerOf(v.Timers, cp.ID)
	case engine.KindEscalation:
		p, err := engine.PayloadAs[engine.EscalationPayload](*cp)
		if err != nil {
			return err
		}
		d.Escalation = &views.EscalationForm{RunID: run.ID, CheckpointID: cp.ID, Step: p.Step, Error: p.Error,
			Attempts: p.Attempts, CanSkip: skippable(e, run.Workflow, p.Step), Resume: p.Reason == engine.EscalationResume, MaxAttempts: p.MaxAttempts}
	}
	return nil
}

// highlightTerms are what the review marks in titles and abstracts: the
// question's concepts with their synonyms, and the include terms of the
// strategy last searched.
func highlightTerms(run engine.Run, v runview.View) ([]string, error) {
	if run.Workflow != pipeline.Name {
		return nil, nil
	}
	intent, err := pipeline.IntentOf(run)
	if err != nil {
		return nil, err
	}
	var terms []string
	if intent != nil {
		for _, c := range intent.Concepts {
			terms = append(terms, c.Term)
			terms = append(terms, c.Synonyms...)
		}
		terms = append(terms, intent.IncludeTerms...)
	}
	if n := len(v.History); n > 0 {
		terms = append(terms, v.History[n-1].Strategy.Filters.IncludeTerms...)
	}
	return terms, nil
}

// historyRows lays the run's iterations out as the history table's rows.
func historyRows(its []runview.Iteration) []views.IterationRow {
	var out []views.IterationRow
	for _, h := range its {
		row := views.IterationRow{Iteration: h.Iteration, ResultCount: h.ResultCount, Sources: h.Strategy.Sources,
			Searched: h.Done, StrategyRejected: h.StrategyRejected}
		for _, f := range h.Found() {
			row.Found = append(row.Found, f.Source+": "+f.Text)
		}
		for _, q := range h.Strategy.Queries {
			row.Queries = append(row.Queries, q.Text)
		}
		if h.Feedback != nil {
			row.Relevant, row.Irrelevant, row.Feedback = len(h.Feedback.MarkedRelevant), len(h.Feedback.MarkedIrrelevant), h.Feedback.FreeTextFeedback
		}
		out = append(out, row)
	}
	return out
}

// decisionRows lays the run's decisions out for the read-only list; a
// decision a gate's timer took says so, with the default it took.
func decisionRows(runID string, ds []runview.Decision, timers []engine.GateTimer) []views.DecisionRow {
	var out []views.DecisionRow
	for _, d := range ds {
		action := string(d.Action)
		if d.ShowMore {
			action = "show more"
		}
		row := views.DecisionRow{RunID: runID, CheckpointID: d.CheckpointID, Kind: string(d.Kind), Iteration: d.Iteration, Action: action,
			By: d.By, At: d.At, Note: d.Note}
		for _, t := range timers {
			if t.CheckpointID == d.CheckpointID && t.Status == engine.TimerFired && t.Outcome == "default" {
				row.TimedOut = t.Default
			}
		}
		out = append(out, row)
	}
	return out
}

// loopBound is the run's max_iterations as the engine applies it: the
// run's parameter, else its workflow's bound (0 when neither is known).
// The checkpoint forms need it to say when a decision ends the run.
func loopBound(e *engine.Engine, run engine.Run) int {
	if n := run.Params.Int(paramMaxIterations); n > 0 {
		return n
	}
	if wf, err := e.Registry().Get(run.Workflow); err == nil {
		return wf.MaxIterations
	}
	return 0
}

// skippable reports whether the workflow lets a person skip step.
func skippable(e *engine.Engine, workflow, step string) bool {
	wf, err := e.Registry().Get(workflow)
	if err != nil {
		return false
	}
	s, ok := wf.Step(step)
	return ok && s.Skippable()
}

// knownSources are the sources the search workflow accepts.
func knownSources(e *engine.Engine) []string {
	params, ok := searchParams(e)
	if !ok {
		return nil
	}
	return params[paramSources].Choices
}

// groupsOf lays a collection out by the organizer's groups, with papers no
// group names gathered under "Other", best theme first: groups are ordered
// by their best paper's score (then label), since merged and accumulated
// groups do not come in that order.
func groupsOf(c research.PaperCollection) []views.PaperGroup {
	placed := map[string]bool{}
	var out []views.PaperGroup
	for _, g := range c.Groups {
		pg := views.PaperGroup{Label: g.Label}
		for _, id := range g.PaperIDs {
			if p, ok := c.Paper(id); ok && !placed[id] {
				pg.Papers = append(pg.Papers, p)
				placed[id] = true
			}
		}
		if len(pg.Papers) > 0 {
			out = append(out, pg)
		}
	}
	var rest views.PaperGroup
	rest.Label = "Other"
	if len(out) == 0 {
		rest.Label = "Papers"
	}
	for _, p := range c.Papers {
		if !placed[p.ID] {
			rest.Papers = append(rest.Papers, p)
		}
	}
	if len(rest.Papers) > 0 {
		out = append(out, rest)
	}
	best := func(g views.PaperGroup) float64 {
		b := 0.0
		for _, p := range g.Papers {
			b = max(b, p.Score)
		}
		return b
	}
	slices.SortStableFunc(out, func(a, b views.PaperGroup) int {
		return cmp.Or(cmp.Compare(best(b), best(a)), cmp.Compare(a.Label, b.Label))
	})
	return out
}
