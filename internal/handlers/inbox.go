package handlers

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
	"quarry/internal/views"
)

// Inbox serves GET /inbox: what waits for the person.
type Inbox struct {
	people *people
	runs   RunStore
	auth   *authenticator
}

// inboxRuns bounds how many waiting runs the inbox looks through.
const inboxRuns = store.MaxListLimit

// Show handles GET /inbox: the checkpoints waiting in the person's
// projects that they may act on and have not yet: a gate whose approval
// names them, asks for a role they hold and does not refuse them as the
// run's starter, and which they have not voted at; and every other
// checkpoint of a project where their role lets them decide.
func (h *Inbox) Show(c echo.Context) error {
	ctx := c.Request().Context()
	id := identityOf(c)
	name := h.people.name(c)
	roles := map[string]access.Role{}
	var projects []string
	if id.account != nil && !id.account.Admin {
		mine, err := h.auth.accounts.AccountProjects(ctx, id.account.ID)
		if err != nil {
			return err
		}
		projects = []string{}
		for _, p := range mine {
			roles[p.ID] = access.Role(p.Role)
			if access.Role(p.Role).Can(access.Decide) {
				projects = append(projects, p.ID)
			}
		}
	}
	list, err := h.runs.ListRuns(ctx, store.RunFilter{Status: engine.StatusWaiting, TextParam: paramQuestion, Limit: inboxRuns, Projects: projects})
	if err != nil {
		return err
	}
	d := views.InboxData{Page: h.people.page(c), Looked: len(list.Runs), Total: list.Total}
	for _, item := range list.Runs {
		// The list carries what the inbox needs of a run; only its
		// pending checkpoint is read, not the run's state.
		if item.CheckpointID == "" {
			continue
		}
		cp, dec, err := h.runs.Checkpoint(ctx, item.CheckpointID)
		if err != nil {
			return err
		}
		if dec != nil {
			continue
		}
		entry := views.InboxItem{RunID: item.ID, Title: cmp.Or(item.Text, item.Workflow), Workflow: item.Workflow, Stage: cp.Step, Kind: string(cp.Kind), Since: cp.Timestamp}
		if p, err := engine.PayloadAs[flow.GatePayload](cp); err == nil && p.Approval != nil {
			ok, err := h.mayVote(c, item, p.Approval, name, roles[item.Project], id)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			entry.Vote = true
		}
		d.Items = append(d.Items, entry)
	}
	return render(c, http.StatusOK, views.InboxPage(d))
}

// mayVote says whether name may still vote at a gate of run: named or of
// the role asked for, not refused as its starter, and not voted yet.
func (h *Inbox) mayVote(c echo.Context, run store.RunListItem, a *flow.GateApproval, name string, role access.Role, id identity) (bool, error) {
	switch {
	case len(a.Voters) > 0 && !slices.ContainsFunc(a.Voters, func(v string) bool { return strings.EqualFold(v, name) }):
		return false, nil
	case a.NoSelf && strings.EqualFold(run.StartedBy, name):
		return false, nil
	case a.From != "" && run.Project != "" && !id.open:
		if id.account != nil && id.account.Admin && role == "" {
			r, err := h.auth.accounts.Role(c.Request().Context(), run.Project, id.account.ID)
			if err != nil {
				return false, err
			}
			role = access.Role(r)
		}
		if !role.AtLeast(access.Role(a.From)) {
			return false, nil
		}
	}
	votes, err := h.runs.Votes(c.Request().Context(), run.ID)
	if err != nil {
		return false, err
	}
	return !slices.ContainsFunc(votes, func(v engine.Vote) bool {
		return v.CheckpointID == run.CheckpointID && strings.EqualFold(v.Voter, name)
	}), nil
}
