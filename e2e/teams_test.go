package e2e

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// teamPassword is every test account's password (at least 10 characters).
const teamPassword = "correct horse battery"

// startAccountsServer runs the real app with accounts (not open mode) on a
// fresh database, with the test app's offline search workflow.
func startAccountsServer(t *testing.T) *server {
	t.Helper()
	return startServerConfig(t, app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "quarry.db")},
		func(st *store.Store) (*engine.Registry, error) { return testapp.RegistryWithFiles(st) })
}

// setUpAdmin answers the first visit: / sends the browser to /setup, whose
// form creates the administrator and the first project and signs them in.
func setUpAdmin(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, email, name, project string) {
	t.Helper()
	_, err := page.Goto("/")
	require.NoError(t, err)
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/setup$`)))
	form := page.GetByTestId("setup-form")
	require.NoError(t, form.GetByLabel("E-mail").Fill(email))
	require.NoError(t, form.GetByLabel("Display name").Fill(name))
	require.NoError(t, form.GetByLabel("Password").Fill(teamPassword))
	require.NoError(t, form.GetByLabel("First project").Fill(project))
	require.NoError(t, button(page, "Create the administrator").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("home")).ToBeVisible())
}

// openProject goes to the project named name from the projects page and
// returns its page's path.
func openProject(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, name string) string {
	t.Helper()
	require.NoError(t, page.GetByTestId("nav-projects").Click())
	require.NoError(t, page.GetByTestId("projects").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true)}).Click())
	require.NoError(t, expect.Locator(page.GetByTestId("project-name")).ToHaveText(name))
	id, err := page.GetByTestId("project-page").GetAttribute("data-project-id")
	require.NoError(t, err)
	return "/projects/" + id
}

// createInvitation opens the project page at path, creates an invitation
// link for role and returns the link, which the page shows only once.
func createInvitation(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, path, role string) string {
	t.Helper()
	_, err := page.Goto(path)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("new-link")).ToHaveCount(0))
	form := page.GetByTestId("invitation-form")
	_, err = form.GetByLabel("Role").SelectOption(playwright.SelectOptionValues{Values: &[]string{role}})
	require.NoError(t, err)
	require.NoError(t, form.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Create an invitation link"}).Click())
	shown := page.GetByTestId("new-link")
	require.NoError(t, expect.Locator(shown).ToHaveAttribute("data-kind", "invitation"))
	link, err := shown.Locator("code").TextContent()
	require.NoError(t, err)
	link = strings.TrimSpace(link)
	require.Regexp(t, `^/invite/qi_\S+$`, link)
	return link
}

// acceptInvitation opens an invitation link in page (a browser signed in
// as no one), signs up and checks it lands signed in on the project's page.
func acceptInvitation(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, link, email, name, project string) {
	t.Helper()
	_, err := page.Goto(link)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(page.GetByTestId("invite-project")).ToHaveText(project))
	form := page.GetByTestId("invite-form")
	require.NoError(t, form.GetByLabel("E-mail").Fill(email))
	require.NoError(t, form.GetByLabel("Display name").Fill(name))
	require.NoError(t, form.GetByLabel("Password").Fill(teamPassword))
	require.NoError(t, button(page, "Create my account").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/projects/[^/]+$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("project-name")).ToHaveText(project))
	require.NoError(t, expect.Locator(page.GetByTestId("my-role")).ToHaveText("reviewer"))
}

// startTeamRun starts a search run from the home page as the signed-in
// person, with the strategy checkpoint off (and blind dual screening when
// dual), in project when the form asks for one, and waits for the review.
// It returns the run page's path.
func startTeamRun(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, question, project string, dual bool) string {
	t.Helper()
	_, err := page.Goto("/")
	require.NoError(t, err)
	form := page.GetByTestId("search-form")
	if n, err := form.GetByTestId("project-select").Count(); err == nil && n > 0 {
		_, err := form.GetByLabel("Project", playwright.LocatorGetByLabelOptions{Exact: playwright.Bool(true)}).
			SelectOption(playwright.SelectOptionValues{Labels: &[]string{project}})
		require.NoError(t, err)
	}
	require.NoError(t, form.GetByLabel("Research question").Fill(question))
	require.NoError(t, form.GetByLabel("Confirm the strategy before searching").Uncheck())
	if dual {
		require.NoError(t, form.GetByTestId("dual-screening").Check())
	}
	require.NoError(t, button(page, "Start").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[a-z0-9]+$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("checkpoint-review")).ToBeVisible(afterWork()))
	return "/runs/" + runIDOf(t, page)
}

// paperIDs are the ids of the papers under review on page, in order.
func paperIDs(t *testing.T, page playwright.Page) []string {
	t.Helper()
	papers, err := page.GetByTestId("paper").All()
	require.NoError(t, err)
	ids := make([]string, 0, len(papers))
	for _, p := range papers {
		id, err := p.GetAttribute("data-paper-id")
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// markSaved marks paper on page and waits until the save is answered.
func markSaved(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions, paper, mark string) {
	t.Helper()
	require.NoError(t, markRadio(page, paper, mark).Check())
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="paper"][data-paper-id="`+paper+`"] [data-testid="mark-saved"]`)).ToBeVisible())
}

// TestInvitationSignUpScreen: the first visitor sets up the administrator
// and, on the first project's page, creates an invitation for a reviewer;
// the reviewer signs up through the link in their own browser and lands in
// the project; the administrator starts a run; the reviewer opens it from
// their home page and marks a paper, which is saved. The reviewer is
// refused the administration page, and a browser signed in as no one is
// sent to sign in when it opens the run.
func TestInvitationSignUpScreen(t *testing.T) {
	t.Parallel()
	srv := startAccountsServer(t)
	admin, expect := openPage(t, srv.url)
	setUpAdmin(t, admin, expect, "ada@example.org", "Ada", "Sleep review")
	project := openProject(t, admin, expect, "Sleep review")
	link := createInvitation(t, admin, expect, project, "reviewer")

	reviewer, _ := openPage(t, srv.url)
	acceptInvitation(t, reviewer, expect, link, "grace@example.org", "Grace", "Sleep review")
	require.NoError(t, expect.Locator(reviewer.GetByTestId("members")).ToContainText("grace@example.org"))

	// The link worked once: it is gone from the project's pending invitations.
	_, err := admin.Goto(project)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(admin.GetByTestId("invitation")).ToHaveCount(0))
	require.NoError(t, expect.Locator(admin.GetByTestId("member")).ToHaveCount(2))

	const question = "sleep and memory consolidation"
	run := startTeamRun(t, admin, expect, question, "Sleep review", false)
	runID := runIDOf(t, admin)

	// The reviewer finds the run on their home page.
	_, err = reviewer.Goto("/")
	require.NoError(t, err)
	item := reviewer.Locator(`[data-testid="run-item"][data-run-id="` + runID + `"]`)
	require.NoError(t, item.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: question}).Click())
	require.NoError(t, expect.Page(reviewer).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(run)+`$`)))
	require.NoError(t, expect.Locator(reviewer.GetByTestId("checkpoint-review")).ToBeVisible())
	ids := paperIDs(t, reviewer)
	require.NotEmpty(t, ids)
	markSaved(t, reviewer, expect, ids[0], "Relevant")
	_, err = reviewer.Reload()
	require.NoError(t, err)
	require.NoError(t, expect.Locator(markRadio(reviewer, ids[0], "Relevant")).ToBeChecked())
	// The administrator (not dual screening) sees the reviewer's mark.
	_, err = admin.Goto(run)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(markRadio(admin, ids[0], "Relevant")).ToBeChecked())

	res, err := reviewer.Goto("/admin/accounts")
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, res.Status(), "a reviewer is no administrator")

	nobody, _ := openPage(t, srv.url)
	_, err = nobody.Goto(run)
	require.NoError(t, err)
	require.NoError(t, expect.Page(nobody).ToHaveURL(regexp.MustCompile(`/login\?next=`+regexp.QuoteMeta("%2Fruns%2F"+runID)+`$`)))
	require.NoError(t, expect.Locator(nobody.GetByTestId("login-form")).ToBeVisible())
}

// TestBlindDualScreeningBrowser: two reviewers screen a blind dual run in
// their own browsers. The second sees none of the first's marks; their
// disagreement is listed on the conflicts page without a resolve form for
// either of them; the administrator, a third person, resolves it, sees
// the pair's agreement (Cohen's kappa) and approves, and the run completes.
func TestBlindDualScreeningBrowser(t *testing.T) {
	t.Parallel()
	srv := startAccountsServer(t)
	admin, expect := openPage(t, srv.url)
	setUpAdmin(t, admin, expect, "ada@example.org", "Ada", "Sleep review")
	project := openProject(t, admin, expect, "Sleep review")
	linkA := createInvitation(t, admin, expect, project, "reviewer")
	linkB := createInvitation(t, admin, expect, project, "reviewer")
	a, _ := openPage(t, srv.url)
	acceptInvitation(t, a, expect, linkA, "grace@example.org", "Grace", "Sleep review")
	b, _ := openPage(t, srv.url)
	acceptInvitation(t, b, expect, linkB, "linus@example.org", "Linus", "Sleep review")

	run := startTeamRun(t, admin, expect, "sleep and memory consolidation", "Sleep review", true)
	require.NoError(t, expect.Locator(admin.GetByTestId("dual-screening-notice")).ToBeVisible())
	ids := paperIDs(t, admin)
	require.GreaterOrEqual(t, len(ids), 2)
	p1, p2 := ids[0], ids[1]

	_, err := a.Goto(run)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(a.GetByTestId("checkpoint-review")).ToBeVisible())
	markSaved(t, a, expect, p1, "Relevant")
	markSaved(t, a, expect, p2, "Relevant")

	// Blind: B's form shows none of A's marks.
	_, err = b.Goto(run)
	require.NoError(t, err)
	require.NoError(t, expect.Locator(b.GetByTestId("checkpoint-review")).ToBeVisible())
	for _, p := range []string{p1, p2} {
		require.NoError(t, expect.Locator(markRadio(b, p, "Relevant")).Not().ToBeChecked())
		require.NoError(t, expect.Locator(markRadio(b, p, "Unsure")).ToBeChecked())
	}
	markSaved(t, b, expect, p1, "Relevant")   // agrees with A
	markSaved(t, b, expect, p2, "Irrelevant") // disagrees

	require.NoError(t, b.GetByTestId("conflicts-link").Click())
	require.NoError(t, expect.Locator(b.GetByTestId("conflicts-page")).ToBeVisible())
	conflict := b.Locator(`[data-testid="conflict"][data-paper-id="` + p2 + `"]`)
	require.NoError(t, expect.Locator(conflict).ToBeVisible())
	require.NoError(t, expect.Locator(b.GetByTestId("conflict")).ToHaveCount(1), "the agreed paper is no conflict")
	marks := conflict.GetByTestId("conflict-mark")
	require.NoError(t, expect.Locator(marks).ToHaveCount(2))
	require.NoError(t, expect.Locator(marks.Filter(playwright.LocatorFilterOptions{HasText: "Grace"})).ToContainText("relevant"))
	require.NoError(t, expect.Locator(marks.Filter(playwright.LocatorFilterOptions{HasText: "Linus"})).ToContainText("irrelevant"))
	require.NoError(t, expect.Locator(b.GetByTestId("resolve-form")).ToHaveCount(0), "one of the pair does not resolve")

	// The administrator, who screened nothing, resolves it.
	_, err = admin.Goto(run + "/conflicts")
	require.NoError(t, err)
	conflict = admin.Locator(`[data-testid="conflict"][data-paper-id="` + p2 + `"]`)
	require.NoError(t, expect.Locator(conflict.GetByTestId("resolve-form")).ToBeVisible())
	require.NoError(t, conflict.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Resolve: irrelevant"}).Click())
	require.NoError(t, expect.Locator(admin.GetByTestId("conflicts-empty")).ToBeVisible())
	require.NoError(t, expect.Locator(admin.GetByTestId("conflict")).ToHaveCount(0))
	require.NoError(t, expect.Locator(admin.GetByTestId("screening-counts")).ToContainText("1 agreed · 1 resolved · 0 in conflict"))
	// Grace and Linus screened 2 papers and agreed on 1; Grace marked both
	// relevant, Linus one: p_o = 1/2, p_e = 1·1/2 + 0·1/2 = 1/2, κ = 0.
	row := admin.GetByTestId("agreement-row")
	require.NoError(t, expect.Locator(row).ToHaveCount(1))
	require.NoError(t, expect.Locator(row).ToContainText("Grace · Linus"))
	require.NoError(t, expect.Locator(row.GetByTestId("kappa")).ToHaveText("0.00"))

	require.NoError(t, admin.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "← back to the run"}).Click())
	require.NoError(t, expect.Locator(admin.GetByTestId("checkpoint-review")).ToBeVisible())
	require.NoError(t, button(admin, "Approve and finish").Click())
	require.NoError(t, expect.Locator(admin.GetByTestId("status-badge")).ToContainText("completed", afterWorkText()))
	require.NoError(t, expect.Locator(admin.Locator(`[data-testid="final-count"][data-set="relevant"]`)).ToHaveText("1"))
	require.NoError(t, expect.Locator(admin.Locator(`[data-testid="final-count"][data-set="irrelevant"]`)).ToHaveText("1"))
}
