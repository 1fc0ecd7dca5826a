// Package prisma draws a run's PRISMA 2020 flow diagram (Page et al.,
// BMJ 2021;372:n71): records identified per source and per attached
// file, removed before screening, presented, screened, excluded (with
// reasons where marks carry them) and included. Every number is counted
// from the run's audit trail (its recorded iterations, the papers each
// review showed, the marks), never estimated, and the diagram is plain
// SVG written here: no JavaScript, no drawing library (a handful of boxes
// and arrows in fixed columns need none, and none keeps the output's
// escaping in one place).
package prisma

import (
	"slices"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
)

// Review is one result review of the run: its iteration and the papers it
// showed for screening.
type Review struct {
	Iteration int
	PaperIDs  []string
}

// ReasonFunc says why a paper was excluded ("" when its mark carries no
// reason). It is the hook for marks with exclusion reasons (issue 16,
// item 8): until marks carry them, FromRun passes none and every
// exclusion is counted as "reason not recorded".
type ReasonFunc func(paperID string) string

// Input is the part of a run's audit trail the diagram counts.
type Input struct {
	// History is the run's recorded iterations; only those searched and
	// reviewed (see Reviews) are counted, so a search whose review never
	// came adds no records that were never presented.
	History []research.IterationRecord
	// Reviews are the papers each review showed.
	Reviews []Review
	// Relevant and Irrelevant are the papers whose latest mark is
	// relevant or irrelevant; a paper in both counts as irrelevant, as
	// the final collection leaves it out.
	Relevant, Irrelevant []string
	// ExclusionReason, when set, gives each excluded paper's reason.
	ExclusionReason ReasonFunc
}

// Count is one labelled number of a box.
type Count struct {
	Label string
	N     int
}

// Flow is every number of the diagram. Its boxes add up: Identified −
// NoTitle − Duplicates − Repeats = Presented, Presented − NotScreened =
// Screened, Screened − Excluded = Included.
type Flow struct {
	// Iterations is how many searched iterations reached a review.
	Iterations int
	// Sources are the records identified per searched source and Files
	// per attached file, in the order they first appear; Identified is
	// their sum.
	Sources, Files []Count
	Identified     int
	// NoTitle are records a source returned that could not be shown (no
	// title), dropped before deduplication.
	NoTitle int
	// Duplicates are records merged as duplicates within a search.
	Duplicates int
	// Repeats are records a later iteration found again after an earlier
	// review had presented them.
	Repeats int
	// Presented are the distinct records the reviews showed.
	Presented int
	// NotScreened are presented records never marked relevant or
	// irrelevant.
	NotScreened int
	// Screened are presented records marked relevant or irrelevant.
	Screened int
	// Excluded are screened records marked irrelevant, and Reasons their
	// reasons with counts ("reason not recorded" for those without).
	Excluded int
	Reasons  []Count
	// Included are screened records marked relevant: the collection.
	Included int
}

// ReasonNotRecorded labels exclusions whose mark carries no reason.
const ReasonNotRecorded = "reason not recorded"

// Build counts the flow of in.
func Build(in Input) Flow {
	var f Flow
	reviewed := map[int]bool{}
	presented := map[string]bool{}
	for _, r := range in.Reviews {
		reviewed[r.Iteration] = true
		for _, id := range r.PaperIDs {
			presented[id] = true
		}
	}
	sourceN, fileN := map[string]int{}, map[string]int{}
	var sourceOrder, fileOrder []string
	var input, output int
	for _, h := range in.History {
		if !h.Searched() || !reviewed[h.Iteration] {
			continue
		}
		f.Iterations++
		for _, name := range sourceNames(h) {
			n, order := sourceN, &sourceOrder
			if strings.HasPrefix(name, research.FileSourceName(research.AttachedFile{})) {
				n, order = fileN, &fileOrder
			}
			if _, seen := n[name]; !seen {
				*order = append(*order, name)
			}
			n[name] += h.Sources[name].Count
			f.Identified += h.Sources[name].Count
		}
		input += h.Dedup.Input
		output += h.Dedup.Output
	}
	for _, name := range sourceOrder {
		f.Sources = append(f.Sources, Count{name, sourceN[name]})
	}
	for _, name := range fileOrder {
		f.Files = append(f.Files, Count{strings.TrimPrefix(name, research.FileSourceName(research.AttachedFile{})), fileN[name]})
	}
	f.Presented = len(presented)
	// Runs recorded before the dedup stats were kept have none: their
	// records are taken as all presented once.
	if input == 0 && output == 0 {
		input, output = f.Identified, f.Identified
	}
	f.NoTitle = max(0, f.Identified-input)
	f.Duplicates = max(0, input-output)
	f.Repeats = max(0, output-f.Presented)

	irrelevant := map[string]bool{}
	for _, id := range in.Irrelevant {
		if presented[id] {
			irrelevant[id] = true
		}
	}
	relevant := map[string]bool{}
	for _, id := range in.Relevant {
		if presented[id] && !irrelevant[id] {
			relevant[id] = true
		}
	}
	f.Excluded, f.Included = len(irrelevant), len(relevant)
	f.Screened = f.Excluded + f.Included
	f.NotScreened = f.Presented - f.Screened
	reasons := map[string]int{}
	for id := range irrelevant {
		r := ""
		if in.ExclusionReason != nil {
			r = strings.TrimSpace(in.ExclusionReason(id))
		}
		if r == "" {
			r = ReasonNotRecorded
		}
		reasons[r]++
	}
	for r, n := range reasons {
		f.Reasons = append(f.Reasons, Count{r, n})
	}
	// Most common first; "reason not recorded" last, ties by name.
	slices.SortFunc(f.Reasons, func(a, b Count) int {
		switch {
		case (a.Label == ReasonNotRecorded) != (b.Label == ReasonNotRecorded):
			if a.Label == ReasonNotRecorded {
				return 1
			}
			return -1
		case a.N != b.N:
			return b.N - a.N
		}
		return strings.Compare(a.Label, b.Label)
	})
	return f
}

// sourceNames lists an iteration's sources with a recorded result: the
// strategy's order, then any other (attached files) by name.
func sourceNames(h research.IterationRecord) []string {
	var out []string
	for _, name := range h.Strategy.Sources {
		if _, ok := h.Sources[name]; ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	var extra []string
	for name := range h.Sources {
		if !slices.Contains(out, name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// FromRun reads the diagram's input from a run's view and its
// checkpoints: the recorded iterations, the papers each result review
// showed, and the latest marks. reason is the exclusion-reason hook (nil
// until marks carry reasons).
func FromRun(v runview.View, cps []runview.Checkpoint, reason ReasonFunc) (Input, error) {
	in := Input{ExclusionReason: reason}
	for _, it := range v.History {
		in.History = append(in.History, it.IterationRecord)
	}
	for _, cd := range cps {
		if cd.Checkpoint.Kind != pipeline.KindResultReview {
			continue
		}
		p, err := engine.PayloadAs[pipeline.ResultPayload](cd.Checkpoint)
		if err != nil {
			return Input{}, err
		}
		r := Review{Iteration: cd.Checkpoint.Iteration}
		for _, paper := range p.Collection.Papers {
			r.PaperIDs = append(r.PaperIDs, paper.ID)
		}
		in.Reviews = append(in.Reviews, r)
	}
	for _, p := range v.Accumulated {
		in.Relevant = append(in.Relevant, p.ID)
	}
	for _, p := range v.MarkedIrrelevant {
		in.Irrelevant = append(in.Irrelevant, p.ID)
	}
	return in, nil
}
