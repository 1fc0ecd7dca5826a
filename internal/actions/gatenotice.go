package actions

import (
	"context"
	"fmt"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/notify"
)

// GateNotifier sends the notices of gates' notify (flow.Notifier) through
// the same sender as notify actions: one message per notice, posted to
// every webhook target and mailed to every e-mail target.
type GateNotifier struct {
	// Send sends a message (notify.Sender.Send); nil refuses notices.
	Send func(ctx context.Context, n notify.Notice) error
	// PublicURL, when set, makes the message link to the run's page.
	PublicURL string
}

var _ flow.Notifier = GateNotifier{}

// Notify sends n to its targets; a failure of any is returned (joined by
// the sender), and the engine records it with the notice.
func (g GateNotifier) Notify(ctx context.Context, n flow.Notice) error {
	if g.Send == nil {
		return fmt.Errorf("notify: notices are not configured")
	}
	m := GateMessage(n, g.PublicURL)
	for _, t := range n.Targets {
		if t.Email != "" {
			m.Email = append(m.Email, t.Email)
		}
	}
	var errs []string
	for _, t := range n.Targets {
		if t.Webhook == "" {
			continue
		}
		one := m
		one.Webhook, one.Email = t.Webhook, nil
		if err := g.Send(ctx, one); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(m.Email) > 0 {
		if err := g.Send(ctx, notify.Notice{Email: m.Email, Subject: m.Subject, Text: m.Text}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// GateMessage is the subject and text a gate notice is sent as.
func GateMessage(n flow.Notice, publicURL string) notify.Notice {
	where := fmt.Sprintf("gate %q of run %s (%s)", n.Stage, n.RunID, n.Workflow)
	due := n.Due.UTC().Format("2006-01-02 15:04 UTC")
	var text string
	switch n.Event {
	case engine.NoticeEntered:
		text = "Waiting for a decision at " + where
		if !n.Due.IsZero() {
			text += "; it decides itself at " + due
		}
	case engine.NoticeExtended:
		text = fmt.Sprintf("Nobody has decided at %s yet: extended to %s (extension %d)", where, due, n.Extensions)
	case engine.NoticeTimedOut:
		text = fmt.Sprintf("Nobody decided at %s by %s: %s", where, due, n.Outcome)
	default:
		text = fmt.Sprintf("%s at %s", n.Event, where)
	}
	if publicURL != "" {
		text += "\n" + strings.TrimRight(publicURL, "/") + "/runs/" + n.RunID
	}
	return notify.Notice{Subject: "Quarry: " + where, Text: text}
}
