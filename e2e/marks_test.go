package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/csvfile"
)

// startRunToReview starts a run on question with the strategy checkpoint
// off and waits for the result review.
func startRunToReview(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, name, question string) {
	t.Helper()
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, name)
	require.NoError(t, page.GetByLabel("Research question").Fill(question))
	require.NoError(t, page.GetByLabel("Confirm the strategy before searching").Uncheck())
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
}

// markRadio is the radio button of one paper's mark.
func markRadio(page playwright.Page, paperID, mark string) playwright.Locator {
	return page.Locator(`[data-testid="paper"][data-paper-id="`+paperID+`"]`).
		GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: mark, Exact: playwright.Bool(true)})
}

// TestApproveAndFinishExportsOnlyRelevant is defect 1 of issue 16: with one
// paper of the review marked relevant, "Approve and finish" used to put
// every unscreened paper into the final collection and its default CSV
// export. The completed page now shows the three sets with their counts,
// and the default export holds the one relevant paper.
func TestApproveAndFinishExportsOnlyRelevant(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	papers := page.GetByTestId("paper")
	total, err := papers.Count()
	require.NoError(t, err)
	require.GreaterOrEqual(t, total, 3)
	id, err := papers.First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	title, err := papers.First().GetByTestId("paper-title").TextContent()
	require.NoError(t, err)
	require.NoError(t, markRadio(page, id, "Relevant").Check())
	require.NoError(t, button(page, "Approve and finish").Click())

	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToContainText("completed", afterWorkText()))

	body := download(t, page, page.GetByTestId("export-csv"))
	recs := readAll(t, csvfile.NewReader(strings.NewReader(string(body))))
	require.Len(t, recs, 1, "the default export is the relevant set")
	require.Equal(t, strings.TrimSpace(title), recs[0].Paper.Title)
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="final-count"][data-set="relevant"]`)).ToHaveText("1"))
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="final-count"][data-set="not_screened"]`)).ToHaveText(itoa(total-1)))
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="final-count"][data-set="irrelevant"]`)).ToHaveText("0"))
}

// TestMarkSurvivesReloadAndIteration is defect 2 of issue 16: a mark made
// in the review used to live only in the page, so a reload before
// submitting lost it, and a paper marked relevant in iteration 1 came back
// "Unsure" in iteration 2. A mark is saved the moment it is made.
func TestMarkSurvivesReloadAndIteration(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	papers := page.GetByTestId("paper")
	id, err := papers.First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	other, err := papers.Nth(1).GetAttribute("data-paper-id")
	require.NoError(t, err)
	// Wait for each save to be answered before the next action.
	saved := func(pid string) {
		t.Helper()
		require.NoError(t, expect.Locator(page.Locator(`[data-testid="paper"][data-paper-id="`+pid+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	}
	require.NoError(t, markRadio(page, id, "Relevant").Check())
	saved(id)
	require.NoError(t, markRadio(page, other, "Irrelevant").Check())
	saved(other)

	_, err = page.Reload()
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
	require.NoError(t, expect.Locator(markRadio(page, id, "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(markRadio(page, other, "Irrelevant")).ToBeChecked())

	require.NoError(t, page.GetByLabel("Feedback for the next iteration").Fill("more on consolidation"))
	require.NoError(t, button(page, "Iterate with this feedback").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("run-iteration")).ToContainText("2", afterWorkText()))
	review := page.GetByTestId("checkpoint-review")
	require.NoError(t, expect.Locator(review).ToContainText("iteration 2", afterWorkText()))
	require.NoError(t, expect.Locator(markRadio(page, id, "Relevant")).ToBeChecked())
}
