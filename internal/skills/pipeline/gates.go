package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/query"
)

// strategyGate is checkpoint 1: the researcher confirms, edits or rejects
// the strategy before any source is asked.
func (p *pipe) strategyGate() *engine.Gate {
	return &engine.Gate{
		Kind:    KindStrategyConfirmation,
		Enabled: func(sc engine.StepContext) bool { return sc.Params.Bool(ParamStrategyCheckpoint) },
		Payload: func(_ context.Context, sc engine.StepContext) (engine.Payload, error) {
			intent, err := need[research.ParsedIntent](sc.State, keyIntent)
			if err != nil {
				return nil, err
			}
			strategy, err := need[research.SearchStrategy](sc.State, keyStrategy)
			if err != nil {
				return nil, err
			}
			findings, err := p.findings(sc, strategy)
			if err != nil {
				return nil, err
			}
			return StrategyPayload{Intent: intent, Strategy: strategy, Iteration: sc.Iteration,
				Findings: findings, QualityGate: sc.Params.Bool(ParamQualityGate)}, nil
		},
		Validate: func(sc engine.StepContext, _ engine.Checkpoint, d engine.Decision) error {
			s, err := p.decidedStrategy(sc, d)
			if err != nil || s == nil {
				return err
			}
			_, err = p.overridden(sc, d, *s)
			return err
		},
		Apply: func(_ context.Context, sc engine.StepContext, _ engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			switch {
			case revises(d):
				s, err := p.revisedStrategy(sc, d)
				if err != nil {
					return "", nil, err
				}
				u, err := set(keyStrategy, s)
				if err != nil {
					return "", nil, err
				}
				if err = recordRemovedLearned(sc, u, s); err != nil {
					return "", nil, err
				}
				err = p.noteOverride(sc, u, d, s)
				return engine.OK, u, err
			case d.Action == engine.Reject:
				// The rejected strategy joins the history, so the next build
				// knows not to propose it again; the note is kept as feedback.
				strategy, err := need[research.SearchStrategy](sc.State, keyStrategy)
				if err != nil {
					return "", nil, err
				}
				wfs, _, err := engine.Get[research.WorkflowState](sc.State, keyWorkflow)
				if err != nil {
					return "", nil, err
				}
				var fb *research.UserFeedback
				if note := strings.TrimSpace(d.Note); note != "" {
					fb = &research.UserFeedback{FreeTextFeedback: note}
				}
				wfs.CurrentIteration = sc.Iteration
				wfs.RecordIteration(strategy, 0, fb)
				u, err := set(keyWorkflow, wfs)
				if bound, last := p.lastIteration(sc); last && err == nil { // the run ends here: say so
					err = noteNow(sc, u, research.Note{Skill: "strategy", Message: fmt.Sprintf(
						"the strategy of iteration %d was rejected and not rebuilt: the run had reached max_iterations (%d), so the decision finished it",
						sc.Iteration, bound)})
				}
				return engine.Iterate, u, err
			default:
				strategy, err := need[research.SearchStrategy](sc.State, keyStrategy)
				if err != nil {
					return "", nil, err
				}
				u := engine.Update{}
				if err := p.noteOverride(sc, u, d, strategy); err != nil || len(u) == 0 {
					return engine.OK, nil, err
				}
				return engine.OK, u, nil
			}
		},
	}
}

// findings reviews strategy s at the gate's iteration (ReviewStrategy),
// with Blocks set when the run enforces the quality gate; never nil, so
// the payload always lists them.
func (p *pipe) findings(sc engine.StepContext, s research.SearchStrategy) ([]research.Finding, error) {
	intent, err := need[research.ParsedIntent](sc.State, keyIntent)
	if err != nil {
		return nil, err
	}
	wfs, _, err := engine.Get[research.WorkflowState](sc.State, keyWorkflow)
	if err != nil {
		return nil, err
	}
	fs := research.WithBlocks(ReviewStrategy(intent, s, wfs.History, p.sources), sc.Iteration, sc.Params.Bool(ParamQualityGate))
	if fs == nil {
		fs = []research.Finding{}
	}
	return fs, nil
}

// decidedStrategy is the strategy a decision would search: the revised
// one (checked) when it revises, the proposal when it approves it, nil
// when it searches nothing (reject).
func (p *pipe) decidedStrategy(sc engine.StepContext, d engine.Decision) (*research.SearchStrategy, error) {
	switch {
	case revises(d):
		s, err := p.revisedStrategy(sc, d)
		return &s, err
	case d.Action == engine.Approve:
		s, err := need[research.SearchStrategy](sc.State, keyStrategy)
		return &s, err
	}
	return nil, nil
}

// overridden applies the quality gate to a decision that searches s: the
// findings that block at this iteration refuse it (EInvalid, naming
// them, on the note field) unless the decision says why in its note,
// which makes it an approval despite them. It returns the findings so
// overridden.
func (p *pipe) overridden(sc engine.StepContext, d engine.Decision, s research.SearchStrategy) ([]research.Finding, error) {
	if !sc.Params.Bool(ParamQualityGate) {
		return nil, nil
	}
	fs, err := p.findings(sc, s)
	if err != nil {
		return nil, err
	}
	blocking := research.Blocking(fs)
	if len(blocking) == 0 {
		return nil, nil
	}
	if strings.TrimSpace(d.Note) != "" {
		return blocking, nil
	}
	return nil, &fault.Error{Code: fault.EInvalid, Message: "the strategy review blocks approval", Fields: map[string]string{
		"note": "Approval refused: " + research.BlockingSummary(blocking, sc.Iteration) +
			". Edit the strategy, or approve anyway with a note saying why."}}
}

// noteOverride adds to u a run note when d approved s despite blocking
// findings, so the report and the run page say so with the reason.
func (p *pipe) noteOverride(sc engine.StepContext, u engine.Update, d engine.Decision, s research.SearchStrategy) error {
	blocking, err := p.overridden(sc, d, s)
	if err != nil || len(blocking) == 0 {
		return err
	}
	return noteNow(sc, u, research.Note{Skill: "strategy review", Message: fmt.Sprintf(
		"approved anyway by %s: %s; their note: %s", d.DecidedBy, research.BlockingSummary(blocking, sc.Iteration), strings.TrimSpace(d.Note))})
}

// revises reports whether a strategy decision replaces the strategy: an
// edit, or an approve that carries a revised strategy (an API client that
// sends its changes with "approve" means them; dropping them silently
// would search what the researcher changed away from).
func revises(d engine.Decision) bool {
	return d.Action == engine.Edit || (d.Action == engine.Approve && len(bytes.TrimSpace(d.RevisedData)) > 0)
}

// revisedStrategy decodes and checks an edit's strategy and re-renders each
// query for its sources against the proposed one, so what is recorded as
// sent is what is sent.
func (p *pipe) revisedStrategy(sc engine.StepContext, d engine.Decision) (research.SearchStrategy, error) {
	var s research.SearchStrategy
	if len(bytes.TrimSpace(d.RevisedData)) == 0 {
		return s, &fault.Error{Code: fault.EInvalid, Message: "an edit needs the revised strategy",
			Fields: map[string]string{"revised_data": "the revised strategy is missing"}}
	}
	if err := decodeRevised(d.RevisedData, &s, "invalid search strategy"); err != nil {
		return s, err
	}
	if err := CheckStrategy(s, p.sources); err != nil {
		return s, err
	}
	fields, err := fieldsOfStudy(s.Filters.FieldsOfStudy)
	if err != nil {
		return s, err
	}
	s.Filters.FieldsOfStudy = fields
	proposed, err := need[research.SearchStrategy](sc.State, keyStrategy)
	if err != nil {
		return s, err
	}
	s.Filters.LearnedExcludeTerms = keptLearned(s.Filters, proposed.Filters)
	s.Filters.Learned = keptLearnedTerms(s.Filters, proposed.Filters)
	return Rerender(s, proposed)
}

// keptLearned is which exclusions of an edited strategy are still learned
// ones: those the proposal learned that the edit still excludes. An edit
// cannot turn its own exclusion into a learned one (it would be lost at
// the next build), but it can claim a learned one as the researcher's by
// keeping it in exclude_terms and leaving it out of learned_exclude_terms.
// An edit that sends no learned_exclude_terms at all (a script writing the
// filters itself) keeps the proposal's; the strategy form sends them.
func keptLearned(edited, proposed research.Filters) []string {
	var out []string
	for _, t := range proposed.LearnedExcludeTerms {
		if !slices.ContainsFunc(edited.ExcludeTerms, func(e string) bool { return sameTerm(e, t) }) {
			continue // removed: recordRemovedLearned remembers it
		}
		if edited.LearnedExcludeTerms != nil && !slices.ContainsFunc(edited.LearnedExcludeTerms, func(e string) bool { return sameTerm(e, t) }) {
			continue // kept, as the researcher's own
		}
		out = append(out, t)
	}
	return out
}

// keptLearnedTerms is the provenance of the learned terms an edited
// strategy keeps: the proposal's entries (an edit cannot forge where a
// term came from) for each learned exclusion it still has as learned and
// each expansion term it did not remove. An edit that sends no learned
// list at all keeps every expansion term (a script writing the filters
// itself); the strategy form sends the list, without the terms the
// researcher removed.
func keptLearnedTerms(edited, proposed research.Filters) []research.LearnedTerm {
	var out []research.LearnedTerm
	for _, l := range proposed.Learned {
		switch l.Use {
		case research.LearnedExclude:
			same := func(e string) bool { return sameTerm(e, l.Term) }
			if !slices.ContainsFunc(edited.LearnedExcludeTerms, same) || !slices.ContainsFunc(edited.ExcludeTerms, same) {
				continue
			}
		case research.LearnedExpand:
			if edited.Learned != nil && !slices.ContainsFunc(edited.Learned, func(e research.LearnedTerm) bool {
				return e.Use == research.LearnedExpand && sameTerm(e.Term, l.Term)
			}) {
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

// removedExpansions are the expansion terms the proposal learned that the
// confirmed strategy s no longer lists.
func removedExpansions(s, proposed research.Filters) []string {
	var out []string
	for _, l := range proposed.Learned {
		if l.Use == research.LearnedExpand && !slices.ContainsFunc(s.Learned, func(e research.LearnedTerm) bool {
			return e.Use == research.LearnedExpand && sameTerm(e.Term, l.Term)
		}) {
			out = append(out, l.Term)
		}
	}
	return out
}

// recordRemovedLearned adds to u the learned exclusions the proposed
// strategy had and the confirmed one s no longer excludes, so no later
// build of the run learns them again (skills.QueryInput.RemovedLearnedTerms):
// otherwise the same marks would propose the word the researcher just
// took out at every iteration.
func recordRemovedLearned(sc engine.StepContext, u engine.Update, s research.SearchStrategy) error {
	proposed, err := need[research.SearchStrategy](sc.State, keyStrategy)
	if err != nil {
		return err
	}
	removed := append(missingFold(proposed.Filters.LearnedExcludeTerms, s.Filters.ExcludeTerms), removedExpansions(s.Filters, proposed.Filters)...)
	if len(removed) == 0 {
		return nil
	}
	prev, _, err := engine.Get[[]string](sc.State, keyRemovedLearned)
	if err != nil {
		return err
	}
	return u.Set(keyRemovedLearned, append(prev, missingFold(removed, prev)...))
}

// fieldsOfStudy checks the fields of study a researcher restricted the
// search to against the names a source can filter by (query.FieldsOfStudy)
// and returns them spelled as listed, each once. A name off the list is
// refused here, with the list, rather than silently left out of the
// request, which would search a narrower set of fields than was asked.
func fieldsOfStudy(fs []string) ([]string, error) {
	known, unknown := query.SortFieldsOfStudy(fs)
	if len(unknown) > 0 {
		quoted := make([]string, len(unknown))
		for i, f := range unknown {
			quoted[i] = strconv.Quote(strings.TrimSpace(f))
		}
		return nil, &fault.Error{Code: fault.EInvalid, Message: "invalid search strategy",
			Fields: map[string]string{"filters.fields_of_study": fmt.Sprintf("%s: not a field of study Semantic Scholar (the only source that filters by field) knows; use %s",
				strings.Join(quoted, ", "), strings.Join(query.FieldsOfStudy(), ", "))}}
	}
	return known, nil
}

// Rerender parses every query's text of an edited strategy s and renders
// it for each of the strategy's sources, replacing PerSource, so a changed
// query text never travels with stale per-source text. The filters hold
// for every query, the ones the researcher rewrote too: each include term
// a query does not mention becomes a required clause and each exclude
// term a NOT clause, and an exclusion they removed loses its NOT clause.
// (Only the change to the filters was applied before, so a query the
// researcher rewrote without the exclusion was sent without it while the
// report listed it as searched: issue 16.) Query texts are rewritten to
// match, so the strategy shown is the strategy sent; a query that already
// carries the filters, as the builders write them, is unchanged.
// Unparseable queries are EInvalid with a field error per query.
func Rerender(s, proposed research.SearchStrategy) (research.SearchStrategy, error) {
	addIncl := s.Filters.IncludeTerms
	addExcl := s.Filters.ExcludeTerms
	dropExcl := missingFold(proposed.Filters.ExcludeTerms, s.Filters.ExcludeTerms)
	dropExp := removedExpansions(s.Filters, proposed.Filters)
	fe := fault.FieldErrors{}
	out := s
	out.Queries = slices.Clone(s.Queries)
	for i, q := range out.Queries {
		ast, err := query.Parse(q.Text)
		if err != nil {
			fe.Add(fmt.Sprintf("queries[%d].text", i), fault.ErrorMessage(err))
			continue
		}
		if len(addIncl)+len(addExcl)+len(dropExcl)+len(dropExp) > 0 {
			ast = query.WithFilters(withoutExclusions(withoutAlternatives(ast, dropExp), dropExcl), addIncl, addExcl)
			if ast.String() != canonical(q.Text) {
				out.Queries[i].Text = ast.String()
			}
		}
		out.Queries[i].PerSource = query.RenderAll(ast, out.Sources)
	}
	if err := fe.Err("invalid search strategy"); err != nil {
		return s, err
	}
	return out, nil
}

// reviewGate is checkpoint 2: the researcher approves the results, or
// marks papers and says what to change for another iteration.
func (p *pipe) reviewGate() *engine.Gate {
	return &engine.Gate{
		Kind: KindResultReview,
		// Without a handler nobody can review: take the first iteration's
		// results as they are.
		Auto: engine.OK,
		Payload: func(_ context.Context, sc engine.StepContext) (engine.Payload, error) {
			coll, err := need[research.PaperCollection](sc.State, keyCollection)
			if err != nil {
				return nil, err
			}
			wfs, _, err := engine.Get[research.WorkflowState](sc.State, keyWorkflow)
			if err != nil {
				return nil, err
			}
			acc := wfs.AccumulatedPapers
			if acc == nil {
				acc = []research.ScoredPaper{}
			}
			return ResultPayload{Collection: coll, AccumulatedPapers: acc, Iteration: sc.Iteration}, nil
		},
		// Validate refuses revised data that is not feedback on the papers
		// shown — a misspelt or unknown key, a value of the wrong type, a
		// mark of a paper not in the review — naming the field, so the
		// person or script that sent it can fix it; coercing it to the note
		// would drop their marks without a word. (In-process handlers,
		// with nobody to tell, are coerced before this: ReviewCoercer.)
		Validate: func(sc engine.StepContext, _ engine.Checkpoint, d engine.Decision) error {
			if len(bytes.TrimSpace(d.RevisedData)) == 0 {
				return nil // no revised data: the note is the feedback
			}
			coll, err := need[research.PaperCollection](sc.State, keyCollection)
			if err != nil {
				return err
			}
			if IsShowMore(d) {
				return checkMore(coll)
			}
			_, _, err = reviewFeedback(d.RevisedData, coll)
			return err
		},
		Apply: func(_ context.Context, sc engine.StepContext, _ engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			if d.Action == engine.Approve && len(bytes.TrimSpace(d.RevisedData)) == 0 {
				return engine.OK, nil, nil
			}
			if IsShowMore(d) {
				// Not a decision on the papers: fetch the next page and ask
				// again. The marks stay where they are stored (paper_marks)
				// and are shown on the papers at the new checkpoint.
				return engine.More, nil, nil
			}
			coll, err := need[research.PaperCollection](sc.State, keyCollection)
			if err != nil {
				return "", nil, err
			}
			wfs, irrelevant, err := marks(sc.State)
			if err != nil {
				return "", nil, err
			}
			fb := CoerceFeedback(d, coll)
			wfs, irrelevant = applyFeedback(wfs, irrelevant, coll, fb, sc.Iteration)
			u, err := set(keyWorkflow, wfs, keyIrrelevant, irrelevant)
			if err != nil {
				return "", nil, err
			}
			if d.Action == engine.Approve {
				return engine.OK, u, nil // approved with marks: keep them, then finish
			}
			// At the loop bound the engine finishes the run instead (an API
			// client can ask for another iteration the form no longer
			// offers); a note says so, so nobody takes the feedback for
			// searched.
			if bound, last := p.lastIteration(sc); last {
				err = noteNow(sc, u, research.Note{Skill: "review", Message: fmt.Sprintf(
					"the feedback of iteration %d (%s) was recorded but not searched: the run had reached max_iterations (%d), so the decision finished it",
					sc.Iteration, d.Action, bound)})
			}
			return engine.Iterate, u, err
		},
	}
}

// lastIteration reports whether the run is at its loop bound, where the
// engine takes an Iterate to the step's exit path (finalize) instead of
// another iteration, and what the bound is.
func (p *pipe) lastIteration(sc engine.StepContext) (bound int, last bool) {
	bound = sc.Params.Int(ParamMaxIterations)
	if bound <= 0 {
		bound = p.opts.MaxIterations
	}
	return bound, sc.Iteration >= bound
}

// noteNow adds a note of the pipeline's own (not a skill's) to the run's
// notes in u, where the run page, the report and the API show them.
func noteNow(sc engine.StepContext, u engine.Update, n research.Note) error {
	nb := &notebook{}
	nb.add(n)
	return nb.done(sc, u, nil)
}

// reviewFeedback reads a review decision's revised data as feedback on
// coll: strictly (decodeRevised), and with every mark and note naming a
// paper of coll. No revised data is no feedback (ok false) and no error.
func reviewFeedback(raw json.RawMessage, coll research.PaperCollection) (fb research.UserFeedback, ok bool, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fb, false, nil
	}
	if err := decodeRevised(raw, &fb, "invalid feedback"); err != nil {
		return fb, false, err
	}
	if err := fb.ValidateAgainst(coll); err != nil {
		return fb, false, err
	}
	return fb, true, nil
}

// CoerceFeedback turns a review decision into the feedback the next
// iteration learns from: the revised data when it is valid feedback whose
// marks name papers of coll, otherwise the note as free text. A decision is
// never lost for being malformed, and a mark can never name a paper the
// researcher was not shown. (The review gate's Validate refuses such
// revised data before a decision is recorded, and ReviewCoercer drops it
// from in-process handlers' decisions; this is the safety net for
// decisions recorded before Validate was strict, which still resume.)
func CoerceFeedback(d engine.Decision, coll research.PaperCollection) research.UserFeedback {
	note := strings.TrimSpace(d.Note)
	fb, ok, err := reviewFeedback(d.RevisedData, coll)
	if !ok || err != nil {
		return research.UserFeedback{FreeTextFeedback: note}
	}
	if strings.TrimSpace(fb.FreeTextFeedback) == "" {
		fb.FreeTextFeedback = note
	}
	return fb
}

// applyFeedback records fb for the iteration and moves marked papers: those
// marked relevant accumulate (and stop being irrelevant), those marked
// irrelevant are remembered for the scorer (and leave the accumulated set:
// the researcher changed their mind). Notes on papers are kept per paper.
func applyFeedback(wfs research.WorkflowState, irrelevant []research.ScoredPaper, coll research.PaperCollection,
	fb research.UserFeedback, iteration int) (research.WorkflowState, []research.ScoredPaper) {
	if n := len(wfs.History); n > 0 && wfs.History[n-1].Iteration == iteration {
		f := fb
		wfs.History[n-1].Feedback = &f
	}
	rel := map[string]bool{}
	for _, id := range fb.MarkedRelevant {
		rel[id] = true
		if paper, ok := coll.Paper(id); ok {
			wfs.Accumulate(paper)
		}
	}
	irr := map[string]bool{}
	for _, id := range fb.MarkedIrrelevant {
		irr[id] = true
	}
	wfs.AccumulatedPapers = slices.DeleteFunc(wfs.AccumulatedPapers, func(p research.ScoredPaper) bool { return irr[p.ID] })
	irrelevant = slices.DeleteFunc(irrelevant, func(p research.ScoredPaper) bool { return rel[p.ID] })
	have := map[string]bool{}
	for _, p := range irrelevant {
		have[p.ID] = true
	}
	for _, id := range fb.MarkedIrrelevant {
		if paper, ok := coll.Paper(id); ok && !have[id] {
			have[id] = true
			irrelevant = append(irrelevant, paper)
		}
	}
	if irrelevant == nil {
		irrelevant = []research.ScoredPaper{}
	}
	wfs.PaperNotes = withPaperNotes(wfs.PaperNotes, fb.PaperNotes)
	return wfs, irrelevant
}

// withPaperNotes returns notes updated with a review's notes: a paper keeps its
// latest note across iterations, and an empty note clears it. The result
// is a new map, so the state read from the store is never changed in place.
func withPaperNotes(notes, update map[string]string) map[string]string {
	if len(update) == 0 {
		return notes
	}
	out := make(map[string]string, len(notes)+len(update))
	maps.Copy(out, notes)
	for id, note := range update {
		if note = strings.TrimSpace(note); note == "" {
			delete(out, id)
		} else {
			out[id] = note
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// missingFold lists the terms of a that b lacks, ignoring case and spacing.
func missingFold(a, b []string) []string {
	var out []string
	for _, t := range a {
		if !slices.ContainsFunc(b, func(u string) bool { return sameTerm(t, u) }) {
			out = append(out, t)
		}
	}
	return out
}

func sameTerm(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// canonical is a query's text in canonical form ("" when it does not
// parse), so a query the filters leave as it was keeps the text the
// researcher wrote.
func canonical(text string) string {
	if a, err := query.Parse(text); err == nil {
		return a.String()
	}
	return ""
}

// withoutAlternatives drops terms from the OR groups of ast that have
// other alternatives: a learned expansion term the researcher removed
// leaves the expansion query with the rest. A term alone in its clause
// is a concept or a term the researcher wrote, and stays.
func withoutAlternatives(ast query.AST, terms []string) query.AST {
	if len(terms) == 0 {
		return ast
	}
	out := query.AST{Clauses: slices.Clone(ast.Clauses)}
	for i, c := range out.Clauses {
		if c.Not || len(c.Any) < 2 {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(c.Any), func(t query.Term) bool {
			return slices.ContainsFunc(terms, func(x string) bool { return sameTerm(x, t.Text) })
		})
		if len(kept) > 0 {
			out.Clauses[i].Any = kept
		}
	}
	return out
}

// withoutExclusions drops the NOT clauses that exclude one of terms (a
// builder writes an exclusion as NOT (term OR its synonyms)).
func withoutExclusions(ast query.AST, terms []string) query.AST {
	if len(terms) == 0 {
		return ast
	}
	out := query.AST{}
	for _, c := range ast.Clauses {
		if c.Not && len(c.Any) > 0 && slices.ContainsFunc(terms, func(t string) bool { return sameTerm(t, c.Any[0].Text) }) {
			continue
		}
		out.Clauses = append(out.Clauses, c)
	}
	return out
}
