package views_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

// TestGateFormSaysWhenTheGateDecidesItself: the three things a pending
// timer does when it runs out, and no line without a timer.
func TestGateFormSaysWhenTheGateDecidesItself(t *testing.T) {
	t.Parallel()
	due := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		timer *views.GateTimerView
		want  string
	}{
		{&views.GateTimerView{Due: due, Default: "Approve"}, "Decides itself at 2026-03-04 09:30 UTC (default: Approve)."},
		{&views.GateTimerView{Due: due, Extensions: 1, MaxExtensions: 3}, "Extends at 2026-03-04 09:30 UTC (extension 2 of 3)."},
		{&views.GateTimerView{Due: due, Extensions: 3, MaxExtensions: 3}, "Times out at 2026-03-04 09:30 UTC."},
		{nil, ""},
	} {
		f := views.GateForm{RunID: "r", CheckpointID: "c", Stage: "signoff", Options: []views.GateOptionView{{Label: "Approve"}}, Timer: tt.timer}
		doc := render(t, views.GateCheckpoint(views.Page{}, f))
		got := doc.Find(`[data-testid="gate-timer"]`)
		if tt.timer == nil {
			require.Zero(t, got.Length())
			continue
		}
		require.Equal(t, tt.want, strings.Join(strings.Fields(got.Text()), " "))
		require.Equal(t, "2026-03-04T09:30:00Z", got.Find("time").AttrOr("datetime", ""))
	}
}
