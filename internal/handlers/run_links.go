package handlers

import (
	"context"

	"quarry/internal/engine"
	"quarry/internal/views"
)

// runLinks reads what links run id to other runs (the run that started
// it, the runs it started) and its action attempts, for its page and GET
// /api/runs/:id. Children are listed without their status (see cachedRun).
func runLinks(ctx context.Context, rs RunStore, id string) (*engine.Parent, []engine.ChildLink, []engine.ActionRecord, error) {
	parent, err := rs.RunParent(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	children, err := rs.RunChildren(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := range children {
		children[i].Status = ""
	}
	actions, err := rs.RunActions(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	return parent, children, actions, nil
}

// linksView is the run page's related runs and actions.
func linksView(parent *engine.Parent, children []engine.ChildLink, fork *engine.ForkOrigin, actions []engine.ActionRecord) views.RunLinks {
	var l views.RunLinks
	if parent != nil {
		l.Parent = &views.RunLink{RunID: parent.RunID, Stage: parent.Step, Wait: parent.Wait}
	}
	if fork != nil {
		l.ForkedFrom = &views.RunLink{RunID: fork.Run}
	}
	for _, c := range children {
		l.Children = append(l.Children, views.RunLink{RunID: c.RunID, Workflow: c.Workflow, Stage: c.Step, Wait: c.Wait})
	}
	for _, a := range actions {
		l.Actions = append(l.Actions, views.ActionRow{Stage: a.Stage, Action: a.Action, Attempt: a.Attempt, Status: a.Status,
			Error: a.Error, At: a.At.UTC().Format("2006-01-02 15:04:05 UTC")})
	}
	return l
}
