package e2e

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestSharingAndStaleDecision: a second person opens the run link, gives
// another name and decides; the first, who typed nothing, sees the new
// state by itself, and a stale submit from the first gets the 409 message naming
// the second, with what the first had typed shown to copy — from a plain
// submit (Approve) and from an htmx one (Add query) alike.
func TestSharingAndStaleDecision(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	link := page.URL()
	u, err := url.Parse(link)
	require.NoError(t, err)

	// Ada keeps two more tabs on the strategy form whose live updates are
	// blocked, so they stay stale deterministically, and types in both.
	staleTab := func() playwright.Page {
		tab, err := page.Context().NewPage()
		require.NoError(t, err)
		require.NoError(t, tab.Route("**/runs/*/status*", func(r playwright.Route) { _ = r.Abort() }))
		require.NoError(t, tab.Route("**/runs/*/events", func(r playwright.Route) { _ = r.Abort() }))
		unrouteOnCleanup(t, tab)
		_, err = tab.Goto(link)
		require.NoError(t, err)
		require.NoError(t, expect.Locator(tab.GetByTestId("checkpoint-strategy")).ToBeVisible())
		require.NoError(t, tab.GetByLabel("Query 1", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("hippocampal replay in humans"))
		require.NoError(t, tab.GetByLabel("Note (optional)").Fill("humans only, per the protocol"))
		return tab
	}
	stale, staleHTMX := staleTab(), staleTab()

	bctx, err := page.Context().Browser().NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(u.Scheme + "://" + u.Host)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = bctx.Close() })
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	other, err := bctx.NewPage()
	require.NoError(t, err)
	_, err = other.Goto(u.Path)
	require.NoError(t, err)
	signIn(t, other, expect, "Grace")
	require.NoError(t, expect.Page(other).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(u.Path)+`$`)))
	require.NoError(t, button(other, "Approve").Click())
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible())

	// The first person's page showed the strategy form but nothing was
	// typed into it, so it follows the run by itself to the review.
	// (A tab with typed text gets a banner instead: livetab_test.go.)
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("stale-banner")).ToHaveCount(0))

	// The stale tab's submit is a 409 naming who decided, showing the new state.
	res, err := stale.ExpectResponse(regexp.MustCompile(`/checkpoints/[^/]+/(strategy|review)$`), func() error { return button(stale, "Approve").Click() })
	require.NoError(t, err)
	require.Equal(t, 409, res.Status())
	require.NoError(t, expect.Locator(stale.GetByTestId("conflict-message")).ToContainText("Grace"))
	require.NoError(t, expect.Locator(stale.GetByTestId("checkpoint-review")).ToBeVisible())
	keptTyping := func(tab playwright.Page) {
		t.Helper()
		require.NoError(t, expect.Locator(tab.GetByTestId("submitted-label")).ToContainText("not saved"))
		require.NoError(t, expect.Locator(tab.GetByLabel("Your query 1")).ToHaveValue("hippocampal replay in humans"))
		require.NoError(t, expect.Locator(tab.GetByLabel("Your note")).ToHaveValue("humans only, per the protocol"))
	}
	keptTyping(stale)

	// Add query is an htmx request that swaps only the form; its 409
	// replaces the page's <main> (one header, not a page inside the form).
	res, err = staleHTMX.ExpectResponse(regexp.MustCompile(`/checkpoints/[^/]+/strategy$`), func() error { return button(staleHTMX, "Add query").Click() })
	require.NoError(t, err)
	require.Equal(t, 409, res.Status())
	require.NoError(t, expect.Locator(staleHTMX.GetByTestId("conflict-message")).ToContainText("Grace"))
	require.NoError(t, expect.Locator(staleHTMX.GetByTestId("checkpoint-review")).ToBeVisible())
	require.NoError(t, expect.Locator(staleHTMX.GetByTestId("nav-home")).ToHaveCount(1))
	require.NoError(t, expect.Locator(staleHTMX.GetByTestId("checkpoint-strategy")).ToHaveCount(0))
	keptTyping(staleHTMX)
}
