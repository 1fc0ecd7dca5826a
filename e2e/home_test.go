package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

func TestHomePageLoads(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)

	res, err := page.Goto("/")
	require.NoError(t, err)
	require.Equal(t, 200, res.Status())
	signIn(t, page, expect, "Ada")

	require.NoError(t, expect.Page(page).ToHaveTitle("Quarry"))
	heading := page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{
		Name: "Quarry", Exact: playwright.Bool(true), Level: playwright.Int(1),
	})
	require.NoError(t, expect.Locator(heading).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("home-intro")).ToBeVisible())

	require.NoError(t, expect.Locator(page.GetByLabel("Research question")).ToBeEnabled())
	require.NoError(t, expect.Locator(page.GetByRole(*playwright.AriaRoleButton, roleName("Start"))).ToBeEnabled())

	// The vendored htmx and its SSE extension load under the CSP.
	version, err := page.Evaluate(`() => window.htmx && window.htmx.version`)
	require.NoError(t, err)
	require.Equal(t, "2.0.11", version)
}

func TestUnknownPageShowsErrorPage(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)

	res, err := page.Goto("/no/such/page")
	require.NoError(t, err)
	require.Equal(t, 404, res.Status())
	require.NoError(t, expect.Page(page).ToHaveTitle("Page not found · Quarry"))
	require.NoError(t, expect.Locator(page.GetByRole(*playwright.AriaRoleAlert)).ToContainText("No page at /no/such/page. Runs are listed on the home page."))
	require.NoError(t, page.GetByRole(*playwright.AriaRoleLink, roleName("Back to the home page")).Click())
	// A first visit is asked for a name, then comes back home.
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/name\?next=/$`)))
}
