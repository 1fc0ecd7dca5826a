package pipeline

import (
	"maps"

	"quarry/internal/research"
)

// MergeMarks returns fb with the stored current marks of coll's papers that
// fb does not mention itself: a review decision uses the marks saved click
// by click, and a client that sends marks with the decision (the old way)
// still wins for the papers it names. Marks of papers outside coll are
// left out, as a decision can only mark the papers it reviews. fb itself
// is not changed.
func MergeMarks(fb research.UserFeedback, marks []research.Mark, coll research.PaperCollection) research.UserFeedback {
	named := map[string]bool{}
	for _, id := range fb.MarkedRelevant {
		named[id] = true
	}
	for _, id := range fb.MarkedIrrelevant {
		named[id] = true
	}
	out := fb
	out.MarkedRelevant = append([]string{}, fb.MarkedRelevant...)
	out.MarkedIrrelevant = append([]string{}, fb.MarkedIrrelevant...)
	out.PaperNotes = maps.Clone(fb.PaperNotes)
	for _, m := range marks {
		if _, ok := coll.Paper(m.PaperID); !ok {
			continue
		}
		if !named[m.PaperID] {
			switch m.Mark {
			case research.MarkRelevant:
				out.MarkedRelevant = append(out.MarkedRelevant, m.PaperID)
			case research.MarkIrrelevant:
				out.MarkedIrrelevant = append(out.MarkedIrrelevant, m.PaperID)
			}
		}
		if _, ok := fb.PaperNotes[m.PaperID]; !ok && m.Note != "" {
			if out.PaperNotes == nil {
				out.PaperNotes = map[string]string{}
			}
			out.PaperNotes[m.PaperID] = m.Note
		}
	}
	return out
}

// Sets are a run's papers as the completed page and the exports separate
// them: the papers marked relevant (accumulated over the iterations), the
// papers nobody screened (no mark, or unsure), and the papers marked
// irrelevant. Marks holds each paper's current mark ("" for none).
type Sets struct {
	Relevant    []research.ScoredPaper
	NotScreened []research.ScoredPaper
	Irrelevant  []research.ScoredPaper
	Marks       map[string]string
	// Notes and Reasons are each paper's current note and exclusion
	// reason.
	Notes   map[string]string
	Reasons map[string]string
}

// SetsOf separates the papers of rs — its final collection once it has
// one, else the current review list, plus the papers marked relevant or
// irrelevant in earlier iterations — by their current mark: the stored
// mark when there is one (marks, as store.Marks returns them), else what
// the run's state recorded from its decisions.
func SetsOf(rs RunState, marks []research.Mark) Sets {
	s := Sets{Marks: map[string]string{}, Notes: map[string]string{}, Reasons: map[string]string{}}
	maps.Copy(s.Notes, rs.Workflow.PaperNotes)
	current := make(map[string]research.Mark, len(marks))
	for _, m := range marks {
		current[m.PaperID] = m
	}
	state := map[string]string{}
	for _, p := range rs.Workflow.AccumulatedPapers {
		state[p.ID] = research.MarkRelevant
	}
	for _, p := range rs.MarkedIrrelevant {
		state[p.ID] = research.MarkIrrelevant
	}
	var base []research.ScoredPaper
	switch {
	case rs.Final != nil:
		base = rs.Final.Papers
	case rs.Collection != nil:
		base = rs.Collection.Papers
	}
	seen := map[string]bool{}
	for _, list := range [][]research.ScoredPaper{rs.Workflow.AccumulatedPapers, base, rs.MarkedIrrelevant} {
		for _, p := range list {
			if seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			mark, set := state[p.ID], state[p.ID]
			if m, ok := current[p.ID]; ok {
				mark = m.Mark
				if m.Mark != research.MarkUnsure {
					set = m.Mark
				}
				if m.Note != "" {
					s.Notes[p.ID] = m.Note
				} else {
					delete(s.Notes, p.ID)
				}
				if m.Reason != "" {
					s.Reasons[p.ID] = m.Reason
				}
			}
			if mark != "" {
				s.Marks[p.ID] = mark
			}
			switch set {
			case research.MarkRelevant:
				s.Relevant = append(s.Relevant, p)
			case research.MarkIrrelevant:
				s.Irrelevant = append(s.Irrelevant, p)
			default:
				s.NotScreened = append(s.NotScreened, p)
			}
		}
	}
	return s
}

// DecodeFeedback reads a review decision's revised data as the review gate
// does (strictly, every paper one of coll's): ok is false for no revised
// data, and an error says why the gate would refuse it.
func DecodeFeedback(raw []byte, coll research.PaperCollection) (research.UserFeedback, bool, error) {
	return reviewFeedback(raw, coll)
}
