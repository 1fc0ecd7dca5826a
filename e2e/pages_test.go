package e2e

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
	"quarry/internal/library"
)

// TestRunsAndLibraryPages (issue 16, item 11): the navigation's "Runs"
// lists every run on the server; filtering by status and searching by
// question narrow it; a row opens its run. From the library, a search
// finds a paper the finished run marked relevant, and its page shows the
// paper and that run with the mark. On the old code there was no /runs
// page (GET /runs was a 405), no list in the library and no paper page.
func TestRunsAndLibraryPages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	// The fake sources search testapp's papers; putting them in the
	// library too gives the papers the run shows a page each.
	lib := testapp.Library()
	i := 0
	_, err := library.Import(context.Background(), s.app.Store(), func() (library.Record, error) {
		if i == len(lib) {
			return library.Record{}, io.EOF
		}
		i++
		return library.Record{Line: i, Paper: lib[i-1], Origin: "e2e.ris"}, nil
	}, library.ImportOptions{})
	require.NoError(t, err)
	page, expect := openPage(t, s.url)

	// A finished run with one paper marked relevant…
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	papers := page.GetByTestId("paper")
	id, err := papers.First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	title, err := papers.First().GetByTestId("paper-title").TextContent()
	require.NoError(t, err)
	title = strings.TrimSpace(title)
	require.NoError(t, markRadio(page, id, "Relevant").Check())
	require.NoError(t, button(page, "Approve and finish").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToContainText("completed", afterWorkText()))
	sleepRun := page.URL()

	// … and one waiting at its strategy checkpoint.
	_, err = page.Goto("/")
	require.NoError(t, err)
	require.NoError(t, page.GetByLabel("Research question").Fill("raft consensus under partitions"))
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible(afterWork()))
	raftRun := page.URL()

	require.NoError(t, page.GetByTestId("nav-runs").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs$`)))
	rows := page.GetByTestId("runs-row")
	require.NoError(t, expect.Locator(rows).ToHaveCount(2))
	require.NoError(t, expect.Locator(page.GetByTestId("runs-pager").GetByTestId("pager-summary")).ToHaveText("runs 1–2 of 2"))
	require.NoError(t, expect.Locator(rows.First()).ToContainText("raft consensus under partitions"), "newest first")

	_, err = page.GetByLabel("Status").SelectOption(playwright.SelectOptionValues{Values: playwright.StringSlice("completed")})
	require.NoError(t, err)
	require.NoError(t, button(page, "Show").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`status=completed`)))
	require.NoError(t, expect.Locator(rows).ToHaveCount(1))
	require.NoError(t, expect.Locator(rows.First()).ToContainText("sleep and memory consolidation"))

	_, err = page.GetByLabel("Status").SelectOption(playwright.SelectOptionValues{Values: playwright.StringSlice("")})
	require.NoError(t, err)
	require.NoError(t, page.GetByLabel("Question contains").Fill("RAFT"))
	require.NoError(t, button(page, "Show").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`q=RAFT`)))
	require.NoError(t, expect.Locator(rows).ToHaveCount(1))
	require.NoError(t, rows.First().GetByTestId("runs-link").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(raftRun)+"$")))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())

	// The library finds the marked paper; its page names the run and the mark.
	require.NoError(t, page.GetByTestId("nav-library").Click())
	require.NoError(t, page.GetByLabel("Search titles, abstracts, authors and venues").Fill(title))
	require.NoError(t, button(page, "Search").Click())
	link := page.Locator(`[data-testid="library-paper"][data-paper-id="` + id + `"]`).GetByTestId("library-paper-link")
	require.NoError(t, expect.Locator(link).ToHaveText(title))
	require.NoError(t, link.Click())
	require.NoError(t, expect.Locator(page.GetByTestId("paper-title")).ToHaveText(title))
	require.NoError(t, expect.Page(page).ToHaveTitle(title+" · Library · Quarry"))
	run := page.GetByTestId("paper-run")
	require.NoError(t, expect.Locator(run).ToHaveCount(1))
	require.NoError(t, expect.Locator(run).ToHaveAttribute("data-mark", "relevant"))
	require.NoError(t, run.GetByTestId("paper-run-link").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(sleepRun)+"$")))
}
