package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestMarkRestOfPageAndUndo (issue 16, item 8): the review shows a page of
// at most ten papers when asked through its controls, which put the choice in the
// address; "Mark the rest of this page irrelevant" asks first, then marks
// every paper of the page not screened yet irrelevant (the one marked
// relevant keeps its mark), and Undo puts them back as they were. The
// page is swapped in place: no navigation, the address keeps the list.
func TestMarkRestOfPageAndUndo(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")

	_, err := page.GetByTestId("list-per-page").SelectOption(playwright.SelectOptionValues{Values: &[]string{"10"}})
	require.NoError(t, err)
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+\?.*per_page=10`)))
	papers := page.GetByTestId("paper")
	require.NoError(t, expect.Locator(page.GetByTestId("list-position").First()).ToContainText("Papers 1–"))
	n, err := papers.Count()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 3)
	require.LessOrEqual(t, n, 10)
	restText := itoa(n-1) + " papers"

	first, err := papers.First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	require.NoError(t, markRadio(page, first, "Relevant").Check())
	require.NoError(t, expect.Locator(page.Locator(`[data-paper-id="`+first+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	// No reload: what is marked is what is unscreened when the button is
	// pressed, the paper just marked left alone.
	rest := page.GetByTestId("mark-rest")
	require.NoError(t, expect.Locator(rest).ToHaveText("Mark the rest of this page irrelevant"))

	var asked string
	page.OnDialog(func(d playwright.Dialog) {
		asked = d.Message()
		require.NoError(t, d.Accept())
	})
	require.NoError(t, rest.Click())
	require.NoError(t, expect.Locator(page.GetByTestId("rest-undo")).ToContainText("Marked "+restText+" irrelevant."))
	require.Contains(t, asked, "Mark every paper on this page not screened yet (no mark, or unsure) irrelevant?")
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`per_page=10`)))
	ids, err := papers.EvaluateAll(`els => els.map(e => e.dataset.paperId)`)
	require.NoError(t, err)
	require.Len(t, ids, n)
	for _, id := range ids.([]any)[1:] {
		require.NoError(t, expect.Locator(markRadio(page, id.(string), "Irrelevant")).ToBeChecked())
	}
	require.NoError(t, expect.Locator(markRadio(page, first, "Relevant")).ToBeChecked())

	require.NoError(t, page.GetByTestId("rest-undo-button").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("rest-undo")).ToHaveCount(0))
	for _, id := range ids.([]any)[1:] {
		require.NoError(t, expect.Locator(markRadio(page, id.(string), "Unsure")).ToBeChecked())
	}
	require.NoError(t, expect.Locator(markRadio(page, first, "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(rest).ToBeVisible(), "the rest can be marked again")

	// Reloaded, the page shows the stored marks, not what the page held.
	_, err = page.Reload()
	require.NoError(t, err)
	require.NoError(t, expect.Locator(markRadio(page, first, "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(markRadio(page, ids.([]any)[1].(string), "Unsure")).ToBeChecked())
}
