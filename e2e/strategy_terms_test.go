package e2e

import (
	"encoding/csv"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/report"
)

// queryField is the strategy form's text box of query n (from 1).
func queryField(page playwright.Page, n int) playwright.Locator {
	return page.GetByLabel("Query "+itoa(n), playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
}

// queryTexts are the strategy form's queries as shown.
func queryTexts(t *testing.T, page playwright.Page) []string {
	t.Helper()
	rows := page.GetByTestId("query-row")
	n, err := rows.Count()
	require.NoError(t, err)
	var out []string
	for i := 1; i <= n; i++ {
		v, err := queryField(page, i).InputValue()
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

// TestExcludeTermReachesEveryQueryAsSent is defect 5 of issue 16 in the
// browser: the researcher adds the exclusion "computer memory" and
// rewrites query 1 at the strategy checkpoint, iterates with feedback (the
// builder rewrites the queries) and rewrites query 1 again; the run's
// search-strategy report lists the exclusion, and every query it says was
// sent, in both iterations, carries it. On the old code the query the
// researcher rewrote in iteration 2 (where the exclusion was already in
// the proposal, so no change to fold in) was sent without it while the
// report listed "exclude: computer memory".
func TestExcludeTermReachesEveryQueryAsSent(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")
	require.NoError(t, queryField(page, 1).Fill("sleep memory replay"))
	require.NoError(t, page.GetByLabel("Exclude terms (comma-separated)").Fill("computer memory"))
	require.NoError(t, button(page, "Save edits & continue").Click())

	review := page.GetByTestId("checkpoint-review")
	require.NoError(t, expect.Locator(review).ToBeVisible(afterWork()))
	id, err := page.GetByTestId("paper").First().GetAttribute("data-paper-id")
	require.NoError(t, err)
	require.NoError(t, markRadio(page, id, "Relevant").Check())
	require.NoError(t, expect.Locator(page.Locator(`[data-testid="paper"][data-paper-id="`+id+`"] [data-testid="mark-saved"]`)).ToBeVisible())
	require.NoError(t, page.GetByLabel("Feedback for the next iteration").Fill("more on reactivation"))
	require.NoError(t, button(page, "Iterate with this feedback").Click())

	strategy := page.GetByTestId("checkpoint-strategy")
	require.NoError(t, expect.Locator(strategy).ToContainText("iteration 2", afterWorkText()))
	require.NoError(t, expect.Locator(page.GetByLabel("Exclude terms (comma-separated)")).ToHaveValue("computer memory"))
	require.NoError(t, queryField(page, 1).Fill("memory reactivation during sleep"))
	require.NoError(t, button(page, "Save edits & continue").Click())
	require.NoError(t, expect.Locator(review).ToContainText("iteration 2", afterWorkText()))
	require.NoError(t, button(page, "Approve and finish").Click())
	require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToBeVisible(afterWork()))

	md := string(download(t, page, page.GetByTestId("report-md")))
	require.Contains(t, md, "exclude: computer memory", "the report lists the exclusion")

	rows, err := csv.NewReader(strings.NewReader(string(download(t, page, page.GetByTestId("report-csv"))))).ReadAll()
	require.NoError(t, err)
	col := func(name string) int { return slices.Index(report.CSVHeader(), name) }
	sent := map[string][]string{}
	for _, row := range rows[1:] {
		if row[col("source_kind")] != "search" || row[col("query_as_sent")] == "" {
			continue
		}
		sent[row[col("iteration")]] = append(sent[row[col("iteration")]], row[col("query_as_sent")])
	}
	require.NotEmpty(t, sent["1"], "iteration 1's queries are reported")
	require.NotEmpty(t, sent["2"], "iteration 2's queries are reported")
	for it, qs := range sent {
		for _, q := range qs {
			require.Contains(t, strings.ToLower(q), "computer memory", "iteration %s: a query as sent without the exclusion", it)
		}
	}
	require.True(t, slices.ContainsFunc(sent["2"], func(q string) bool { return strings.Contains(q, "reactivation") }),
		"the rewritten query was sent: %q", sent["2"])
}

// TestFeedbackNotOnlyIsWanted is defect 6 of issue 16 in the browser, on
// the demo library: the researcher marks a survey of deep learning in
// medical imaging relevant and writes "…not only medical imaging: I also
// want ImageNet and vision transformers." At the next iteration the
// strategy form searches ImageNet and vision transformers (listed as
// learned from the feedback) and excludes nothing about medical imaging,
// and the paper marked relevant is found again. On the old code the
// feedback became the exclusion -"medical imaging", which removed that
// paper, and ImageNet and vision transformers were ignored.
func TestFeedbackNotOnlyIsWanted(t *testing.T) {
	t.Parallel()
	s := startDemoApp(t)
	page, expect := openPage(t, s.url)
	startRun(t, page, expect, "Ada", "deep learning for medical image classification")
	require.NoError(t, button(page, "Approve").Click())

	review := page.GetByTestId("checkpoint-review")
	require.NoError(t, expect.Locator(review).ToBeVisible(afterWork()))
	survey := page.GetByTestId("paper").Filter(playwright.LocatorFilterOptions{HasText: "A survey on deep learning in medical image analysis"})
	require.NoError(t, expect.Locator(survey).ToHaveCount(1))
	id, err := survey.GetAttribute("data-paper-id")
	require.NoError(t, err)
	require.NoError(t, markRadio(page, id, "Relevant").Check())
	require.NoError(t, expect.Locator(survey.GetByTestId("mark-saved")).ToBeVisible())
	require.NoError(t, page.GetByLabel("Feedback for the next iteration").
		Fill("Good start, but not only medical imaging: I also want ImageNet and vision transformers."))
	require.NoError(t, button(page, "Iterate with this feedback").Click())

	strategy := page.GetByTestId("checkpoint-strategy")
	require.NoError(t, expect.Locator(strategy).ToContainText("iteration 2", afterWorkText()))
	queries := strings.Join(queryTexts(t, page), "\n")
	require.Contains(t, strings.ToLower(queries), "imagenet", "ImageNet is searched: %s", queries)
	require.Contains(t, strings.ToLower(queries), "vision transformers", "vision transformers are searched: %s", queries)
	require.NotRegexp(t, regexp.MustCompile(`(?i)(-|\bNOT\s+)"?medical imaging`), queries, "medical imaging is not excluded")
	excl, err := page.GetByLabel("Exclude terms (comma-separated)").InputValue()
	require.NoError(t, err)
	require.NotContains(t, strings.ToLower(excl), "medical imaging")
	// The form says what it read, and where from.
	learned := page.GetByTestId("learned-terms")
	for _, term := range []string{"ImageNet", "vision transformers"} {
		row := learned.Locator("div").Filter(playwright.LocatorFilterOptions{HasText: term})
		require.NoError(t, expect.Locator(row.First()).ToContainText("searched beside the first concept"))
		require.NoError(t, expect.Locator(row.First()).ToContainText("read in your feedback"))
	}
	require.NoError(t, expect.Locator(learned.Locator("div").Filter(playwright.LocatorFilterOptions{HasText: "excluded from every query"}).
		Filter(playwright.LocatorFilterOptions{HasText: "medical imaging"})).ToHaveCount(0))

	require.NoError(t, button(page, "Approve").Click())
	require.NoError(t, expect.Locator(review).ToContainText("iteration 2", afterWorkText()))
	require.NoError(t, expect.Locator(markRadio(page, id, "Relevant")).ToBeChecked(), "the paper marked relevant is still found")
}
