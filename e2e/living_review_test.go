package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestStartLivingReviewTemplate (issue 17): the built-in living-review
// template is started from its form on /workflows over the demo library;
// its run's page shows the review gate with the new papers and the
// workflow drawing; the drawing follows the run (a redrawn version is
// fetched without reloading the page); "Keep watching" sends the run
// through its durable wait to the second search, which finds nothing new,
// and the run completes, its drawing changed again.
func TestStartLivingReviewTemplate(t *testing.T) {
	t.Parallel()
	srv := startDemoApp(t)
	page, expect := openPage(t, srv.url)
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, "Ada")
	_, err = page.Goto("/workflows")
	require.NoError(t, err)

	form := page.Locator(`[data-testid="workflow"][data-workflow="living-review"] [data-testid="start-workflow"]`)
	require.NoError(t, form.Locator(`[name="question"]`).Fill("How does SQLite WAL mode affect crash recovery?"))
	require.NoError(t, form.Locator(`[name="interval"]`).Fill("6s"))
	require.NoError(t, form.Locator(`[name="max_iterations"]`).Fill("2"))
	require.NoError(t, form.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Start Living review"}).Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))

	gate := page.GetByTestId("checkpoint-gate")
	require.NoError(t, expect.Locator(gate).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(gate.GetByTestId("gate-context")).ToContainText("new_papers"))
	require.NoError(t, expect.Locator(gate.GetByTestId("gate-context")).ToContainText("WAL"))
	panel := page.GetByTestId("run-workflow")
	require.NoError(t, panel.Locator("summary").Click())
	require.NoError(t, expect.Locator(panel.Locator(`[data-stage="search"]`)).ToHaveAttribute("data-state", "completed"))
	require.NoError(t, expect.Locator(panel.Locator(`[data-stage="review"]`)).ToHaveAttribute("data-state", "waiting"))
	graph := panel.GetByTestId("run-graph")
	require.NoError(t, expect.Locator(graph).ToBeVisible())
	requireDrawn(t, graph)
	atGate, err := graph.GetAttribute("src")
	require.NoError(t, err)

	require.NoError(t, gate.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Keep watching"}).Click())
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-gate")).ToHaveCount(0))
	require.NoError(t, expect.Locator(panel.Locator(`[data-stage="wait"]`)).ToHaveAttribute("data-state", "waiting", afterWorkAttr()))
	require.NoError(t, expect.Locator(graph).Not().ToHaveAttribute("src", atGate)) // the drawing advanced past the gate
	waiting, err := graph.GetAttribute("src")
	require.NoError(t, err)

	// The drawing follows the polled status line without a reload: one
	// that is behind (made so here) is fetched anew at the next poll.
	_, err = page.Evaluate(`() => {
		window.quarrySamePage = true;
		const img = document.querySelector('img[data-testid="run-graph"]');
		img.setAttribute("data-version", "0");
		img.setAttribute("src", img.getAttribute("src").replace(/\?.*$/, "?v=0"));
	}`)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(graph).ToHaveAttribute("src", waiting))
	same, err := page.Evaluate(`() => window.quarrySamePage === true`)
	require.NoError(t, err)
	require.Equal(t, true, same, "redrawn in place, not by reloading the page")

	// After the wait: the second search finds nothing new, max_iterations
	// is reached and the run completes.
	require.NoError(t, expect.Locator(page.GetByTestId("run-state")).ToHaveText("completed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))
	require.NoError(t, expect.Locator(graph).Not().ToHaveAttribute("src", waiting)) // the drawing advanced to the end
	require.NoError(t, expect.Locator(panel.Locator(`[data-stage="search"]`)).ToHaveAttribute("data-state", "completed"))
	require.NoError(t, panel.Locator("summary").Click())
	requireDrawn(t, graph)
}

// afterWorkAttr waits for an attribute as long as for work to finish.
func afterWorkAttr() playwright.LocatorAssertionsToHaveAttributeOptions {
	return playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}
}

// requireDrawn checks the drawing (an image) loaded.
func requireDrawn(t *testing.T, graph playwright.Locator) {
	t.Helper()
	require.Eventually(t, func() bool {
		loaded, err := graph.Evaluate(`(img) => img.complete && img.naturalWidth > 0`, nil)
		return err == nil && loaded == true
	}, expectTimeout, 50*time.Millisecond, "the drawing loaded")
}
