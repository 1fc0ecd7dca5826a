package research

import (
	"sort"
	"strings"
)

// Dual screening: each paper of a review is screened by Reviewers people
// independently (blind: nobody sees another's mark on a paper before the
// paper has all its marks), their disagreements are resolved by a third
// person (or by either of the pair), and only agreed or resolved marks
// count for the run (feedback, the relevant papers, PRISMA).

// Who resolves a dual-screening conflict.
const (
	ResolveByThird = "third" // someone who did not screen the paper
	ResolveByPair  = "pair"  // either of the people who screened it
)

// ScreeningPlan is how a run's papers are screened.
type ScreeningPlan struct {
	// Reviewers is how many people screen each paper independently; 1
	// (or 0) is single screening, where a paper's latest mark counts.
	Reviewers int
	// Resolver is ResolveByThird or ResolveByPair.
	Resolver string
}

// Dual reports whether the plan has more than one person screen a paper.
func (p ScreeningPlan) Dual() bool { return p.Reviewers > 1 }

// Verdict states of a paper under a plan.
const (
	VerdictPending  = "pending"  // fewer than Reviewers people have marked it
	VerdictAgreed   = "agreed"   // they all gave it the same mark
	VerdictConflict = "conflict" // they disagree, and nobody has resolved it
	VerdictResolved = "resolved" // a resolution decided it
)

// Verdict is where one paper stands: each reviewer's latest own mark,
// and the mark that counts once it is agreed or resolved.
type Verdict struct {
	PaperID string
	Status  string
	// Marks are each reviewer's latest mark, by reviewer (resolutions
	// are not among them).
	Marks map[string]Mark
	// Final is the mark that counts (nil while pending or in conflict).
	Final *Mark
}

// Screen folds a run's mark events (oldest first) into each paper's
// verdict under plan, in the order papers were first marked. A reviewer's
// later mark replaces their earlier one; a resolution (Mark.Resolves)
// decides a conflict, and a later change by a reviewer that reopens the
// question (their marks no longer disagree, or now disagree differently)
// is judged afresh: the latest resolution still stands only while the
// paper is in conflict.
func Screen(plan ScreeningPlan, events []Mark) []Verdict {
	type state struct {
		marks      map[string]Mark
		at         map[string]int // event index of each reviewer's mark
		resolution *Mark
	}
	byPaper := map[string]*state{}
	var order []string
	for i, m := range events {
		s := byPaper[m.PaperID]
		if s == nil {
			s = &state{marks: map[string]Mark{}, at: map[string]int{}}
			byPaper[m.PaperID] = s
			order = append(order, m.PaperID)
		}
		if m.Resolves {
			r := m
			s.resolution = &r
			continue
		}
		k := reviewerKey(m.By)
		s.marks[k], s.at[k] = m, i
	}
	need := max(plan.Reviewers, 1)
	out := make([]Verdict, 0, len(order))
	for _, id := range order {
		s := byPaper[id]
		v := Verdict{PaperID: id, Marks: s.marks, Status: VerdictPending}
		if len(s.marks) >= need {
			first, same, last := "", true, ""
			for k, m := range s.marks {
				if first == "" {
					first = m.Mark
				}
				same = same && m.Mark == first
				if last == "" || s.at[k] > s.at[last] {
					last = k
				}
			}
			switch {
			case same:
				// The latest of the agreeing marks stands for them (its
				// note and reason).
				final := s.marks[last]
				v.Status, v.Final = VerdictAgreed, &final
			case s.resolution != nil:
				v.Status, v.Final = VerdictResolved, s.resolution
			default:
				v.Status = VerdictConflict
			}
		}
		out = append(out, v)
	}
	return out
}

// reviewerKey compares reviewers' names without case, as votes do.
func reviewerKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Counting is the marks that count for a run under plan: every paper's
// latest mark in single screening (in the order of those marks); the
// agreed or resolved mark of each paper in dual screening, pending and
// conflicting papers having none.
func Counting(plan ScreeningPlan, events []Mark) []Mark {
	out := []Mark{}
	if !plan.Dual() {
		last := map[string]int{}
		for i, m := range events {
			last[m.PaperID] = i
		}
		for i, m := range events {
			if last[m.PaperID] == i {
				out = append(out, m)
			}
		}
		return out
	}
	for _, v := range Screen(plan, events) {
		if v.Final != nil {
			out = append(out, *v.Final)
		}
	}
	return out
}

// Visible is what viewer may see of a dual-screened run's marks: their
// own latest mark of each paper, and everyone's marks (and the
// resolution) of papers whose screening is complete; another reviewer's
// mark on a paper still pending is hidden, which is what keeps the
// screening blind. Single screening hides nothing.
func Visible(plan ScreeningPlan, viewer string, events []Mark) []Mark {
	if !plan.Dual() {
		return events
	}
	complete := map[string]bool{}
	for _, v := range Screen(plan, events) {
		complete[v.PaperID] = v.Status != VerdictPending
	}
	me := reviewerKey(viewer)
	out := []Mark{}
	for _, m := range events {
		if complete[m.PaperID] || (!m.Resolves && reviewerKey(m.By) == me) {
			out = append(out, m)
		}
	}
	return out
}

// MayResolve says whether person may resolve the conflict of v under
// plan: anyone who did not screen the paper (a third person), or with
// ResolveByPair, also either of those who did.
func MayResolve(plan ScreeningPlan, v Verdict, person string) bool {
	_, screened := v.Marks[reviewerKey(person)]
	return !screened || plan.Resolver == ResolveByPair
}

// PairAgreement is the agreement of two reviewers over the papers both
// screened.
type PairAgreement struct {
	A, B string
	Agreement
}

// Agreements are Cohen's kappa and the percent agreement of every pair of
// reviewers who screened at least one paper in common, each reviewer's
// latest own mark per paper (resolutions aside), pairs in name order.
func Agreements(events []Mark) []PairAgreement {
	labels := map[string]map[string]string{} // reviewer → paper → mark
	names := map[string]string{}
	for _, m := range events {
		if m.Resolves || strings.TrimSpace(m.By) == "" {
			continue
		}
		k := reviewerKey(m.By)
		if labels[k] == nil {
			labels[k] = map[string]string{}
			names[k] = strings.TrimSpace(m.By)
		}
		labels[k][m.PaperID] = m.Mark
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []PairAgreement
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			ag := CohenKappa(labels[a], labels[b])
			if ag.Items == 0 {
				continue
			}
			out = append(out, PairAgreement{A: names[a], B: names[b], Agreement: ag})
		}
	}
	return out
}
