package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/report"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// markdown renders the Markdown report of rs for a run with ID "r".
func markdown(t *testing.T, rs pipeline.RunState) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.SearchStrategyMarkdown(&buf, report.RunInfo{ID: "r"}, rs))
	return buf.String()
}

// csvRows reads the CSV report of rs into one map (column → value) per row.
func csvRows(t *testing.T, rs pipeline.RunState) []map[string]string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.SearchStrategyCSV(&buf, rs))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, report.CSVHeader(), rows[0])
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, col := range rows[0] {
			m[col] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// section is the Markdown report's part about one source, up to the
// iteration's duplicates line.
func section(md, heading string) string {
	rest := md[strings.Index(md, heading):]
	return rest[:strings.Index(rest, "- Duplicates:")]
}

// TestPerQueryResults is the audit's case: four queries to the local
// library, the first matching one paper, 24 records from the source once
// its queries' results are merged. Each row shows its own query's count
// and error, never the source's total, and the report says what the
// source's total is; summing the CSV's results gives the queries' records
// before merging, and source_records says what the source contributed.
func TestPerQueryResults(t *testing.T) {
	t.Parallel()
	rs := pipeline.RunState{Question: "sleep spindles", Workflow: research.WorkflowState{History: []research.IterationRecord{{
		Iteration: 2, SearchedAt: at1, ResultCount: 24,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "spindles"}, {Text: "sleep"}, {Text: "memory"}, {Text: "eeg"}},
			Sources: []string{"local"}, MaxResultsPerSource: 25},
		Sources: map[string]research.SourceResult{"local": {Count: 24, Error: "query 4: locked",
			Queries:      []string{"spindles", "sleep", "memory", "eeg"},
			QueryResults: []research.QueryResult{{Count: 1}, {Count: 20}, {Count: 12}, {Count: 2, Error: "locked"}}}},
		Dedup: research.DedupStats{Input: 24, Output: 24},
	}}}}

	md := markdown(t, rs)
	local := section(md, "### local")
	for _, want := range []string{
		"| 1 | `spindles` | 2025-03-04T05:06:07Z | any | 25 | 1 | — |\n",
		"| 2 | `sleep` | 2025-03-04T05:06:07Z | any | 25 | 20 | — |\n",
		"| 3 | `memory` | 2025-03-04T05:06:07Z | any | 25 | 12 | — |\n",
		"| 4 | `eeg` | 2025-03-04T05:06:07Z | any | 25 | 2 | locked |\n",
		"\nRecords from this source: 24 (its queries' results merged; a record more than one query returned counts once).\n",
	} {
		require.Contains(t, local, want)
	}
	require.NotContains(t, local, "| 24 |", "the source's total is on no query's row")
	require.Contains(t, md, "- Records retrieved (per source, its queries' results merged; before deduplication across sources): 24 (local 24)\n")

	sum := 0
	var errs []string
	for _, r := range csvRows(t, rs) {
		n, err := strconv.Atoi(r["results"])
		require.NoError(t, err)
		sum += n
		errs = append(errs, r["error"])
		require.Equal(t, "24", r["source_records"])
	}
	require.Equal(t, 35, sum, "the queries' own records, before merging")
	require.Equal(t, []string{"", "", "", "locked"}, errs, "each query's own error")
}

// TestOldFormatRun: a run stored before each query's result was kept has
// only the source's count (and its error and warnings naming their
// queries). The report must not put that count on any query's row: it
// says it once, for all the queries together, and that per-query counts
// were not recorded; errors and warnings go to the rows of the queries
// they name.
func TestOldFormatRun(t *testing.T) {
	t.Parallel()
	const stored = `{"iteration":2,"strategy":{"queries":[{"text":"spindles"},{"text":"sleep"},{"text":"memory"}],` +
		`"sources":["local","pubmed"],"year_range":{},"max_results_per_source":25,"filters":{}},"result_count":30,` +
		`"searched_at":"2025-03-04T05:06:07Z",` +
		`"sources":{"local":{"count":24,"error":"query 2: disk I/O error; retry later","queries":["spindles","sleep","memory"]},` +
		`"pubmed":{"count":6,"warnings":["query 3: PubMed did not run the query as written; left out: zzz"],"queries":["spindles[tiab]","sleep[tiab]","memory[tiab]"]}},` +
		`"dedup":{"input":30,"output":29,"merged":1}}`
	var h research.IterationRecord
	require.NoError(t, json.Unmarshal([]byte(stored), &h))
	rs := pipeline.RunState{Question: "sleep spindles", Workflow: research.WorkflowState{History: []research.IterationRecord{h}}}

	md := markdown(t, rs)
	local := section(md, "### local")
	for _, want := range []string{
		"| 1 | `spindles` | 2025-03-04T05:06:07Z | any | 25 | not recorded | — |\n",
		"| 2 | `sleep` | 2025-03-04T05:06:07Z | any | 25 | not recorded | disk I/O error; retry later |\n",
		"| 3 | `memory` | 2025-03-04T05:06:07Z | any | 25 | not recorded | — |\n",
		"\nRecords from this source, all its queries together: 24 (this search did not record each query's own count).\n",
	} {
		require.Contains(t, local, want)
	}
	require.NotContains(t, local, "| 24 |", "the source's total is on no query's row")
	require.Contains(t, section(md, "### pubmed"), "\nRecords from this source, all its queries together: 6 (")
	require.Contains(t, md, "- Records retrieved (per source, its queries' results merged; before deduplication across sources): 30 (local 24, pubmed 6)\n")

	rows := csvRows(t, rs)
	require.Len(t, rows, 6)
	var errs, warnings []string
	for _, r := range rows {
		require.Equal(t, "", r["results"], "unknown per query, not the source's count")
		require.Equal(t, map[string]string{"local": "24", "pubmed": "6"}[r["source"]], r["source_records"])
		errs = append(errs, r["error"])
		warnings = append(warnings, r["warnings"])
	}
	require.Equal(t, []string{"", "disk I/O error; retry later", "", "", "", ""}, errs, "the error on the row of the query it names")
	require.Equal(t, []string{"", "", "", "", "", "PubMed did not run the query as written; left out: zzz"}, warnings)
}

// TestOldFormatErrorNamingNoQuery: an old run's error that names no
// query, although the source had several, belongs to no row in
// particular: the Markdown says it once under the table, and the CSV,
// which has no other place for it, keeps it on each of the source's rows.
func TestOldFormatErrorNamingNoQuery(t *testing.T) {
	t.Parallel()
	rs := pipeline.RunState{Question: "q", Workflow: research.WorkflowState{History: []research.IterationRecord{{
		Iteration: 1, SearchedAt: at1, ResultCount: 0,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "a"}, {Text: "b"}}, Sources: []string{"crossref"}, MaxResultsPerSource: 5},
		Sources:  map[string]research.SourceResult{"crossref": {Error: "503 service unavailable", Queries: []string{"a", "b"}}},
	}}}}
	cr := section(markdown(t, rs), "### crossref")
	require.Contains(t, cr, "| 1 | `a` | 2025-03-04T05:06:07Z | any | 5 | not recorded | see below |\n")
	require.Contains(t, cr, "\nError (not recorded per query): 503 service unavailable\n")
	for _, r := range csvRows(t, rs) {
		require.Equal(t, "503 service unavailable", r["error"])
	}
}

// TestCancelledQueryNotSent: a query the search's cancellation caught
// before it left is reported as not sent with its own reason, not as one
// the source could not express.
func TestCancelledQueryNotSent(t *testing.T) {
	t.Parallel()
	const why = "internal: search cancelled before it was sent: context canceled"
	rs := pipeline.RunState{Question: "q", Workflow: research.WorkflowState{History: []research.IterationRecord{{
		Iteration: 1, SearchedAt: at1,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "a"}, {Text: "b"}}, Sources: []string{"arxiv"}, MaxResultsPerSource: 5},
		Sources: map[string]research.SourceResult{"arxiv": {Count: 3, Error: "query 2: " + why, Queries: []string{"a", ""},
			QueryResults: []research.QueryResult{{Count: 3}, {Error: why}}}},
	}}}}
	require.Contains(t, markdown(t, rs), "| 2 | (not sent) | — | — | — | — | not sent: "+why+" |\n")
	rows := csvRows(t, rs)
	require.Equal(t, "not sent: "+why, rows[1]["error"])
	require.Equal(t, "", rows[1]["results"])
}
