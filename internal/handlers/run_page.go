package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// Show handles GET /runs/:id: the share link. Opening it remembers the run
// in this browser's list.
func (h *Runs) Show(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.people.remember(c, run.ID); err != nil {
		return err
	}
	d, err := runData(ctx, h.runs, h.engine, run, h.people.page(c))
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunPage(d))
}

// runView is a run read back with its checkpoints decoded, shared by the
// run page and the JSON API.
type runView struct {
	run         engine.Run
	pending     *engine.Checkpoint
	lastResult  *pipeline.ResultPayload
	accumulated []research.ScoredPaper
	history     []research.IterationRecord
	decisions   []views.DecisionRow
	// final is the run's final collection once it ended (nil before).
	final *research.PaperCollection
	// searched holds the iterations whose search has run.
	searched map[int]bool
	// rejected are the papers whose latest mark is irrelevant; notes the
	// researcher's notes on papers (search runs only).
	rejected []research.ScoredPaper
	notes    map[string]string
	// skillNotes are what the skills reported about how they worked,
	// such as an LLM skill falling back to its offline variant.
	skillNotes []research.Note
}

// loadRunView reads a run's checkpoints and decisions and derives its
// history: the strategy used per iteration (edited if edited), the result
// count and the feedback given, and the papers accumulated so far with the
// last review's relevant marks merged in.
func loadRunView(ctx context.Context, rs RunStore, run engine.Run) (runView, error) {
	v := runView{run: run, searched: map[int]bool{}}
	cps, err := rs.Checkpoints(ctx, run.ID)
	if err != nil {
		return v, err
	}
	byIter := map[int]*research.IterationRecord{}
	rec := func(i int) *research.IterationRecord {
		if r, ok := byIter[i]; ok {
			return r
		}
		byIter[i] = &research.IterationRecord{Iteration: i}
		return byIter[i]
	}
	var lastFeedback *research.UserFeedback
	for _, cd := range cps {
		cp, dec := cd.Checkpoint, cd.Decision
		if cp.ID == run.CheckpointID && cp.Status == engine.CheckpointPending {
			c := cp
			v.pending = &c
		}
		if dec != nil {
			v.decisions = append(v.decisions, views.DecisionRow{
				Kind: string(cp.Kind), Iteration: cp.Iteration, Action: string(dec.Action),
				By: dec.DecidedBy, At: dec.DecidedAt, Note: dec.Note,
			})
		}
		switch cp.Kind {
		case engine.KindStrategyConfirmation:
			p, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
			if err != nil {
				return v, err
			}
			r := rec(cp.Iteration)
			r.Strategy = p.Strategy
			if dec != nil && dec.Action == engine.Edit && len(dec.RevisedData) > 0 {
				var s research.SearchStrategy
				if json.Unmarshal(dec.RevisedData, &s) == nil {
					r.Strategy = s
				}
			}
		case engine.KindResultReview:
			p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
			if err != nil {
				return v, err
			}
			v.lastResult = &p
			v.searched[cp.Iteration] = true
			r := rec(cp.Iteration)
			r.ResultCount = len(p.Collection.Papers)
			lastFeedback = nil
			if dec != nil && len(dec.RevisedData) > 0 {
				var fb research.UserFeedback
				if json.Unmarshal(dec.RevisedData, &fb) == nil {
					r.Feedback = &fb
					lastFeedback = &fb
				}
			}
		}
	}
	for i := 1; i <= run.Iteration+1; i++ {
		if r, ok := byIter[i]; ok {
			v.history = append(v.history, *r)
		}
	}
	if v.lastResult != nil {
		st := research.WorkflowState{AccumulatedPapers: slices.Clone(v.lastResult.AccumulatedPapers)}
		if lastFeedback != nil {
			for _, id := range lastFeedback.MarkedRelevant {
				if p, ok := v.lastResult.Collection.Paper(id); ok {
					st.Accumulate(p)
				}
			}
		}
		v.accumulated = st.AccumulatedPapers
	}
	if run.Workflow == pipeline.Name {
		// The search pipeline's own state is authoritative where it has
		// an answer: recorded iterations, accumulated papers, final result.
		rs, err := pipeline.StateOf(run)
		if err != nil {
			return v, err
		}
		recorded := map[int]bool{}
		for _, h := range rs.Workflow.History {
			recorded[h.Iteration] = true
			v.searched[h.Iteration] = true
		}
		merged := slices.Clone(rs.Workflow.History)
		for _, h := range v.history {
			if !recorded[h.Iteration] {
				merged = append(merged, h)
			}
		}
		slices.SortStableFunc(merged, func(a, b research.IterationRecord) int { return a.Iteration - b.Iteration })
		v.history = merged
		if rs.Workflow.AccumulatedPapers != nil || v.accumulated == nil {
			v.accumulated = rs.Workflow.AccumulatedPapers
		}
		v.final = rs.Final
		v.rejected, v.notes, v.skillNotes = rs.MarkedIrrelevant, rs.Workflow.PaperNotes, rs.Notes
	}
	if v.final == nil && run.IsComplete() && v.lastResult != nil {
		c := v.lastResult.Collection
		v.final = &c
	}
	return v, nil
}

// runData builds the run page's props.
func runData(ctx context.Context, rs RunStore, e *engine.Engine, run engine.Run, page views.Page) (views.RunData, error) {
	v, err := loadRunView(ctx, rs, run)
	if err != nil {
		return views.RunData{}, err
	}
	bound := loopBound(e, run)
	d := views.RunData{
		Page: page, Question: run.Params.String(paramQuestion), MaxIterations: bound,
		Status: statusOf(run), Decisions: v.decisions, Accumulated: v.accumulated,
		HasReport: run.Workflow == pipeline.Name,
		HasPapers: run.Workflow == pipeline.Name && v.lastResult != nil, HasAccumulated: len(v.accumulated) > 0,
		Notes: v.skillNotes,
	}
	// An iteration whose strategy was rejected was never searched: the
	// pipeline records it with 0 results, which must not read as a search
	// that found nothing.
	rejected := map[int]bool{}
	for _, dr := range v.decisions {
		if dr.Kind == string(engine.KindStrategyConfirmation) && dr.Action == string(engine.Reject) {
			rejected[dr.Iteration] = true
		}
	}
	for _, h := range v.history {
		row := views.IterationRow{Iteration: h.Iteration, ResultCount: h.ResultCount, Sources: h.Strategy.Sources,
			Searched: v.searched[h.Iteration], StrategyRejected: rejected[h.Iteration] && !h.Searched()}
		for _, q := range h.Strategy.Queries {
			row.Queries = append(row.Queries, q.Text)
		}
		if h.Feedback != nil {
			row.Relevant, row.Irrelevant, row.Feedback = len(h.Feedback.MarkedRelevant), len(h.Feedback.MarkedIrrelevant), h.Feedback.FreeTextFeedback
		}
		d.History = append(d.History, row)
	}
	if v.pending != nil {
		switch v.pending.Kind {
		case engine.KindStrategyConfirmation:
			p, err := engine.PayloadAs[pipeline.StrategyPayload](*v.pending)
			if err != nil {
				return d, err
			}
			f := strategyFormOf(run.ID, *v.pending, p, knownSources(e))
			f.MaxIterations = bound
			d.Strategy = &f
		case engine.KindResultReview:
			p, err := engine.PayloadAs[pipeline.ResultPayload](*v.pending)
			if err != nil {
				return d, err
			}
			notes, err := paperNotesOf(run)
			if err != nil {
				return d, err
			}
			f := reviewFormOf(run.ID, *v.pending, p, notes)
			f.MaxIterations = bound
			d.Review = &f
		case engine.KindEscalation:
			p, err := engine.PayloadAs[engine.EscalationPayload](*v.pending)
			if err != nil {
				return d, err
			}
			d.Escalation = &views.EscalationForm{RunID: run.ID, CheckpointID: v.pending.ID, Step: p.Step, Error: p.Error,
				Attempts: p.Attempts, CanSkip: skippable(e, run.Workflow, p.Step)}
		}
	}
	if run.IsComplete() && v.final != nil {
		// Runs finalised before rejected papers were left out of the
		// final collection still hold them: they are listed apart.
		final := *v.final
		rejected := map[string]bool{}
		for _, p := range v.rejected {
			rejected[p.ID] = true
		}
		final.Papers = slices.DeleteFunc(slices.Clone(final.Papers), func(p research.ScoredPaper) bool { return rejected[p.ID] })
		d.Final = &views.PaperGroupSet{Groups: groupsOf(final), Rejected: v.rejected, Notes: v.notes}
	}
	return d, nil
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
// group names gathered under "Other".
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
	return out
}
