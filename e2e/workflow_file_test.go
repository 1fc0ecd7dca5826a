package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// TestStartWorkflowFileAndDecideItsGate (issue 17): a workflow file in
// QUARRY_WORKFLOWS_DIR is started from its form on /workflows; its run's
// page shows the gate with its options and the workflow panel with the
// stages' states and the drawing; choosing an option goes on through the
// delay to the end, which the page shows.
func TestStartWorkflowFileAndDecideItsGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "review-round.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: review-round, title: "Review round"}
params:
  - {name: topic, type: string, required: true, description: "What the round is about"}
context: {topic: "{{ params.topic }}"}
stages:
  - id: prepare
    type: set
    set: {ready: "true"}
  - id: decide
    type: gate
    context: [topic]
    options:
      - {label: "Go on", next: pause}
      - {label: "Stop", next: complete}
  - id: pause
    type: delay
    duration: 1s
`), 0o644))
	srv := startServerConfig(t, app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "quarry.db"), WorkflowsDir: dir},
		func(st *store.Store) (*engine.Registry, error) { return testapp.RegistryWithFiles(st) })
	page, expect := openPage(t, srv.url)
	_, err := page.Goto("/")
	require.NoError(t, err)
	signIn(t, page, expect, "Ada")
	_, err = page.Goto("/workflows")
	require.NoError(t, err)

	form := page.Locator(`[data-workflow="review-round"] [data-testid="start-workflow"]`)
	require.NoError(t, form.GetByLabel("topic").Fill("sleep and memory"))
	require.NoError(t, form.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Start Review round"}).Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))

	gate := page.GetByTestId("checkpoint-gate")
	require.NoError(t, expect.Locator(gate).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(gate.GetByTestId("gate-context")).ToContainText("sleep and memory"))
	panel := page.GetByTestId("run-workflow")
	require.NoError(t, panel.Locator("summary").Click())
	require.NoError(t, expect.Locator(panel.Locator(`[data-stage="prepare"]`)).ToHaveAttribute("data-state", "completed"))
	require.NoError(t, expect.Locator(panel.Locator(`[data-stage="decide"]`)).ToHaveAttribute("data-state", "waiting"))
	graph := panel.GetByTestId("run-graph")
	require.NoError(t, expect.Locator(graph).ToBeVisible())
	loaded, err := graph.Evaluate(`(img) => img.complete && img.naturalWidth > 0`, nil)
	require.NoError(t, err)
	require.Equal(t, true, loaded, "the drawing loaded")

	require.NoError(t, gate.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Go on"}).Click())
	require.NoError(t, expect.Locator(page.GetByTestId("run-state")).ToHaveText("completed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-gate")).ToHaveCount(0))
}
