package report_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestSourceWarnings: what a source said about results it returned
// (PubMed leaving out a term) is reported as a warning, apart from errors:
// the Markdown lists it under the source's table, whose Error column stays
// empty, and the CSV has it in its own column on the row of the query it
// is about.
func TestSourceWarnings(t *testing.T) {
	t.Parallel()
	const own = "PubMed did not run the query as written; the 3 papers are for the query it ran: terms not found, left out: qqqqzzzz"
	const warning = "query 1: " + own
	rs := pipeline.RunState{Question: "sleep spindles", Workflow: research.WorkflowState{History: []research.IterationRecord{{
		Iteration: 1, SearchedAt: at1, ResultCount: 3,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "sleep qqqqzzzz"}, {Text: "spindles"}},
			Sources: []string{"pubmed"}, MaxResultsPerSource: 10},
		Sources: map[string]research.SourceResult{"pubmed": {Count: 3, Warnings: []string{warning},
			Queries:      []string{"sleep[tiab] AND qqqqzzzz[tiab]", "spindles[tiab]"},
			QueryResults: []research.QueryResult{{Count: 3, Warning: own}, {}}}},
		Dedup: research.DedupStats{Input: 3, Output: 3}}}}}

	pubmed := section(markdown(t, rs), "### pubmed")
	require.Contains(t, pubmed, "| 1 | `sleep[tiab] AND qqqqzzzz[tiab]` | 2025-03-04T05:06:07Z | any | 10 | 3 | — |\n", "no error")
	require.Contains(t, pubmed, "\nWarnings (not errors: the results above stand, for the query as the source ran it):\n\n- "+warning+"\n")

	rows := csvRows(t, rs)
	require.Len(t, rows, 2)
	var warnings []string
	for _, m := range rows {
		require.Equal(t, "", m["error"])
		warnings = append(warnings, m["warnings"])
	}
	require.Equal(t, []string{own, ""}, warnings, "the warning is on its query's row only")
}
