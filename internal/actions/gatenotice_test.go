package actions_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/actions"
	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/notify"
)

// TestGateNoticesAreSent: a gate notice is posted to each webhook target
// as Slack/Teams text saying what happened and linking the run; a target
// that fails makes Notify fail (the engine records it) without keeping
// the others from being told.
func TestGateNoticesAreSent(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body struct{ Text string }
		_ = json.Unmarshal(b, &body)
		got <- body.Text
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	sender := &notify.Sender{Hosts: []string{u.Host}}
	g := actions.GateNotifier{Send: sender.Send, PublicURL: "https://quarry.example.org/"}
	due := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	n := flow.Notice{RunID: "r1", Workflow: "signoff", Stage: "approve", Event: engine.NoticeExtended, Due: due, Extensions: 2,
		Targets: []flow.NoticeTarget{{Webhook: srv.URL + "/a"}, {Webhook: srv.URL + "/down"}, {Webhook: srv.URL + "/b"}}}
	err := g.Notify(context.Background(), n)
	require.Error(t, err, "one target failed")
	want := "Nobody has decided at gate \"approve\" of run r1 (signoff) yet: extended to 2026-12-01 09:30 UTC (extension 2)\nhttps://quarry.example.org/runs/r1"
	require.Equal(t, want, <-got)
	require.Equal(t, want, <-got, "the target after the failed one is told too")

	n.Event, n.Outcome = engine.NoticeTimedOut, `took the default "Approve"`
	n.Targets = n.Targets[:1]
	require.NoError(t, g.Notify(context.Background(), n))
	require.Contains(t, <-got, `by 2026-12-01 09:30 UTC: took the default "Approve"`)
	require.Error(t, actions.GateNotifier{}.Notify(context.Background(), n), "no sender configured")
}
