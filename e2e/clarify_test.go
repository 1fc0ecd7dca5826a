package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestClarifyThenFindings (issue 18 §6): a run started with "ask me
// first" and the quality gate on an ambiguous question asks its
// clarifying questions before any strategy; the answers (the acronym's
// reading, the group, the years) show in the strategy's intent and
// years; the strategy form lists the review's findings with their
// severity and that they block at iteration 1; approving anyway without
// a note is refused by the note field, and with a note the search runs.
func TestClarifyThenFindings(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, "Ada")
	require.NoError(t, page.GetByLabel("Research question").Fill("Does CBT reduce insomnia?"))
	require.NoError(t, page.GetByLabel("Ask me a few questions first when my question is ambiguous").Check())
	require.NoError(t, page.GetByLabel("Hold approval back for the strategy review's blocking findings").Check())
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))

	clarify := page.GetByTestId("checkpoint-clarify")
	require.NoError(t, expect.Locator(clarify).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToHaveCount(0))
	radio := func(question, option string) playwright.Locator {
		return clarify.GetByRole("group", playwright.LocatorGetByRoleOptions{Name: question}).
			GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: option, Exact: playwright.Bool(true)})
	}
	require.NoError(t, radio("What does CBT stand for in your question?", "cognitive behavioural therapy").Check())
	require.NoError(t, radio("Whom is the question about?", "Adults").Check())
	require.NoError(t, radio("Which publication years should the search cover?", "The last 5 years").Check())
	require.NoError(t, button(page, "Use these answers").Click())

	strategy := page.GetByTestId("checkpoint-strategy")
	require.NoError(t, expect.Locator(strategy).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("intent-concepts")).ToContainText("cognitive behavioural therapy"))
	require.NoError(t, expect.Locator(page.GetByTestId("intent-concepts")).ToContainText("adults"))
	require.NoError(t, expect.Locator(page.GetByLabel("Year from")).ToHaveValue("2020"))

	findings := strategy.GetByTestId("finding")
	require.NoError(t, expect.Locator(findings.First()).ToBeVisible())
	require.NoError(t, expect.Locator(findings.First()).ToContainText("blocks approval at this iteration"))
	require.NoError(t, expect.Locator(page.GetByTestId("findings-blocking")).ToContainText("at iteration 1"))

	require.NoError(t, button(page, "Approve anyway").Click())
	noteErr := page.Locator(`[data-testid="field-error"][data-field="note"]`)
	require.NoError(t, expect.Locator(noteErr).ToContainText("Approval refused"))
	require.NoError(t, page.GetByLabel("Note (required to approve anyway: say why the blocking findings do not apply)").Fill("a quick scoping search"))
	require.NoError(t, button(page, "Approve anyway").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
}
