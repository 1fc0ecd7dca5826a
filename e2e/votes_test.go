package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// TestTwoOfThreeGateFromThreeBrowsers (issue 18): three people, each in
// a browser of their own, vote at a 2-of-3 gate. After Ada's Approve
// every page shows her vote and that one more is needed; Bo's Reject
// leaves it open; Cy's Approve decides it, and all three pages follow
// the run to its end.
func TestTwoOfThreeGateFromThreeBrowsers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "signoff.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: signoff}
stages:
  - id: signoff
    type: gate
    options:
      - {label: Approve, next: done}
      - {label: Reject, next: complete}
    approval: {count: 2, of: 3, options: [Approve]}
  - id: done
    type: set
    set: {ok: "true"}
`), 0o644))
	srv := startServerConfig(t, app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "quarry.db"), WorkflowsDir: dir},
		func(st *store.Store) (*engine.Registry, error) { return testapp.RegistryWithFiles(st) })
	run, err := srv.app.Engine().Start(context.Background(), "signoff", nil)
	require.NoError(t, err)

	type person struct {
		page   playwright.Page
		expect playwright.PlaywrightAssertions
	}
	var people []person
	for _, name := range []string{"Ada", "Bo", "Cy"} {
		page, expect := openPage(t, srv.url)
		_, err := page.Goto("/runs/" + run.ID)
		require.NoError(t, err)
		signIn(t, page, expect, name)
		_, err = page.Goto("/runs/" + run.ID)
		require.NoError(t, err)
		require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-gate")).ToBeVisible(afterWork()))
		people = append(people, person{page, expect})
	}
	choose := func(p person, option string) {
		t.Helper()
		require.NoError(t, p.page.GetByTestId("checkpoint-gate").GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: option}).Click())
	}
	choose(people[0], "Approve")
	for _, p := range people {
		require.NoError(t, p.expect.Locator(p.page.GetByTestId("gate-votes-needed")).ToContainText("1 more vote needed", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))
		require.NoError(t, p.expect.Locator(p.page.GetByTestId("gate-vote")).ToContainText([]string{"Ada: Approve"}))
	}
	choose(people[1], "Reject")
	for _, p := range people {
		require.NoError(t, p.expect.Locator(p.page.GetByTestId("gate-vote")).ToHaveCount(2, playwright.LocatorAssertionsToHaveCountOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))
	}
	choose(people[2], "Approve")
	for _, p := range people {
		require.NoError(t, p.expect.Locator(p.page.GetByTestId("run-state")).ToHaveText("completed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))
	}
	votes, err := srv.app.Store().Votes(context.Background(), run.ID)
	require.NoError(t, err)
	require.Len(t, votes, 3)
}
