package handlers

import (
	"context"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// screeningMarks are the marks a dual-screened run shows viewer: the
// marks that count (agreed or resolved, research.Counting), and, when
// viewer is someone, their own latest marks of the papers still being
// screened or in conflict, so their review form keeps what they chose.
// Nobody else's mark of a paper still pending is among them: the
// screening stays blind until the paper has all its marks.
func screeningMarks(plan research.ScreeningPlan, viewer string, events []research.Mark) []research.Mark {
	out := research.Counting(plan, events)
	if viewer == "" {
		return out
	}
	counted := make(map[string]bool, len(out))
	for _, m := range out {
		counted[m.PaperID] = true
	}
	own := map[string]research.Mark{}
	var order []string
	for _, m := range events {
		if m.Resolves || counted[m.PaperID] || !strings.EqualFold(strings.TrimSpace(m.By), strings.TrimSpace(viewer)) {
			continue
		}
		if _, seen := own[m.PaperID]; !seen {
			order = append(order, m.PaperID)
		}
		own[m.PaperID] = m
	}
	for _, id := range order {
		out = append(out, own[id])
	}
	return out
}

// marksAs are run's marks as person sees them (person "" for everyone):
// its current marks, or for a dual-screened run screeningMarks.
func marksAs(ctx context.Context, runs RunStore, run engine.Run, person string) ([]research.Mark, error) {
	plan := pipeline.ScreeningPlanOf(run)
	if run.Workflow != pipeline.Name || !plan.Dual() {
		return runs.Marks(ctx, run.ID)
	}
	events, err := runs.MarkEvents(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	return screeningMarks(plan, person, events), nil
}

// decisionMarks readies the feedback of a decision at run's review and
// returns the stored marks to merge into it (pipeline.MergeMarks). In a
// dual-screened run those are the marks that count, never the decider's
// own (the feedback's are dropped), and the run does not move on while
// reviewers disagree on a paper nobody has resolved (EConflict naming how
// many). A run screened once keeps its feedback and merges its current
// marks.
func decisionMarks(ctx context.Context, runs RunStore, run engine.Run, fb research.UserFeedback) (research.UserFeedback, []research.Mark, error) {
	plan := pipeline.ScreeningPlanOf(run)
	if run.Workflow != pipeline.Name || !plan.Dual() {
		marks, err := runs.Marks(ctx, run.ID)
		return fb, marks, err
	}
	events, err := runs.MarkEvents(ctx, run.ID)
	if err != nil {
		return fb, nil, err
	}
	conflicts := 0
	for _, v := range research.Screen(plan, events) {
		if v.Status == research.VerdictConflict {
			conflicts++
		}
	}
	if conflicts > 0 {
		return fb, nil, fault.Errorf(fault.EConflict, "%s screened differently by the reviewers wait for a resolution (see /runs/%s/conflicts): the run moves on once every disagreement is resolved",
			plural(conflicts, "paper"), run.ID)
	}
	fb.MarkedRelevant, fb.MarkedIrrelevant = nil, nil
	return fb, research.Counting(plan, events), nil
}
