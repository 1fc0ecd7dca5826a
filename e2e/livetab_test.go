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

	other := teammate(t, page, expect, "Grace")
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

// teammate opens the run shown on page in a browser context of its own,
// signed in as name, and returns that page.
func teammate(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, name string) playwright.Page {
	t.Helper()
	return teammateWith(t, page, expect, name, nil)
}

// teammateWith is teammate with setup run on the new browser context
// before its page opens (routes, init scripts).
func teammateWith(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, name string, setup func(playwright.BrowserContext)) playwright.Page {
	t.Helper()
	u, err := url.Parse(page.URL())
	require.NoError(t, err)
	bctx, err := page.Context().Browser().NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(u.Scheme + "://" + u.Host)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = bctx.Close() })
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	if setup != nil {
		setup(bctx)
	}
	other, err := bctx.NewPage()
	require.NoError(t, err)
	watch(t, other)
	_, err = other.Goto(u.Path)
	require.NoError(t, err)
	signIn(t, other, expect, name)
	require.NoError(t, expect.Page(other).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(u.Path)+`$`)))
	return other
}

// markPage leaves a mark in the page's JavaScript state; a reload clears
// it, so notReloaded tells a page that stayed from one that was reloaded.
func markPage(t *testing.T, page playwright.Page) {
	t.Helper()
	_, err := page.Evaluate(`() => { window.quarryTestMark = "kept"; }`)
	require.NoError(t, err)
}

func notReloaded(t *testing.T, page playwright.Page) {
	t.Helper()
	v, err := page.Evaluate(`() => window.quarryTestMark`)
	require.NoError(t, err)
	require.Equal(t, "kept", v, "the page was reloaded")
}

// afterWorkText is ToContainText waiting as long as afterWork.
func afterWorkText() playwright.LocatorAssertionsToContainTextOptions {
	return playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}
}

// TestLiveTabFollowsUntouchedForm: Ada has the strategy form open but has
// typed nothing when Grace decides the checkpoint. Nothing of Ada's can be
// lost, so her tab follows the run by itself to the review Grace's
// decision led to, without a banner to click through.
func TestLiveTabFollowsUntouchedForm(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	other := teammate(t, page, expect, "Grace")
	require.NoError(t, button(other, "Approve").Click())
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))

	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToHaveCount(0))
	require.NoError(t, expect.Locator(page.GetByTestId("stale-banner")).ToHaveCount(0))
}

// TestLiveTabBannerKeepsUp: Ada marks a paper with the keyboard (a mark is
// input worth keeping) when Grace sends the review back for another
// iteration. Ada's banner says so, and as Grace goes on to approve the
// next strategy the banner follows: it names that later decision, while
// Ada's page is never reloaded, her mark stays and her focus stays put.
func TestLiveTabBannerKeepsUp(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	other := teammate(t, page, expect, "Grace")
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible())

	first := page.GetByTestId("paper").First()
	relevant := first.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: "Relevant", Exact: playwright.Bool(true)})
	require.NoError(t, page.Keyboard().Press("j"))
	require.NoError(t, page.Keyboard().Press("r"))
	require.NoError(t, expect.Locator(relevant).ToBeChecked())
	// r marks and moves on: the cursor is on the second paper.
	cursor := page.GetByTestId("paper").Nth(1)
	require.NoError(t, expect.Locator(cursor).ToBeFocused())
	markPage(t, page)
	require.NoError(t, button(other, "Iterate with this feedback").Click())
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-strategy")).ToBeVisible(afterWork()))
	msg := page.GetByTestId("stale-message")
	require.NoError(t, expect.Locator(msg).ToContainText("Grace decided this checkpoint (edit)", afterWorkText()))
	require.NoError(t, expect.Locator(msg).ToContainText("the run is now waiting", afterWorkText()))

	require.NoError(t, button(other, "Approve").Click())
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(msg).ToContainText("Since then, Grace decided the strategy confirmation checkpoint (approve)", afterWorkText()))
	// The approval's search may still be running when the banner first
	// names it; wait for the run to settle, so the quiet poll below is not
	// a redraw for "running" → "waiting".
	require.NoError(t, expect.Locator(msg).ToContainText(regexp.MustCompile(`\(approve\).*the run is now waiting`), afterWorkText()))
	require.NoError(t, expect.Locator(page.GetByTestId("run-iteration")).ToHaveText("2"))

	// Still the same page, with Ada's mark and focus where she left them.
	notReloaded(t, page)
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
	require.NoError(t, expect.Locator(relevant).ToBeChecked())
	require.NoError(t, expect.Locator(cursor).ToBeFocused())
	// The banner's poll goes on (the run can still change) and stays quiet.
	res, err := page.ExpectResponse(regexp.MustCompile(`/status\?.*banner=1`), func() error { return nil },
		playwright.PageExpectResponseOptions{Timeout: playwright.Float(float64(expectTimeout.Milliseconds()))})
	require.NoError(t, err)
	require.Equal(t, 204, res.Status())
	notReloaded(t, page)
}
