package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgressPlotFollowsMarks: the review shows the screening progress
// plot and both stopping suggestions, each naming its rule; marking
// papers redraws the plot and its counts without a reload, and the plot
// image loads.
func TestProgressPlotFollowsMarks(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	panel := page.GetByTestId("screening-progress")
	require.NoError(t, expect.Locator(panel.GetByTestId("progress-counts")).ToHaveText("0 screened · 0 relevant"))
	hints := panel.GetByTestId("stopping-suggestion")
	require.NoError(t, expect.Locator(hints).ToHaveCount(2))
	require.NoError(t, expect.Locator(hints.First()).ToContainText("Stopping suggestion (knee method, Cormack & Grossman 2016): does not apply yet"))
	require.NoError(t, expect.Locator(hints.Nth(1)).ToContainText("Stopping suggestion (no relevant paper in the last 50 screened)"))

	papers := page.GetByTestId("paper")
	for i, mark := range []string{"Relevant", "Irrelevant"} {
		id, err := papers.Nth(i).GetAttribute("data-paper-id")
		require.NoError(t, err)
		require.NoError(t, markRadio(page, id, mark).Check())
	}
	require.NoError(t, expect.Locator(panel.GetByTestId("progress-counts")).ToContainText("2 screened · 1 relevant", afterWorkText()))
	plot := panel.GetByTestId("progress-plot")
	require.NoError(t, expect.Locator(plot).ToHaveAttribute("src", "/runs/"+runIDOf(t, page)+"/progress.svg?v=2"))
	require.NoError(t, expect.Locator(plot).ToHaveAttribute("alt", "Relevant papers found against papers screened: 2 papers screened, 1 relevant."))
	require.NoError(t, expect.Locator(plot).ToHaveJSProperty("complete", true))
	width, err := plot.Evaluate("img => img.naturalWidth", nil)
	require.NoError(t, err)
	require.EqualValues(t, 640, width, "the SVG loaded")
}
