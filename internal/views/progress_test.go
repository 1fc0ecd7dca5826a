package views_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/views"
)

// TestProgressPanel: the plot is an image whose address carries the
// marks' version and whose alt is its summary; at a review each stopping
// suggestion names its rule and the panel redraws on "marks-saved"; on
// the completed page it does neither.
func TestProgressPanel(t *testing.T) {
	t.Parallel()
	p := views.Screening{RunID: "r1", Version: 7, Screened: 5, Relevant: 2, Summary: "Relevant papers found against papers screened: 5 papers screened, 2 relevant.",
		Description: "… Steps: 1 relevant after 1 screened; 2 relevant after 4 screened.",
		Suggestions: []research.Suggestion{
			{Rule: research.RuleKnee, Advice: "does not apply yet: …"},
			{Rule: research.RuleWindow(2), Applies: true, Stop: false, Advice: "keep screening: …"},
		}}

	doc := render(t, views.ProgressPanel(p, true))
	img := doc.Find(`img[data-testid="progress-plot"]`)
	require.Equal(t, "/runs/r1/progress.svg?v=7", img.AttrOr("src", ""))
	require.Equal(t, p.Summary, img.AttrOr("alt", ""))
	require.Equal(t, "/runs/r1/progress.svg", doc.Find(`[data-testid="progress-download"]`).AttrOr("href", ""))
	require.Equal(t, p.Description, doc.Find(`[data-testid="progress-description"]`).Text())
	hints := doc.Find(`[data-testid="stopping-suggestion"]`)
	require.Equal(t, 2, hints.Length())
	require.Equal(t, "Stopping suggestion (knee method, Cormack & Grossman 2016): does not apply yet: …", strings.Join(strings.Fields(hints.Eq(0).Text()), " "))
	require.Equal(t, "true", hints.Eq(1).AttrOr("data-applies", ""))
	require.Equal(t, "false", hints.Eq(1).AttrOr("data-stop", ""))
	panel := doc.Find(`#screening-progress`)
	require.Equal(t, "/runs/r1", panel.AttrOr("hx-get", ""))
	require.Equal(t, "marks-saved from:body", panel.AttrOr("hx-trigger", ""))

	doc = render(t, views.ProgressPanel(p, false))
	require.Zero(t, doc.Find(`[data-testid="stopping-suggestion"]`).Length(), "nothing to stop once complete")
	_, redraws := doc.Find(`#screening-progress`).Attr("hx-get")
	require.False(t, redraws)
}
