package report_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestResultsSayWhatTheLimitCut is defect 7 of issue 16: the local
// library matched 49 papers for one query and 34 for another, the limit
// let 25 of each through, and the report's Results column said 25, the
// limit, as if that were all. It now says "25 of 49", the CSV has the
// total beside the count, and the source's line says what was cut. A
// query that was not cut, or whose source did not say, shows its count.
func TestResultsSayWhatTheLimitCut(t *testing.T) {
	t.Parallel()
	rs := pipeline.RunState{Question: "consensus", Workflow: research.WorkflowState{History: []research.IterationRecord{{
		Iteration: 1, SearchedAt: at1, ResultCount: 40,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "sleep"}, {Text: "raft"}, {Text: "paxos"}},
			Sources: []string{"local", "crossref"}, MaxResultsPerSource: 25},
		Sources: map[string]research.SourceResult{
			"local": {Count: 45, Queries: []string{"sleep", "raft", "paxos"},
				QueryResults: []research.QueryResult{{Count: 25, Total: 49}, {Count: 25, Total: 34}, {Count: 3, Total: 3}}},
			"crossref": {Count: 25, Queries: []string{"sleep", "", ""},
				QueryResults: []research.QueryResult{{Count: 25, Total: 1200}, {}, {}}},
		},
		Dedup: research.DedupStats{Input: 70, Output: 60},
	}}}}

	md := markdown(t, rs)
	local := section(md, "### local")
	for _, want := range []string{
		"| 1 | `sleep` | 2025-03-04T05:06:07Z | any | 25 | 25 of 49 | — |\n",
		"| 2 | `raft` | 2025-03-04T05:06:07Z | any | 25 | 25 of 34 | — |\n",
		"| 3 | `paxos` | 2025-03-04T05:06:07Z | any | 25 | 3 | — |\n",
		"Records from this source: 45 (its queries' results merged; a record more than one query returned counts once); 45 shown of up to 86 found.\n",
	} {
		require.Contains(t, local, want)
	}
	crossref := section(md, "### crossref")
	require.Contains(t, crossref, "| 1 | `sleep` | 2025-03-04T05:06:07Z | any | 25 | 25 of 1200 | — |\n")
	require.Contains(t, crossref, "; 25 shown of 1200 found.\n", "one query sent: the total is exact")

	var totals, results []string
	for _, r := range csvRows(t, rs) {
		if r["source"] == "local" {
			totals, results = append(totals, r["total_found"]), append(results, r["results"])
		}
	}
	require.Equal(t, []string{"49", "34", "3"}, totals)
	require.Equal(t, []string{"25", "25", "3"}, results, "results stays a number a spreadsheet sums")
}
