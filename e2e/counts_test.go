package e2e

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCountsSayWhatTheLimitCut is defect 7 of issue 16 in the browser:
// with the limit per source below what the library holds, the review said
// "library: 2 found" as if that were all. It now says how many were shown
// of how many the source found; the completed page's history says it too
// and shows the run's PRISMA 2020 flow diagram (item 10), which loads.
// On the old code the review says "library: 2 found" and there is no
// diagram.
func TestCountsSayWhatTheLimitCut(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, page.GetByLabel("Max results per source").Fill("2"))
	require.NoError(t, button(page, "Save edits & continue").Click())

	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	shownOf := regexp.MustCompile(`^library: \d+ shown of (up to )?\d+ found\s*$`)
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="source-result"][data-source="library"]`)).ToHaveText(shownOf))

	require.NoError(t, button(page, "Approve and finish").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("history-found").First()).ToContainText(regexp.MustCompile(`library: \d+ shown of (up to )?\d+ found`)))

	img := page.GetByTestId("prisma-diagram")
	require.NoError(t, expect.Locator(img).ToBeVisible())
	require.NoError(t, expect.Locator(img).ToHaveJSProperty("complete", true))
	w, err := img.Evaluate("el => el.naturalWidth", nil)
	require.NoError(t, err)
	require.Positive(t, w, "the SVG loaded as an image")
}
