package e2e

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
)

// signIn answers the first-visit name form, which every page asks first.
func signIn(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, name string) {
	t.Helper()
	require.NoError(t, expect.Locator(page.GetByTestId("name-form")).ToBeVisible())
	require.NoError(t, page.GetByLabel("Display name").Fill(name))
	require.NoError(t, page.GetByRole(*playwright.AriaRoleButton, roleName("Continue")).Click())
	require.NoError(t, expect.Locator(page.GetByTestId("name-form")).ToHaveCount(0))
}

func button(page playwright.Page, name string) playwright.Locator {
	return page.GetByRole(*playwright.AriaRoleButton, roleName(name))
}

// startRun opens the home page as name, starts a run on question with the
// default form (strategy checkpoint on) and waits for that checkpoint.
func startRun(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, name, question string) {
	t.Helper()
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, name)
	require.NoError(t, page.GetByLabel("Research question").Fill(question))
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible(afterWork()))
}

// TestWholeLoop: start → edit the strategy (add a query, change the year
// range) → continue → mark two relevant and one irrelevant → iterate → the
// second strategy reflects the feedback → approve → the completed page shows
// the two accumulated papers.
func TestWholeLoop(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, "Ada")

	require.NoError(t, page.GetByLabel("Research question").Fill("sleep and memory consolidation"))
	require.NoError(t, page.GetByLabel("Max iterations").Fill("3"))
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))

	strategy := page.GetByTestId("checkpoint-strategy")
	require.NoError(t, expect.Locator(strategy).ToBeVisible())
	rows := page.GetByTestId("query-row")
	n, err := rows.Count()
	require.NoError(t, err)
	require.NoError(t, button(page, "Add query").Click())
	require.NoError(t, expect.Locator(rows).ToHaveCount(n+1))
	require.NoError(t, page.GetByLabel("Query "+itoa(n+1), playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("memory reactivation"))
	require.NoError(t, page.GetByLabel("Year from").Fill("2011"))
	require.NoError(t, page.GetByLabel("Year to").Fill("2017"))
	require.NoError(t, button(page, "Save edits & continue").Click())

	review := page.GetByTestId("checkpoint-review")
	require.NoError(t, expect.Locator(review).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("history")).ToContainText("memory reactivation"))
	papers := page.GetByTestId("paper")
	count, err := papers.Count()
	require.NoError(t, err)
	require.GreaterOrEqual(t, count, 3)
	var marked []string
	for i, mark := range []string{"Relevant", "Relevant", "Irrelevant"} {
		p := papers.Nth(i)
		id, err := p.GetAttribute("data-paper-id")
		require.NoError(t, err)
		if mark == "Relevant" {
			marked = append(marked, id)
		}
		require.NoError(t, p.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: mark, Exact: playwright.Bool(true)}).Check())
	}
	require.NoError(t, page.GetByLabel("Feedback for the next iteration").Fill("more on reactivation"))
	require.NoError(t, button(page, "Iterate with this feedback").Click())

	// Iteration 2's strategy differs from the first (the builder used the marks).
	require.NoError(t, expect.Locator(page.GetByTestId("run-iteration")).ToHaveText("2"))
	require.NoError(t, expect.Locator(strategy).ToContainText("iteration 2"))
	require.NoError(t, expect.Locator(page.GetByTestId("accumulated-paper")).ToHaveCount(2))
	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(review).ToBeVisible())
	require.NoError(t, button(page, "Approve and finish").Click())

	require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("completed"))
	acc := page.GetByTestId("accumulated-paper")
	require.NoError(t, expect.Locator(acc).ToHaveCount(2))
	for _, id := range marked {
		require.NoError(t, expect.Locator(page.Locator(`[data-testid="accumulated-paper"][data-paper-id="`+id+`"]`)).ToHaveCount(1))
	}
	require.NoError(t, expect.Locator(page.GetByTestId("decision-by").First()).ToHaveText("Ada"))
}

// TestBadInputAndMarkup: an invalid strategy edit shows field errors with
// the values kept; a title with <script> markup renders as text.
func TestBadInputAndMarkup(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Bob", "sleep and memory consolidation")

	require.NoError(t, page.GetByLabel("Year from").Fill("2020"))
	require.NoError(t, page.GetByLabel("Year to").Fill("2001"))
	require.NoError(t, page.GetByLabel("Query 1", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(""))
	require.NoError(t, button(page, "Save edits & continue").Click())
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="field-error"][data-field="year_range.from"]`)).ToBeVisible())
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="field-error"][data-field="queries[0].text"]`)).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByLabel("Year from")).ToHaveValue("2020"))

	require.NoError(t, page.GetByLabel("Year from").Fill(""))
	require.NoError(t, page.GetByLabel("Year to").Fill(""))
	require.NoError(t, page.GetByLabel("Query 1", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("sleep memory consolidation"))
	require.NoError(t, button(page, "Save edits & continue").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
	title := page.GetByTestId("paper-title").Filter(playwright.LocatorFilterOptions{HasText: "<script>"})
	require.NoError(t, expect.Locator(title).ToHaveText(testapp.ScriptTitle))
	pwned, err := page.Evaluate(`() => window.pwned === undefined`)
	require.NoError(t, err)
	require.Equal(t, true, pwned)
}

func itoa(n int) string { return strconv.Itoa(n) }
