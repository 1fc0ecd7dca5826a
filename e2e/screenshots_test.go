package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// screenshotDir is where `make screenshots` writes the README's images,
// relative to this package's directory (where go test runs it).
var screenshotDir = filepath.Join("..", "docs", "screenshots")

// TestScreenshots drives one run over the test library from the strategy
// checkpoint through the review to the completed page, then back home, and
// saves each page as docs/screenshots/{strategy,review,completed,home}.png
// at 1280×900 (and the completed run's PRISMA diagram as prisma.png and
// its screening progress plot as progress.png), then
// the workflow diagrams as workflows.png. It writes into the source tree, so it runs only when
// QUARRY_SCREENSHOTS=1 (make screenshots sets it); it still asserts each
// state before shooting, so a broken page fails rather than being pictured.
func TestScreenshots(t *testing.T) {
	if os.Getenv("QUARRY_SCREENSHOTS") != "1" {
		t.Skip("writes docs/screenshots/*.png; run it with make screenshots (QUARRY_SCREENSHOTS=1)")
	}
	require.NoError(t, os.MkdirAll(screenshotDir, 0o755))
	page, expect := openPage(t, startServer(t).url)
	require.NoError(t, page.SetViewportSize(1280, 900))
	shoot := func(name string) {
		t.Helper()
		path := filepath.Join(screenshotDir, name+".png")
		_, err := page.Screenshot(playwright.PageScreenshotOptions{
			Path: playwright.String(path), FullPage: playwright.Bool(true),
			Animations: playwright.ScreenshotAnimationsDisabled, Caret: playwright.ScreenshotCaretHide,
		})
		require.NoError(t, err)
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Positive(t, info.Size())
		t.Logf("wrote %s (%d bytes)", path, info.Size())
	}

	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("waiting"))
	require.NoError(t, expect.Locator(page.GetByTestId("query-row").First()).ToBeVisible())
	shoot("strategy")

	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
	papers := page.GetByTestId("paper")
	require.NoError(t, expect.Locator(papers.First()).ToBeVisible())
	for i, mark := range []string{"Relevant", "Relevant", "Irrelevant"} {
		require.NoError(t, papers.Nth(i).GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: mark, Exact: playwright.Bool(true)}).Check())
	}
	require.NoError(t, page.GetByLabel("Feedback for the next iteration").Fill("more on targeted memory reactivation"))
	shoot("review")

	require.NoError(t, button(page, "Approve and finish").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("completed"))
	shoot("completed")
	prisma := page.GetByTestId("prisma-diagram")
	require.NoError(t, expect.Locator(prisma).ToHaveJSProperty("complete", true))
	_, err := prisma.Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(screenshotDir, "prisma.png"))})
	require.NoError(t, err)
	plot := page.GetByTestId("progress-plot")
	require.NoError(t, expect.Locator(plot).ToHaveAttribute("alt", "Relevant papers found against papers screened: 3 papers screened, 2 relevant."))
	require.NoError(t, expect.Locator(plot).ToHaveJSProperty("complete", true))
	_, err = plot.Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(screenshotDir, "progress.png"))})
	require.NoError(t, err)

	// Home last, so its list shows the finished run next to the start form.
	_, err = page.Goto("/")
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("run-item")).ToHaveCount(1))
	require.NoError(t, page.GetByLabel("Research question").Fill("effects of napping on memory in older adults"))
	shoot("home")

	_, err = page.Goto("/workflows")
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("workflow-diagram").First()).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("diagram-node").First()).ToBeVisible())
	shoot("workflows")
}
