package e2e

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestSharingAndStaleDecision: a second person opens the run link, gives
// another name and decides; the first sees the new state, and a stale
// submit from the first gets the 409 message naming the second.
func TestSharingAndStaleDecision(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	link := page.URL()
	u, err := url.Parse(link)
	require.NoError(t, err)

	// Ada keeps a second tab on the strategy form whose live updates are
	// blocked, so it stays stale deterministically.
	stale, err := page.Context().NewPage()
	require.NoError(t, err)
	require.NoError(t, stale.Route("**/runs/*/status*", func(r playwright.Route) { _ = r.Abort() }))
	require.NoError(t, stale.Route("**/runs/*/events", func(r playwright.Route) { _ = r.Abort() }))
	_, err = stale.Goto(link)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(stale.GetByTestId("checkpoint-strategy")).ToBeVisible())

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

	// The first person's page follows the run to the review by itself.
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())

	// The stale tab's submit is a 409 naming who decided, showing the new state.
	res, err := stale.ExpectResponse(regexp.MustCompile(`/checkpoints/[^/]+/(strategy|review)$`), func() error { return button(stale, "Approve").Click() })
	require.NoError(t, err)
	require.Equal(t, 409, res.Status())
	require.NoError(t, expect.Locator(stale.GetByTestId("conflict-message")).ToContainText("Grace"))
	require.NoError(t, expect.Locator(stale.GetByTestId("checkpoint-review")).ToBeVisible())
}
