package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRestartResumesWaitingRun: a run waits at its strategy checkpoint, the
// whole app stops (as on a process exit), a new app starts on another port
// over the same database file, and the run link on the new server shows
// the same checkpoint to the same person, who decides both checkpoints
// through the forms until the run completes.
func TestRestartResumesWaitingRun(t *testing.T) {
	t.Parallel()
	first := startServer(t)
	page, expect := openPage(t, first.url)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("waiting"))
	runID, err := page.GetByTestId("run").GetAttribute("data-run-id")
	require.NoError(t, err)
	require.NotEmpty(t, runID)

	// Close the tab before the server goes, so its polling does not log
	// connection errors, then stop the whole app and make sure it is gone.
	bctx := page.Context()
	require.NoError(t, page.Close())
	first.Stop()
	gone := &http.Client{Timeout: 2 * time.Second}
	if res, err := gone.Get(first.url + "/healthz"); err == nil {
		res.Body.Close()
		t.Fatalf("the first server still answers after Stop: %s", res.Status)
	}

	second := startServerOn(t, first.db)
	require.NotEqual(t, first.url, second.url)
	page, err = bctx.NewPage()
	require.NoError(t, err)
	watch(t, page)
	// The session cookie (key kept in the database) survives the restart:
	// the run link opens straight on the pending checkpoint, no name form.
	_, err = page.Goto(second.url + "/runs/" + runID)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("name-form")).ToHaveCount(0))
	require.NoError(t, expect.Locator(page.GetByTestId("run-question")).ToHaveText("sleep and memory consolidation"))
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("waiting"))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())

	// Deciding on the new server resumes the run on its job workers.
	require.NoError(t, button(page, "Approve").Click())
	review := page.GetByTestId("checkpoint-review")
	require.NoError(t, expect.Locator(review).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("paper").First()).ToBeVisible())
	require.NoError(t, button(page, "Approve and finish").Click())

	require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("completed"))
	require.NoError(t, expect.Locator(page.GetByTestId("decision")).ToHaveCount(2))
	by := page.GetByTestId("decision-by")
	require.NoError(t, expect.Locator(by).ToHaveText([]string{"Ada", "Ada"}))

	// The new server's home page still lists the run for this browser.
	_, err = page.Goto(second.url + "/")
	require.NoError(t, err)
	item := page.Locator(`[data-testid="run-item"][data-run-id="` + runID + `"]`)
	require.NoError(t, expect.Locator(item.GetByTestId("status-badge")).ToHaveText("completed"))
}
