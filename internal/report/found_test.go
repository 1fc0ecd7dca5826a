package report_test

import (
	"encoding/json"
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
	// As stored: JSON, so this test reads the same run on code that
	// predates the totals (where it fails: the column said 25).
	const stored = `{"iteration":1,"searched_at":"2025-03-04T05:06:07Z","result_count":40,` +
		`"strategy":{"queries":[{"text":"sleep"},{"text":"raft"},{"text":"paxos"}],"sources":["local","crossref"],"year_range":{},"max_results_per_source":25,"filters":{}},` +
		`"sources":{"local":{"count":45,"queries":["sleep","raft","paxos"],"query_results":[{"count":25,"total":49},{"count":25,"total":34},{"count":3,"total":3}]},` +
		`"crossref":{"count":25,"queries":["sleep","",""],"query_results":[{"count":25,"total":1200},{"count":0},{"count":0}]}},` +
		`"dedup":{"input":70,"output":60}}`
	var h research.IterationRecord
	require.NoError(t, json.Unmarshal([]byte(stored), &h))
	rs := pipeline.RunState{Question: "consensus", Workflow: research.WorkflowState{History: []research.IterationRecord{h}}}

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

// TestReportSaysWhichPagesWereFetched: after "Show more" fetched the
// second page of the local library's query at the review, the report
// says per query and per source how many pages were fetched and what they
// came to ("49 found, 2 pages"), never more shown than found.
func TestReportSaysWhichPagesWereFetched(t *testing.T) {
	t.Parallel()
	const stored = `{"iteration":1,"searched_at":"2025-03-04T05:06:07Z","result_count":60,` +
		`"strategy":{"queries":[{"text":"sleep"},{"text":"raft"}],"sources":["local"],"year_range":{},"max_results_per_source":25,"filters":{}},` +
		`"sources":{"local":{"count":74,"queries":["sleep","raft"],"query_results":[{"count":49,"total":49,"fetched":49,"pages":2},{"count":25,"total":34}]}},` +
		`"dedup":{"input":74,"output":60}}`
	var h research.IterationRecord
	require.NoError(t, json.Unmarshal([]byte(stored), &h))
	rs := pipeline.RunState{Question: "consensus", Workflow: research.WorkflowState{History: []research.IterationRecord{h}}}
	local := section(markdown(t, rs), "### local")
	require.Contains(t, local, "| 1 | `sleep` | 2025-03-04T05:06:07Z | any | 25 | 49 (2 pages) | — |\n")
	require.Contains(t, local, "| 2 | `raft` | 2025-03-04T05:06:07Z | any | 25 | 25 of 34 | — |\n")
	require.Contains(t, local, "Records from this source: 74 (its queries' results merged; a record more than one query returned counts once); 74 shown of up to 83 found, 2 pages (the first, then 1 more the review asked for).\n")
}
