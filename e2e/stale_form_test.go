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
