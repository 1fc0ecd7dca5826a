// Package runview reads a run back for people and scripts: its history per
// iteration (searched or not, and why), its pending checkpoint, its papers
// and its decisions. The run page and the JSON API both show what Build
// returns, so they cannot tell two stories about the same run. It knows
// nothing of HTTP, HTML or SQL: handlers read the run and its checkpoints
// from the store and render the View.
package runview

import (
	"encoding/json"
	"slices"
	"time"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// Checkpoint is one of a run's checkpoints with its decision (nil while it
// is pending), as the store reads them.
type Checkpoint struct {
	Checkpoint engine.Checkpoint
	Decision   *engine.DecisionRecord
}

// Decision is one recorded decision, for the run's read-only history.
type Decision struct {
	// CheckpointID is the checkpoint decided (a fork starts from it).
	CheckpointID string
	Kind         engine.CheckpointKind
	Iteration    int
	Action       engine.DecisionAction
	// ShowMore is set for a review's "Show more" (pipeline.IsShowMore):
	// recorded as an edit, it decided nothing about the papers. Draft is
	// the feedback typed when it was asked, which the next review of the
	// iteration shows again.
	ShowMore bool
	Draft    string
	By       string
	At       time.Time
	Note     string
}

// Iteration is one pass of the run's loop: the recorded iteration and
// whether its strategy was searched. An iteration whose strategy was
// rejected has a result count of 0, like a search that found nothing; the
// other fields tell the two apart.
type Iteration struct {
	research.IterationRecord
	// Searched is set when the iteration's search ran, as its record says
	// (for a workflow other than search: when it reached a result review).
	Searched bool
	// NotSearchedReason says why an iteration was not searched (one of the
	// Reason constants); empty when it was.
	NotSearchedReason string
	// Done is set once the iteration's result count is final: its results
	// reached a review, or the search pipeline recorded the iteration,
	// which it does when a search's results are organised and when a
	// strategy is rejected. The run page shows a count only then.
	Done bool
	// StrategyRejected is set when the iteration's strategy was rejected
	// at the strategy checkpoint and never searched, so the page says so
	// instead of a count.
	StrategyRejected bool
}

// Reasons an iteration was not searched, as Iteration.NotSearchedReason
// (and the API's not_searched_reason) says them.
const (
	ReasonRejected   = "the strategy was rejected at the strategy checkpoint"
	ReasonNotYet     = "not searched yet"
	ReasonRunStopped = "the run ended before this iteration's search was recorded"
)

// View is a run read back with its checkpoints decoded.
type View struct {
	Run engine.Run
	// Question is the research question the run was started with.
	Question string
	// Pending is the checkpoint the run waits at (nil when it waits at none).
	Pending *engine.Checkpoint
	// LastResult is the newest result review's payload (nil before the
	// first search reached a review).
	LastResult *pipeline.ResultPayload
	// Accumulated are the papers marked relevant so far.
	Accumulated []research.ScoredPaper
	// History is one entry per iteration, in order.
	History []Iteration
	// Decisions are the recorded decisions, oldest first.
	Decisions []Decision
	// Final is the run's final collection once it ended (nil before), as
	// stored: see FinalCollection for the one to show.
	Final *research.PaperCollection
	// MarkedIrrelevant are the papers whose latest mark is irrelevant, and
	// PaperNotes the researcher's notes by paper ID (search runs only).
	MarkedIrrelevant []research.ScoredPaper
	PaperNotes       map[string]string
	// Notes are what the skills reported about how they worked, such as
	// an LLM skill falling back to its offline variant.
	Notes []research.Note
	// LLMUsage is what the run spent on language models (nil when it
	// asked none).
	LLMUsage *research.LLMUsage
	// Votes are the votes at the run's gates several people decide, by
	// gate checkpoint (set by the caller: GateVotesOf).
	Votes []GateVotes
	// Timers and Notices are the run's gate timers and the notices of
	// their events (set by the caller).
	Timers  []engine.GateTimer
	Notices []engine.Notice
}

// Build reads run and its checkpoints (oldest first) into a View: the
// strategy used per iteration (edited if edited), its result count, the
// feedback given, whether it was searched, and the papers accumulated so
// far with the last review's relevant marks merged in. For a search run
// the pipeline's own state is authoritative where it has an answer.
func Build(run engine.Run, checkpoints []Checkpoint) (View, error) {
	v := View{Run: run, Question: run.Params.String(pipeline.ParamQuestion)}
	// reviewed holds the iterations whose results reached a review.
	reviewed := map[int]bool{}
	byIter := map[int]*research.IterationRecord{}
	rec := func(i int) *research.IterationRecord {
		if r, ok := byIter[i]; ok {
			return r
		}
		byIter[i] = &research.IterationRecord{Iteration: i}
		return byIter[i]
	}
	var lastFeedback *research.UserFeedback
	for _, cd := range checkpoints {
		cp, dec := cd.Checkpoint, cd.Decision
		if cp.ID == run.CheckpointID && cp.Status == engine.CheckpointPending {
			c := cp
			v.Pending = &c
		}
		if dec != nil {
			v.Decisions = append(v.Decisions, Decision{
				CheckpointID: cp.ID, Kind: cp.Kind, Iteration: cp.Iteration, Action: dec.Action, ShowMore: cp.Kind == pipeline.KindResultReview && pipeline.IsShowMore(dec.Decision), Draft: pipeline.DraftOf(dec.Decision),
				By: dec.DecidedBy, At: dec.DecidedAt, Note: dec.Note,
			})
		}
		switch cp.Kind {
		case pipeline.KindStrategyConfirmation:
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
		case pipeline.KindResultReview:
			p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
			if err != nil {
				return v, err
			}
			v.LastResult = &p
			reviewed[cp.Iteration] = true
			r := rec(cp.Iteration)
			r.ResultCount = len(p.Collection.Papers)
			lastFeedback = nil
			// A "Show more" is no feedback: the review it asked for holds
			// the iteration's decision.
			if dec != nil && len(dec.RevisedData) > 0 && !pipeline.IsShowMore(dec.Decision) {
				var fb research.UserFeedback
				if json.Unmarshal(dec.RevisedData, &fb) == nil {
					r.Feedback = &fb
					lastFeedback = &fb
				}
			}
		}
	}
	var history []research.IterationRecord
	for i := 1; i <= run.Iteration+1; i++ {
		if r, ok := byIter[i]; ok {
			history = append(history, *r)
		}
	}
	if v.LastResult != nil {
		st := research.WorkflowState{AccumulatedPapers: slices.Clone(v.LastResult.AccumulatedPapers)}
		if lastFeedback != nil {
			for _, id := range lastFeedback.MarkedRelevant {
				if p, ok := v.LastResult.Collection.Paper(id); ok {
					st.Accumulate(p)
				}
			}
		}
		v.Accumulated = st.AccumulatedPapers
	}
	// recorded holds the iterations the search pipeline's state recorded.
	recorded := map[int]bool{}
	if run.Workflow == pipeline.Name {
		rs, err := pipeline.StateOf(run)
		if err != nil {
			return v, err
		}
		for _, h := range rs.Workflow.History {
			recorded[h.Iteration] = true
		}
		merged := slices.Clone(rs.Workflow.History)
		for _, h := range history {
			if !recorded[h.Iteration] {
				merged = append(merged, h)
			}
		}
		slices.SortStableFunc(merged, func(a, b research.IterationRecord) int { return a.Iteration - b.Iteration })
		history = merged
		if rs.Workflow.AccumulatedPapers != nil || v.Accumulated == nil {
			v.Accumulated = rs.Workflow.AccumulatedPapers
		}
		v.Final = rs.Final
		v.MarkedIrrelevant, v.PaperNotes, v.Notes = rs.MarkedIrrelevant, rs.Workflow.PaperNotes, rs.Notes
		v.LLMUsage = rs.LLMUsage
	} else {
		// A workflow file's skill stages keep their notes and language-model
		// use where the search keeps them (pipeline.SkillScope).
		var err error
		if v.Notes, v.LLMUsage, err = pipeline.NotesOf(run.State); err != nil {
			return v, err
		}
	}
	if v.Final == nil && run.IsComplete() && v.LastResult != nil {
		c := v.LastResult.Collection
		v.Final = &c
	}
	v.History = iterations(run, history, v.Decisions, recorded, reviewed)
	return v, nil
}

// iterations says of each iteration of history whether it was searched.
// For a search run, recorded holds the iterations the pipeline's state has
// recorded, which is done when the search's results are organised or when
// the strategy is rejected; an iteration not recorded is still on its way
// (or its run stopped on the way). For another workflow, reviewed holds
// the iterations that reached a result review, which only a search does.
func iterations(run engine.Run, history []research.IterationRecord, decisions []Decision, recorded, reviewed map[int]bool) []Iteration {
	// An iteration whose strategy was rejected was never searched: the
	// pipeline records it with 0 results, which must not read as a search
	// that found nothing.
	rejected := map[int]bool{}
	for _, d := range decisions {
		if d.Kind == pipeline.KindStrategyConfirmation && d.Action == engine.Reject {
			rejected[d.Iteration] = true
		}
	}
	out := make([]Iteration, 0, len(history))
	for _, h := range history {
		it := Iteration{IterationRecord: h, Searched: h.Searched(),
			Done:             reviewed[h.Iteration] || recorded[h.Iteration],
			StrategyRejected: rejected[h.Iteration] && !h.Searched()}
		if run.Workflow != pipeline.Name {
			it.Searched = it.Searched || reviewed[h.Iteration]
		}
		switch {
		case it.Searched:
		case recorded[h.Iteration]:
			it.NotSearchedReason = ReasonRejected
		case run.IsComplete():
			it.NotSearchedReason = ReasonRunStopped
		default:
			it.NotSearchedReason = ReasonNotYet
		}
		out = append(out, it)
	}
	return out
}

// SourceFound is what one source of an iteration returned against what it
// said match, with the sentence pages and the API show ("25 shown of 49
// found"), so a result cut at the limit never reads as all there is.
type SourceFound struct {
	Source string `json:"source"`
	research.Found
	Text string `json:"text"`
}

// Found says it for every source the iteration searched, in the
// strategy's order (files and others after, by name); nil before the
// search ran.
func (it Iteration) Found() []SourceFound {
	if len(it.Sources) == 0 {
		return nil
	}
	names := slices.Clone(it.Strategy.Sources)
	var extra []string
	for name := range it.Sources {
		if !slices.Contains(names, name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	var out []SourceFound
	for _, name := range append(names, extra...) {
		r, ok := it.Sources[name]
		if !ok {
			continue
		}
		f := r.Found()
		out = append(out, SourceFound{Source: name, Found: f, Text: f.String()})
	}
	return out
}

// Collection is the collection a reader of the run sees: the final one
// once the run ended, else the newest reviewed one (nil before any).
func (v View) Collection() *research.PaperCollection {
	switch {
	case v.Final != nil:
		return v.Final
	case v.LastResult != nil:
		c := v.LastResult.Collection
		return &c
	}
	return nil
}

// FinalCollection is the final collection to show once the run is
// complete (false before). Runs finalised before papers marked irrelevant
// were left out of the final collection still hold them: they are removed
// here and listed apart, from MarkedIrrelevant.
func (v View) FinalCollection() (research.PaperCollection, bool) {
	if !v.Run.IsComplete() || v.Final == nil {
		return research.PaperCollection{}, false
	}
	final := *v.Final
	irrelevant := map[string]bool{}
	for _, p := range v.MarkedIrrelevant {
		irrelevant[p.ID] = true
	}
	final.Papers = slices.DeleteFunc(slices.Clone(final.Papers), func(p research.ScoredPaper) bool { return irrelevant[p.ID] })
	return final, true
}
