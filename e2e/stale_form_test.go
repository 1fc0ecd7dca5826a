package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestStaleReviewFormKeepsTeammatesMark (issue 16, "marks are never
// lost"): Grace's review page never hears of Ada's mark (its stream's
// mark messages are dropped), so it still shows Ada's paper as unsure when Grace marks
// another paper and iterates. The whole-form submit used to send that
// stale "unsure" over Ada's mark; now only what Grace changed is saved,
// and the next iteration shows both marks.
func TestStaleReviewFormKeepsTeammatesMark(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	other := teammateWith(t, page, expect, "Grace", func(bctx playwright.BrowserContext) {
		// Her page's stream drops every mark message, as a page drawn
		// just before a mark (or whose stream is reconnecting) misses it.
		require.NoError(t, bctx.AddInitScript(playwright.Script{Content: playwright.String(`(() => {
			const add = EventSource.prototype.addEventListener;
			EventSource.prototype.addEventListener = function (type, fn, opts) {
				if (type === "mark") return;
				return add.call(this, type, fn, opts);
			};
		})();`)}))
	})
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible())

	papers := page.GetByTestId("paper")
	ada, err := papers.First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	grace, err := papers.Nth(1).GetAttribute("data-paper-id")
	require.NoError(t, err)

	require.NoError(t, markRadio(page, ada, "Relevant").Check())
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="paper"][data-paper-id="`+ada+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	// Grace's page has not heard: it still shows the paper unsure.
	require.NoError(t, expect.Locator(markRadio(other, ada, "Unsure")).ToBeChecked())

	require.NoError(t, markRadio(other, grace, "Irrelevant").Check())
	require.NoError(t, expect.Locator(other.Locator(`[data-testid="paper"][data-paper-id="`+grace+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	require.NoError(t, button(other, "Iterate with this feedback").Click())
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToContainText("iteration 2", afterWorkText()))
	require.NoError(t, expect.Locator(markRadio(other, ada, "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(markRadio(other, grace, "Irrelevant")).ToBeChecked())
}

// TestApproveSwapsInTheReview: the strategy form is boosted, so approving
// it swaps in the review without a page load (about 100 ms sooner on the
// bench), at the run's own address, with a working page: its stream and
// its per-click mark saves.
func TestApproveSwapsInTheReview(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	runURL := page.URL()
	markPage(t, page)
	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	notReloaded(t, page)
	require.Equal(t, runURL, page.URL())
	id, err := page.GetByTestId("paper").First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	require.NoError(t, markRadio(page, id, "Relevant").Check())
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="paper"][data-paper-id="`+id+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	_, err = page.Reload()
	require.NoError(t, err)
	require.NoError(t, expect.Locator(markRadio(page, id, "Relevant")).ToBeChecked())
}
