package handlers

import (
	"context"
	"time"

	"quarry/internal/engine"
	"quarry/internal/views"
)

// recentFirings is how many firings a workflow's entry lists.
const recentFirings = 10

// TriggerJSON is one trigger of a workflow in GET /api/workflows: a
// schedule with its next due time, or a webhook with the URL to call (its
// token is shown on /workflows and by `quarry workflow trigger-token`,
// never here).
type TriggerJSON struct {
	Name     string     `json:"name"`
	Kind     string     `json:"kind"`
	Schedule string     `json:"schedule,omitempty"`
	NextDue  *time.Time `json:"next_due,omitempty"`
	URL      string     `json:"url,omitempty"`
}

// triggerURL is where a webhook trigger is called.
func triggerURL(workflow, name string) string {
	return "/api/triggers/" + workflow + "/" + name
}

// workflowTriggers are the registered workflow's triggers with their kept
// state, and its recent firings; nothing when it has none.
func (h *Workflows) workflowTriggers(ctx context.Context, name string) ([]engine.Trigger, map[string]triggerState, []engine.Firing, error) {
	if h.triggers == nil {
		return nil, nil, nil, nil
	}
	wf, err := h.registry.Get(name)
	if err != nil || len(wf.Triggers) == 0 {
		return nil, nil, nil, nil
	}
	states, err := h.triggers.TriggerStates(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	firings, err := h.triggers.Firings(ctx, name, recentFirings)
	if err != nil {
		return nil, nil, nil, err
	}
	out := make(map[string]triggerState, len(states))
	for k, v := range states {
		out[k] = triggerState{next: v.NextDue, token: v.Token}
	}
	return wf.Triggers, out, firings, nil
}

type triggerState struct {
	next  *time.Time
	token string
}

// triggersJSON is a workflow's triggers and recent firings for the API.
func (h *Workflows) triggersJSON(ctx context.Context, name string) ([]TriggerJSON, []engine.Firing, error) {
	ts, states, firings, err := h.workflowTriggers(ctx, name)
	if err != nil || len(ts) == 0 {
		return nil, nil, err
	}
	out := make([]TriggerJSON, 0, len(ts))
	for _, t := range ts {
		j := TriggerJSON{Name: t.Name, Kind: string(t.Kind), Schedule: t.Schedule, NextDue: states[t.Name].next}
		if t.Kind == engine.TriggerWebhook {
			j.URL, j.NextDue = triggerURL(t.Workflow, t.Name), nil
		}
		out = append(out, j)
	}
	return out, firings, nil
}

// triggerViews fills a workflow's entry on /workflows with its triggers
// (a webhook's token in a disclosure) and recent firings.
func (h *Workflows) triggerViews(ctx context.Context, v *views.WorkflowView) error {
	ts, states, firings, err := h.workflowTriggers(ctx, v.Name)
	if err != nil || len(ts) == 0 {
		return err
	}
	for _, t := range ts {
		tv := views.WorkflowTrigger{Name: t.Name, Kind: string(t.Kind), Schedule: t.Schedule}
		if t.Kind == engine.TriggerWebhook {
			tv.URL, tv.Token = triggerURL(t.Workflow, t.Name), states[t.Name].token
		} else if n := states[t.Name].next; n != nil {
			tv.NextDue = n.UTC().Format("2006-01-02 15:04 UTC")
		}
		v.Triggers = append(v.Triggers, tv)
	}
	for _, f := range firings {
		fv := views.WorkflowFiring{Trigger: f.Trigger, Kind: string(f.Kind), At: f.At.UTC().Format("2006-01-02 15:04:05 UTC"),
			RunID: f.RunID, Missed: f.Missed, Error: f.Error}
		v.Firings = append(v.Firings, fv)
	}
	return nil
}
