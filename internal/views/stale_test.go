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
// how and when (or says the run moved on), says nothing typed is saved,
// links to the current run, and the line no longer polls.
func TestRunStatusStale(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 14, 2, 5, 0, time.UTC)
	tests := []struct {
		name   string
		notice views.StaleNotice
		want   string
	}{
		{"Decided", views.StaleNotice{By: "Grace", Action: "approve", At: at, Status: "running"},
			"Grace decided this checkpoint (approve) at 2025-03-04 14:02:05 UTC; the run is now running."},
		{"NotDecided", views.StaleNotice{Status: "canceled"}, "The run has moved on: it is now canceled."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			s := views.RunStatus{ID: "r1", Status: tt.notice.Status, Iteration: 1, HoldsInput: true}
			require.NoError(t, views.RunStatusStale(s, tt.notice).Render(context.Background(), &buf))
			doc, err := goquery.NewDocumentFromReader(&buf)
			require.NoError(t, err)
			status := doc.Find(`#run-status`)
			_, polls := status.Attr("hx-get")
			require.False(t, polls)
			banner := status.Find(`[data-testid="stale-banner"]`)
			require.Equal(t, "alert", banner.AttrOr("role", ""))
			require.Equal(t, tt.want, strings.Join(strings.Fields(banner.Find(`[data-testid="stale-message"]`).Text()), " "))
			require.Contains(t, banner.Text(), "not saved")
			link := banner.Find(`a[data-testid="stale-reload"]`)
			require.Equal(t, "/runs/r1", link.AttrOr("href", ""))
			require.Equal(t, "show the current run", link.Text())
		})
	}
}

// TestRunStatusFragmentSaysItHoldsInput: the poll of a page holding input
// carries form=1, so the server answers with a banner, not a reload.
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
			want += "&form=1"
		}
		require.Equal(t, want, doc.Find(`#run-status`).AttrOr("hx-get", ""))
	}
}
