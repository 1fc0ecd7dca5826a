package e2e

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestLiveTabKeepsTypedStrategy: Ada is typing into the strategy form in
// a live tab when Grace decides the checkpoint from her own browser. Ada's
// page does not reload under her: a banner names Grace and the decision,
// what she typed is still in the form to copy, and the banner's link shows
// the run as it is now.
func TestLiveTabKeepsTypedStrategy(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	query := page.GetByLabel("Query 1", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
	require.NoError(t, query.Fill("hippocampal replay in humans"))
	note := page.GetByLabel("Note (optional)")
	require.NoError(t, note.Fill("humans only, per the protocol"))

	u, err := url.Parse(page.URL())
	require.NoError(t, err)
	bctx, err := page.Context().Browser().NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(u.Scheme + "://" + u.Host)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = bctx.Close() })
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	other, err := bctx.NewPage()
	require.NoError(t, err)
	watch(t, other)
	_, err = other.Goto(u.Path)
	require.NoError(t, err)
	signIn(t, other, expect, "Grace")
	require.NoError(t, expect.Page(other).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(u.Path)+`$`)))
	require.NoError(t, button(other, "Approve").Click())
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))

	// Ada's tab says what happened instead of reloading.
	banner := page.GetByTestId("stale-banner")
	require.NoError(t, expect.Locator(banner).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByRole(*playwright.AriaRoleAlert).Filter(playwright.LocatorFilterOptions{HasText: "Grace"})).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("stale-message")).ToContainText("Grace decided this checkpoint (approve)"))
	require.NoError(t, expect.Locator(banner).ToContainText("not saved"))

	// Her form and what she typed are still there.
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())
	require.NoError(t, expect.Locator(query).ToHaveValue("hippocampal replay in humans"))
	require.NoError(t, expect.Locator(note).ToHaveValue("humans only, per the protocol"))

	// The banner's link shows the current run: the review Grace's
	// decision led to.
	require.NoError(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "show the current run"}).Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToHaveCount(0))
	require.NoError(t, expect.Locator(page.GetByTestId("stale-banner")).ToHaveCount(0))
}
