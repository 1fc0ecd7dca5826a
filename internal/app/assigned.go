package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/notify"
	"quarry/internal/store"
)

// notifyAssigned e-mails, when e-mail is configured (QUARRY_SMTP_ADDR),
// the people a gate asks for each time one is raised in a project's run:
// the members its approval names (voters) or whose role it asks for
// (from), but the run's starter when it refuses self-approval. It follows
// the engine's events in this process, so a gate raised by another
// process is told by that one; a failure is logged, never retried.
func (a *App) notifyAssigned(ctx context.Context, cfg Config) {
	if cfg.SMTP.Addr == "" {
		return
	}
	sender := &notify.Sender{SMTP: cfg.SMTP}
	events, stop := a.engine.Events().Subscribe("")
	a.loops.Go(func() {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-events:
				if ev.Type != engine.EventCheckpoint || ev.Kind != flow.KindGate {
					continue
				}
				if err := a.tellAssigned(ctx, sender, cfg.PublicURL, ev.RunID); err != nil {
					a.logger.Warn("app: could not e-mail the people a gate asks for", "run", ev.RunID, "err", err)
				}
			}
		}
	})
}

// tellAssigned e-mails the people run's pending gate asks for (see
// notifyAssigned) and records it in the audit log.
func (a *App) tellAssigned(ctx context.Context, sender *notify.Sender, publicURL, runID string) error {
	run, err := a.store.Run(ctx, runID)
	if err != nil || run.Project == "" || run.CheckpointID == "" {
		return err
	}
	cp, dec, err := a.store.Checkpoint(ctx, run.CheckpointID)
	if err != nil || dec != nil {
		return err
	}
	p, err := engine.PayloadAs[flow.GatePayload](cp)
	if err != nil || p.Approval == nil || (p.Approval.From == "" && len(p.Approval.Voters) == 0) {
		return nil
	}
	members, err := a.store.Members(ctx, run.Project)
	if err != nil {
		return err
	}
	to := assignedTo(*p.Approval, run.StartedBy, members)
	if len(to) == 0 {
		return nil
	}
	where := fmt.Sprintf("gate %q of run %s (%s)", p.Stage, run.ID, run.Workflow)
	text := "Your vote is asked at " + where + "."
	if publicURL != "" {
		text += "\n" + strings.TrimRight(publicURL, "/") + "/runs/" + run.ID
	}
	if err := sender.Mail(ctx, to, "Quarry: your vote at "+p.Stage, text); err != nil {
		return err
	}
	return a.store.Audit(ctx, store.AuditEntry{Action: "gate-notified", Actor: "quarry", ProjectID: run.Project, Target: run.ID + "/" + cp.ID,
		Detail: strings.Join(to, ", ")})
}

// assignedTo are the e-mail addresses of the members an approval asks for
// (named voters, or holders of its role), enabled, and not the starter
// when it refuses self-approval.
func assignedTo(a flow.GateApproval, starter string, members []store.Member) []string {
	var to []string
	for _, m := range members {
		switch {
		case m.Disabled:
		case a.NoSelf && strings.EqualFold(m.Name, starter):
		case len(a.Voters) > 0:
			if slices.ContainsFunc(a.Voters, func(v string) bool { return strings.EqualFold(v, m.Name) }) {
				to = append(to, m.Email)
			}
		case access.Role(m.Role).AtLeast(access.Role(a.From)):
			to = append(to, m.Email)
		}
	}
	return to
}
