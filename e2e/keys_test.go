package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestReviewKeyboard: screening by keyboard as in the best tools. A mark
// key before any j marks the first paper; r, i and u mark and move on to
// the next paper; the cursor follows a mouse click (j moves on from the
// clicked paper, not from an older cursor); o and Enter open and close the
// cursor paper's abstract; n focuses its note; the cursor paper shows a
// focus ring. On the old script r/i/u did nothing before a j, j went back
// to the old cursor after a click, and no key opened an abstract; then a
// mark left the cursor where it was (the checks that the cursor moved on
// after r and i fail on that script).
func TestReviewKeyboard(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	papers := page.GetByTestId("paper")
	n, err := papers.Count()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 5)
	radio := func(p playwright.Locator, name string) playwright.Locator {
		return p.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
	}

	// r before any j marks the first paper and moves on to the second.
	first, second := papers.First(), papers.Nth(1)
	require.NoError(t, page.Keyboard().Press("r"))
	require.NoError(t, expect.Locator(radio(first, "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(second).ToHaveAttribute("aria-current", "true"))
	require.NoError(t, expect.Locator(second).ToBeFocused())
	require.NoError(t, expect.Locator(first).ToHaveAttribute("aria-current", "false"))

	// The cursor follows the mouse: j after a click on the third paper
	// (on its score, no control) goes to the fourth.
	third, fourth := papers.Nth(2), papers.Nth(3)
	require.NoError(t, third.GetByTestId("paper-score").Click())
	require.NoError(t, expect.Locator(third).ToHaveAttribute("aria-current", "true"))
	require.NoError(t, page.Keyboard().Press("j"))
	require.NoError(t, expect.Locator(fourth).ToBeFocused())
	require.NoError(t, expect.Locator(fourth).ToHaveAttribute("aria-current", "true"))
	require.NoError(t, expect.Locator(first).ToHaveAttribute("aria-current", "false"))
	require.NoError(t, page.Keyboard().Press("i"))
	require.NoError(t, expect.Locator(radio(fourth, "Irrelevant")).ToBeChecked())
	fifth := papers.Nth(4)
	require.NoError(t, expect.Locator(fifth).ToBeFocused(), "i moves on to the next paper")
	require.NoError(t, expect.Locator(fifth).ToHaveAttribute("aria-current", "true"))

	// A visible focus ring on the cursor paper.
	ring, err := fifth.Evaluate(`el => { const s = getComputedStyle(el); return s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 1; }`, nil)
	require.NoError(t, err)
	require.Equal(t, true, ring, "the cursor paper has a focus ring")

	// k goes back; a click into another paper's control moves the cursor
	// there too (a click marks without moving on).
	require.NoError(t, page.Keyboard().Press("k"))
	require.NoError(t, expect.Locator(fourth).ToBeFocused())
	require.NoError(t, radio(second, "Unsure").Click())
	require.NoError(t, expect.Locator(second).ToHaveAttribute("aria-current", "true"))

	// o and Enter open and close the abstract of the cursor's paper.
	withAbstract := papers.Filter(playwright.LocatorFilterOptions{Has: page.Locator("details")}).First()
	require.NoError(t, withAbstract.GetByTestId("paper-score").Click())
	details := withAbstract.Locator("details")
	require.NoError(t, expect.Locator(details).Not().ToHaveAttribute("open", ""))
	require.NoError(t, page.Keyboard().Press("o"))
	require.NoError(t, expect.Locator(details).ToHaveAttribute("open", ""))
	require.NoError(t, page.Keyboard().Press("o"))
	require.NoError(t, expect.Locator(details).Not().ToHaveAttribute("open", ""))
	require.NoError(t, page.Keyboard().Press("Enter"))
	require.NoError(t, expect.Locator(details).ToHaveAttribute("open", ""))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())

	// n focuses the note; what is typed goes into it, not to the keys.
	note := withAbstract.GetByTestId("paper-note")
	require.NoError(t, page.Keyboard().Press("n"))
	require.NoError(t, expect.Locator(note).ToBeFocused())
	require.NoError(t, page.Keyboard().Type("rig"))
	require.NoError(t, expect.Locator(note).ToHaveValue("rig"))
}
