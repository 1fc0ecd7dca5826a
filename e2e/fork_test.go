package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestForkFromTheCompletedPage: a finished run's page lists its decisions,
// each with "Fork from here"; forking from the review starts a new run at
// that review (a new address, asked anew), and the first run stays
// completed.
func TestForkFromTheCompletedPage(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	first := page.URL()
	require.NoError(t, button(page, "Approve and finish").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("completed",
		playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))

	fork := page.GetByTestId("decision").GetByTestId("fork")
	require.NoError(t, expect.Locator(fork.First()).ToBeVisible())
	require.NoError(t, fork.First().Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	require.NotEqual(t, first, page.URL(), "the fork is a run of its own")

	_, err := page.Goto(first)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("completed"))
}
