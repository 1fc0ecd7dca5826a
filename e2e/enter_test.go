package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
)

// Pressing Enter in a text field submits a form through its first submit
// button. These tests press Enter in the checkpoint forms' fields, with and
// without JavaScript, and check that nothing is decided and nothing typed
// is lost: Enter must never remove a query or approve (and so finish) a run.

// openPageNoJS is openPage with JavaScript switched off, the way the forms
// must work first.
func openPageNoJS(t *testing.T, base string) (playwright.Page, playwright.PlaywrightAssertions) {
	t.Helper()
	browser, err := shared.get()
	if err != nil {
		t.Fatalf("e2e: no browser: %v", err)
	}
	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(base), JavaScriptEnabled: playwright.Bool(false)})
	require.NoError(t, err)
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	bctx.SetDefaultNavigationTimeout(float64(actionTimeout.Milliseconds()))
	page, err := bctx.NewPage()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, bctx.Close()) })
	watch(t, page)
	return page, playwright.NewPlaywrightAssertions(float64(expectTimeout.Milliseconds()))
}

// pages opens a page on a fresh server, with or without JavaScript.
func pages(t *testing.T, js bool) (*server, playwright.Page, playwright.PlaywrightAssertions) {
	t.Helper()
	s := startServer(t)
	if js {
		page, expect := openPage(t, s.url)
		return s, page, expect
	}
	page, expect := openPageNoJS(t, s.url)
	return s, page, expect
}

// startAt starts a run (strategy checkpoint on) and waits for its strategy
// form; it returns the run's ID.
func startAt(t *testing.T, s *server, page playwright.Page, expect playwright.PlaywrightAssertions, js bool) string {
	t.Helper()
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, "Ada")
	require.NoError(t, page.GetByLabel("Research question").Fill("sleep and memory consolidation"))
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))
	runID := runIDOf(t, page)
	waitForCheckpoint(t, s, page, expect, js, runID, "checkpoint-strategy")
	return runID
}

// waitForCheckpoint waits until the page shows the checkpoint form testID.
// With JavaScript the page follows the run by itself; without, it is
// reloaded once the store says the run waits for a person.
func waitForCheckpoint(t *testing.T, s *server, page playwright.Page, expect playwright.PlaywrightAssertions, js bool, runID, testID string) {
	t.Helper()
	if !js {
		kind := map[string]engine.CheckpointKind{"checkpoint-strategy": pipeline.KindStrategyConfirmation, "checkpoint-review": pipeline.KindResultReview}[testID]
		require.Eventually(t, func() bool {
			ctx := context.Background()
			run, err := s.app.Store().Run(ctx, runID)
			if err != nil || run.Status != engine.StatusWaiting {
				return false
			}
			cps, err := s.app.Store().Checkpoints(ctx, runID)
			return err == nil && slices.ContainsFunc(cps, func(cd store.CheckpointDecision) bool {
				return cd.Checkpoint.ID == run.CheckpointID && cd.Checkpoint.Kind == kind
			})
		}, workTimeout, 20*time.Millisecond)
		// The decision's own answer may still be loading (it waits briefly
		// for the run to stop for a person, and may show the form itself):
		// let it finish, then reload only if it did not.
		shown := expect.Locator(page.GetByTestId(testID)).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(3000)})
		if shown != nil {
			_, err := page.Reload()
			require.NoError(t, err)
		}
	}
	require.NoError(t, expect.Locator(page.GetByTestId(testID)).ToBeVisible(afterWork()))
}

// runIDOf is the run's ID from the run page's address.
func runIDOf(t *testing.T, page playwright.Page) string {
	t.Helper()
	m := regexp.MustCompile(`/runs/([a-z0-9]+)`).FindStringSubmatch(page.URL())
	require.NotNil(t, m, page.URL())
	return m[1]
}

// requireUndecided checks in the store that the run still waits at
// checkpointID, undecided.
func requireUndecided(t *testing.T, s *server, runID, checkpointID string) {
	t.Helper()
	ctx := context.Background()
	run, err := s.app.Store().Run(ctx, runID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, run.Status)
	require.Equal(t, checkpointID, run.CheckpointID)
	cps, err := s.app.Store().Checkpoints(ctx, runID)
	require.NoError(t, err)
	i := slices.IndexFunc(cps, func(cd store.CheckpointDecision) bool { return cd.Checkpoint.ID == checkpointID })
	require.GreaterOrEqual(t, i, 0)
	require.Nil(t, cps[i].Decision, "the checkpoint was decided")
}

func TestEnterInStrategyFormRemovesNothing(t *testing.T) {
	t.Parallel()
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "JS", false: "NoJS"}[js], func(t *testing.T) {
			t.Parallel()
			s, page, expect := pages(t, js)
			runID := startAt(t, s, page, expect, js)
			run, err := s.app.Store().Run(context.Background(), runID)
			require.NoError(t, err)

			rows := page.GetByTestId("query-row")
			n, err := rows.Count()
			require.NoError(t, err)
			require.Positive(t, n)
			query1 := page.GetByLabel("Query 1", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
			first, err := query1.InputValue()
			require.NoError(t, err)

			// Enter in a year field, then in the first query.
			require.NoError(t, page.GetByLabel("Year from").Fill("2012"))
			require.NoError(t, page.GetByLabel("Year from").Press("Enter"))
			require.NoError(t, expect.Locator(page.GetByTestId("enter-notice")).ToBeVisible())
			require.NoError(t, expect.Locator(rows).ToHaveCount(n))
			require.NoError(t, expect.Locator(query1).ToHaveValue(first))
			require.NoError(t, expect.Locator(page.GetByLabel("Year from")).ToHaveValue("2012"), "the typed year is kept")

			require.NoError(t, query1.Fill(first+" sleep"))
			require.NoError(t, query1.Press("Enter"))
			require.NoError(t, expect.Locator(query1).ToHaveValue(first+" sleep"))
			require.NoError(t, expect.Locator(rows).ToHaveCount(n))
			require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-strategy")).ToBeVisible())
			requireUndecided(t, s, runID, run.CheckpointID)

			// The buttons still decide: saving the typed values searches them.
			require.NoError(t, button(page, "Save edits & continue").Click())
			waitForCheckpoint(t, s, page, expect, js, runID, "checkpoint-review")
			require.NoError(t, expect.Locator(page.GetByTestId("history")).ToContainText(first+" sleep"))
		})
	}
}

func TestEnterInReviewNoteDoesNotFinish(t *testing.T) {
	t.Parallel()
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "JS", false: "NoJS"}[js], func(t *testing.T) {
			t.Parallel()
			s, page, expect := pages(t, js)
			runID := startAt(t, s, page, expect, js)
			require.NoError(t, button(page, "Approve").Click())
			waitForCheckpoint(t, s, page, expect, js, runID, "checkpoint-review")
			run, err := s.app.Store().Run(context.Background(), runID)
			require.NoError(t, err)

			paper := page.GetByTestId("paper").First()
			require.NoError(t, paper.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: "Relevant", Exact: playwright.Bool(true)}).Check())
			note := paper.GetByTestId("paper-note")
			require.NoError(t, note.Fill("fits the question"))
			require.NoError(t, note.Press("Enter"))

			require.NoError(t, expect.Locator(page.GetByTestId("enter-notice")).ToBeVisible())
			require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToHaveCount(0))
			require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible())
			paper = page.GetByTestId("paper").First()
			require.NoError(t, expect.Locator(paper.GetByTestId("paper-note")).ToHaveValue("fits the question"), "the note is kept")
			require.NoError(t, expect.Locator(paper.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: "Relevant", Exact: playwright.Bool(true)})).ToBeChecked(), "the mark is kept")
			requireUndecided(t, s, runID, run.CheckpointID)
			status, err := page.GetByTestId("status-badge").TextContent()
			require.NoError(t, err)
			require.NotEqual(t, "completed", strings.TrimSpace(status))
		})
	}
}
