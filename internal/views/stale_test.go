package views_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

// TestRunStatusStale: the banner of an out-of-date page names who decided,
// how and when (or says the run moved on), and who made the newest decision
// since; says nothing typed is saved; links to the current run. The line
// keeps polling, with what the page was drawn with and what the banner
// shows, until the run is complete.
func TestRunStatusStale(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 14, 2, 5, 0, time.UTC)
	later := views.StaleDecision{By: "Bob", Action: "approve", Kind: "result_review", At: at.Add(time.Minute)}
	tests := []struct {
		name     string
		notice   views.StaleNotice
		latest   views.StaleDecision
		want     string
		wantPoll string
	}{
		{"Decided", views.StaleNotice{By: "Grace", Action: "approve", At: at, Status: "running"}, views.StaleDecision{},
			"Grace decided this checkpoint (approve) at 2025-03-04 14:02:05 UTC; the run is now running.",
			"/runs/r1/status?cp=c1&s=waiting&banner=1&seen_cp=c2&seen_s=running"},
		{"DecidedThenLater", views.StaleNotice{By: "Grace", Action: "approve", At: at, Status: "completed"}, later,
			"Grace decided this checkpoint (approve) at 2025-03-04 14:02:05 UTC. Since then, Bob decided the result review checkpoint (approve) at 2025-03-04 14:03:05 UTC; the run is now completed.",
			""},
		{"NotDecided", views.StaleNotice{Status: "canceled"}, views.StaleDecision{}, "The run has moved on: it is now canceled.", ""},
		{"NotDecidedThenLater", views.StaleNotice{Status: "waiting"}, later,
			"The run has moved on: Bob decided the result review checkpoint (approve) at 2025-03-04 14:03:05 UTC; it is now waiting.",
			"/runs/r1/status?cp=c1&s=waiting&banner=1&seen_cp=c2&seen_s=waiting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			l := views.StaleLine{
				Status: views.RunStatus{ID: "r1", Status: tt.notice.Status, Iteration: 1, CheckpointID: "c2"},
				Notice: tt.notice, Latest: tt.latest, DrawnCheckpoint: "c1", DrawnStatus: "waiting",
			}
			require.NoError(t, views.RunStatusStale(l).Render(context.Background(), &buf))
			doc, err := goquery.NewDocumentFromReader(&buf)
			require.NoError(t, err)
			status := doc.Find(`#run-status`)
			require.Equal(t, tt.wantPoll, status.AttrOr("hx-get", ""))
			banner := status.Find(`[data-testid="stale-banner"]`)
			require.Equal(t, "alert", banner.AttrOr("role", ""))
			require.Equal(t, tt.want, strings.Join(strings.Fields(banner.Find(`[data-testid="stale-message"]`).Text()), " "))
			require.Contains(t, banner.Text(), "not saved")
			link := banner.Find(`a[data-testid="stale-reload"]`)
			require.Equal(t, "/runs/r1", link.AttrOr("href", ""))
			require.Equal(t, "show the current run", link.Text())
			require.NotEmpty(t, link.AttrOr("id", ""), "htmx gives focus back by id when the banner is redrawn")
		})
	}
}

// TestRunStatusFragmentSaysItHoldsInput: the poll of a page showing a
// losing submit's values carries typed=1, so the server answers with a
// banner, not a reload. (An edited form is added by static/app.js.)
func TestRunStatusFragmentSaysItHoldsInput(t *testing.T) {
	t.Parallel()
	for _, holds := range []bool{true, false} {
		var buf bytes.Buffer
		s := views.RunStatus{ID: "r1", Status: "waiting", CheckpointID: "c1", HoldsInput: holds}
		require.NoError(t, views.RunStatusFragment(s).Render(context.Background(), &buf))
		doc, err := goquery.NewDocumentFromReader(&buf)
		require.NoError(t, err)
		want := "/runs/r1/status?cp=c1&s=waiting"
		if holds {
			want += "&typed=1"
		}
		require.Equal(t, want, doc.Find(`#run-status`).AttrOr("hx-get", ""))
	}
}
