package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestShowMoreAppendsTheNextPage is item 7 of issue 16 in the browser:
// with the limit per source below what the test library matches, the
// review offers "Show more results"; clicking it fetches the next page,
// whose papers appear in a group of their own below the ones being
// marked, can be marked like them (the mark is saved and survives a
// reload), and the mark and the feedback typed before the click stay. Once every source
// has shown what it found, the button is gone. On the old code there is
// no such button.
func TestShowMoreAppendsTheNextPage(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, page.GetByLabel("Max results per source").Fill("2"))
	require.NoError(t, button(page, "Save edits & continue").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))

	papers := page.GetByTestId("paper")
	before, err := papers.Count()
	require.NoError(t, err)
	first, err := papers.First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	saved := func(pid string) {
		t.Helper()
		require.NoError(t, expect.Locator(page.Locator(`[data-testid="paper"][data-paper-id="`+pid+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	}
	require.NoError(t, markRadio(page, first, "Relevant").Check())
	saved(first)
	feedback := page.GetByLabel("Feedback for the next iteration")
	require.NoError(t, feedback.Fill("more on naps"))

	require.NoError(t, page.GetByTestId("show-more").Click())
	more := page.Locator(`[data-testid="paper-group"]`).Filter(playwright.LocatorFilterOptions{Has: page.GetByText("More results: page 2")})
	require.NoError(t, expect.Locator(more).ToBeVisible(afterWork()))
	after, err := papers.Count()
	require.NoError(t, err)
	require.Greater(t, after, before, "the next page's papers are appended")
	require.NoError(t, expect.Locator(markRadio(page, first, "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(feedback).ToHaveValue("more on naps"), "the feedback typed before is not lost")

	added, err := more.GetByTestId("paper").First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	require.NoError(t, markRadio(page, added, "Irrelevant").Check())
	saved(added)
	_, err = page.Reload()
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
	require.NoError(t, expect.Locator(markRadio(page, added, "Irrelevant")).ToBeChecked())
	require.NoError(t, expect.Locator(markRadio(page, first, "Relevant")).ToBeChecked())

	// Every page, until the sources have shown all they found.
	for range 10 {
		n, err := page.GetByTestId("show-more").Count()
		require.NoError(t, err)
		if n == 0 {
			break
		}
		action, err := page.GetByTestId("show-more").GetAttribute("formaction")
		require.NoError(t, err)
		require.NoError(t, page.GetByTestId("show-more").Click())
		// The review comes back as a new checkpoint, so its button (if
		// any) posts elsewhere.
		require.NoError(t, expect.Locator(page.Locator(`[data-testid="show-more"][formaction="`+action+`"]`)).ToHaveCount(0, playwright.LocatorAssertionsToHaveCountOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))
		require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	}
	require.NoError(t, expect.Locator(page.GetByTestId("show-more")).ToHaveCount(0))
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="source-result"][data-source="library"]`)).ToHaveText(regexp.MustCompile(`^library: \d+ found\s*$`)))
}
