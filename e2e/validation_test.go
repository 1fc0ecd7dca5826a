package e2e

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestStrategyErrorsAllAtOnce (issue 16, defect 4): a strategy edit with
// an unparseable query 1, an empty query 2 and years 2020 → 2001 gets one
// answer naming all three problems, each next to its field, the field
// marked aria-invalid and described by its error, focus on the first, the
// values kept. The address bar shows the run's page, not the form's
// POST-only action, so reloading shows the run instead of a 405. On the old
// code query 1's error came only once the others were fixed, the fields
// carried no aria attributes and a reload gave 405.
func TestStrategyErrorsAllAtOnce(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	runPath := "/runs/" + runIDOf(t, page)
	exact := playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}

	require.NoError(t, page.GetByLabel("Query 1", exact).Fill("sleep^2 deprivation[tiab]"))
	require.NoError(t, page.GetByLabel("Query 2", exact).Fill(""))
	require.NoError(t, page.GetByLabel("Year from").Fill("2020"))
	require.NoError(t, page.GetByLabel("Year to").Fill("2001"))
	require.NoError(t, button(page, "Save edits & continue").Click())

	fields := []struct{ key, label string }{
		{"queries[0].text", "Query 1"},
		{"queries[1].text", "Query 2"},
		{"year_range.from", "Year from"},
	}
	for _, f := range fields {
		msg := page.Locator(`[data-testid="field-error"][data-field="` + f.key + `"]`)
		require.NoError(t, expect.Locator(msg).ToBeVisible(), f.key)
		id, err := msg.GetAttribute("id")
		require.NoError(t, err)
		require.NotEmpty(t, id, "the error of %s has an id to be pointed at", f.key)
		input := page.GetByLabel(f.label, exact)
		require.NoError(t, expect.Locator(input).ToHaveAttribute("aria-invalid", "true"), f.key)
		require.NoError(t, expect.Locator(input).ToHaveAttribute("aria-describedby", regexp.MustCompile(`(^| )`+regexp.QuoteMeta(id)+`( |$)`)), f.key)
	}
	require.NoError(t, expect.Locator(page.GetByLabel("Query 1", exact)).ToBeFocused())
	require.NoError(t, expect.Locator(page.GetByLabel("Query 1", exact)).ToHaveValue("sleep^2 deprivation[tiab]"))
	require.NoError(t, expect.Locator(page.GetByLabel("Year from")).ToHaveValue("2020"))
	require.NoError(t, expect.Locator(page.GetByLabel("Year to")).ToHaveValue("2001"))
	require.NoError(t, expect.Locator(page.GetByLabel("Year to")).Not().ToHaveAttribute("aria-invalid", "true"))

	// The address bar never shows the POST-only action.
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(runPath)+`$`)))
	res, err := page.Reload()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Status())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())

	// Opening the action's address (a bookmark, a history entry from a
	// browser without JavaScript) leads to the run's page too.
	action, err := page.GetByTestId("strategy-form").GetAttribute("action")
	require.NoError(t, err)
	res, err = page.Goto(action)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Status())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(runPath)+`$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())
}
