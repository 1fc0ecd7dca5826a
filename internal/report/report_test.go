package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/report"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

var at1 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// runState is a run of three iterations: a search of two sources (one
// query failing, one query not expressible for a source), a strategy
// rejected before searching, and a search whose queries need care to copy
// (a pipe, back ticks, a line break), plus an iteration recorded before
// per-source results were kept.
func runState() pipeline.RunState {
	paper := func(id, title string) research.ScoredPaper {
		return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: title}}
	}
	a, b, c := paper("doi:10.1/a", "Sleep and memory"), paper("doi:10.1/b", "Caffeine"), paper("doi:10.1/c", "Naps")
	return pipeline.RunState{
		Question:         "sleep and memory consolidation",
		Intent:           &research.ParsedIntent{Topic: "sleep", Concepts: []research.Concept{{Term: "sleep", Synonyms: []string{"nap"}}, {Term: "memory"}}},
		Collection:       &research.PaperCollection{Papers: []research.ScoredPaper{a, c}},
		Final:            &research.PaperCollection{Papers: []research.ScoredPaper{a, c}},
		MarkedIrrelevant: []research.ScoredPaper{b},
		Workflow: research.WorkflowState{AccumulatedPapers: []research.ScoredPaper{a}, History: []research.IterationRecord{
			{Iteration: 1, ResultCount: 5, SearchedAt: at1,
				Strategy: research.SearchStrategy{
					Queries: []research.Query{{Text: "sleep AND memory", PerSource: map[string]string{"openalex": "sleep memory", "pubmed": `sleep[tiab] AND memory[tiab]`}},
						{Text: "nap*", PerSource: map[string]string{"openalex": "", "pubmed": "nap*[tiab]"}}},
					Sources: []string{"openalex", "pubmed"}, YearRange: research.YearRange{From: 2010, To: 2020}, MaxResultsPerSource: 25,
					Filters: research.Filters{IncludeTerms: []string{"adults", "humans"}, ExcludeTerms: []string{"rats"}}},
				Sources: map[string]research.SourceResult{
					"openalex": {Count: 6, Queries: []string{"sleep memory", ""}, QueryResults: []research.QueryResult{{Count: 6}, {}}},
					"pubmed": {Count: 0, Error: "query 1: 503 service unavailable", Queries: []string{`sleep[tiab] AND memory[tiab]`, "nap*[tiab]"},
						QueryResults: []research.QueryResult{{Error: "503 service unavailable"}, {}}}},
				Dedup: research.DedupStats{Input: 6, Output: 5, Merged: 1},
				Feedback: &research.UserFeedback{MarkedRelevant: []string{a.ID}, MarkedIrrelevant: []string{b.ID},
					FreeTextFeedback: "more on naps\nfewer animal studies"}},
			{Iteration: 2, Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "naps"}}, Sources: []string{"openalex"}},
				Feedback: &research.UserFeedback{FreeTextFeedback: "too narrow"}},
			{Iteration: 3, ResultCount: 2, SearchedAt: at1.Add(time.Hour),
				Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "a | b"}, {Text: "x ``y`` z"}, {Text: "line\nbreak"}},
					Sources: []string{"openalex"}, MaxResultsPerSource: 10},
				Sources: map[string]research.SourceResult{"openalex": {Count: 2, Queries: []string{"a | b", "x ``y`` z", "line\nbreak"},
					QueryResults: []research.QueryResult{{Count: 2}, {Count: 1}, {}}}},
				Dedup: research.DedupStats{Input: 2, Output: 2}},
			{Iteration: 4, ResultCount: 3, // recorded before searched_at and sources existed
				Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "old", PerSource: map[string]string{"pubmed": "old[tiab]"}}},
					Sources: []string{"pubmed"}, MaxResultsPerSource: 10}},
		}},
	}
}

func TestSearchStrategyCSV(t *testing.T) {
	t.Parallel()
	got := csvRows(t, runState())
	require.Len(t, got, 8, "iteration 1: 2 sources × 2 queries; iteration 2 rejected: none; iteration 3: 3 queries; iteration 4: 1")
	row := func(it, src, q string) map[string]string {
		for _, m := range got {
			if m["iteration"] == it && m["source"] == src && m["query_as_sent"] == q {
				return m
			}
		}
		t.Fatalf("no row for %s/%s/%q in %v", it, src, q, got)
		return nil
	}
	pm := row("1", "pubmed", `sleep[tiab] AND memory[tiab]`)
	require.Equal(t, map[string]string{"iteration": "1", "source": "pubmed", "query_as_sent": `sleep[tiab] AND memory[tiab]`,
		"source_kind": "search", "searched_at": "2025-03-04T05:06:07Z", "year_from": "2010", "year_to": "2020",
		"max_results": "25", "results": "0", "error": "503 service unavailable", "total_found": "", "warnings": "", "source_records": "0",
		"dedup_input": "6", "dedup_output": "5", "merged": "1", "marked_relevant": "1", "marked_irrelevant": "1"}, pm)
	require.Equal(t, "6", row("1", "openalex", "sleep memory")["results"])
	require.Equal(t, "", row("1", "pubmed", "nap*[tiab]")["error"], "the other query's error is not this one's")
	notSent := row("1", "openalex", "")
	require.Contains(t, notSent["error"], "not sent")
	require.Equal(t, "", notSent["results"], "nothing sent, nothing returned")
	require.Equal(t, "6", notSent["source_records"])
	require.Equal(t, []string{"", "", "", ""}, []string{notSent["searched_at"], notSent["year_from"], notSent["year_to"], notSent["max_results"]},
		"a query not sent carried nothing")
	for _, q := range []string{"a | b", "x ``y`` z", "line\nbreak"} {
		r := row("3", "openalex", q)
		require.Equal(t, "2025-03-04T06:06:07Z", r["searched_at"])
		require.Equal(t, "", r["year_from"], "an open bound is empty")
		require.Equal(t, "0", r["marked_relevant"])
		require.Equal(t, "2", r["source_records"])
	}
	require.Equal(t, []string{"2", "1", "0"}, []string{row("3", "openalex", "a | b")["results"], row("3", "openalex", "x ``y`` z")["results"],
		row("3", "openalex", "line\nbreak")["results"]}, "each query's own results")
	old := row("4", "pubmed", "old[tiab]")
	require.Equal(t, "", old["searched_at"], "not recorded for old runs")
	require.Equal(t, "", old["results"], "unknown, not zero")
	require.Equal(t, "", old["source_records"], "unknown, not zero")
}

func TestSearchStrategyMarkdown(t *testing.T) {
	t.Parallel()
	rs := runState()
	var buf bytes.Buffer
	info := report.RunInfo{ID: "run-42", StartedAt: at1.Add(-time.Minute).In(time.FixedZone("CET", 3600)), Status: "completed"}
	require.NoError(t, report.SearchStrategyMarkdown(&buf, info, rs))
	md := buf.String()

	for _, want := range []string{
		"- Research question: sleep and memory consolidation\n",
		"- Run ID: `run-42`\n",
		"- Started by: not recorded\n",
		"- Started at: 2025-03-04T05:05:07Z\n",
		"- Databases and sources searched: openalex, pubmed\n",
		"- Concepts: sleep (nap); memory\n",
		"## Iteration 1\n",
		"- Searched at: 2025-03-04T05:06:07Z\n",
		"- Years: 2010–2020\n",
		"- Limit per source: 25\n",
		"- Strategy filters (a source received them only as far as its query as sent below shows): include: adults, humans; exclude: rats\n",
		"### pubmed\n",
		"| # | Query as sent | Searched at | Years | Limit | Results | Error |\n",
		// Per source, only what the request carried: the query, the years, the limit.
		"| 1 | `sleep[tiab] AND memory[tiab]` | 2025-03-04T05:06:07Z | 2010–2020 | 25 | 0 | 503 service unavailable |\n",
		"| 2 | `nap*[tiab]` | 2025-03-04T05:06:07Z | 2010–2020 | 25 | 0 | — |\n",
		"| 2 | (not sent) | — | — | — | — | not sent: nothing in the query this source can search |\n",
		"\nRecords from this source: 6 (its queries' results merged; a record more than one query returned counts once).\n",
		"Duplicates: 6 records in, 5 after deduplication (1 merged as duplicates, 0 kept apart as related versions).\n",
		"- Marked relevant: 1: Sleep and memory (`doi:10.1/a`)\n",
		"- Marked irrelevant: 1: Caffeine (`doi:10.1/b`)\n",
		"> more on naps\n> fewer animal studies\n",
		"## Iteration 2\n\nStrategy rejected at confirmation; nothing was searched.",
		"> too narrow\n",
		// Queries a table cell cannot hold verbatim go in fenced blocks.
		"```text\na | b\n```\n",
		"```text\nline\nbreak\n```\n",
		"| 2 | ```x ``y`` z``` |",
		"- Searched at: not recorded\n",
		"## Totals\n",
		"- Iterations: 4 (3 searched)\n",
		"- Records retrieved (per source, its queries' results merged; before deduplication across sources): 8 (openalex 8, pubmed 0)\n",
		"- Papers marked relevant (kept): 1\n",
		"- Papers marked irrelevant: 1\n",
		"- Final collection: 2 papers\n",
	} {
		require.Contains(t, md, want)
	}
	// Every query as sent appears exactly, inside a code span or block.
	for _, h := range rs.Workflow.History {
		for _, sr := range h.Sources {
			for _, q := range sr.Queries {
				if q != "" {
					require.Contains(t, md, q)
				}
			}
		}
	}
	require.Contains(t, md, "`old[tiab]`", "old runs: the query from the strategy's per-source text")
	require.Equal(t, 1, strings.Count(md, "adults, humans"), "the strategy's filters are listed once, never beside a query")
	require.Equal(t, 1, strings.Count(md, "Strategy filters"), "iterations without filters list none")
	require.Contains(t, md, "| 2 | ```x ``y`` z``` | 2025-03-04T06:06:07Z | any | 10 | 1 | — |\n", "an open year range is sent as any")
	require.Contains(t, md, "| 1 | `old[tiab]` | — | any | 10 | not recorded | — |\n", "old runs: no count at all")
	require.Less(t, strings.Index(md, "## Iteration 1"), strings.Index(md, "## Iteration 2"))
}

func TestSearchStrategyMarkdownEmpty(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, report.SearchStrategyMarkdown(&buf, report.RunInfo{ID: "r", StartedBy: "Ada"}, pipeline.RunState{Question: "q"}))
	require.Contains(t, buf.String(), "- Databases and sources searched: none yet\n")
	require.Contains(t, buf.String(), "- Started by: Ada\n")
	require.Contains(t, buf.String(), "- Iterations: 0 (0 searched)\n")
	buf.Reset()
	require.NoError(t, report.SearchStrategyCSV(&buf, pipeline.RunState{}))
	require.Equal(t, strings.Join(report.CSVHeader(), ",")+"\n", buf.String())
}

// TestAttachedFiles: a file attached to the run was not queried, so it is
// reported as attached with its record count, never with a query, years or
// limit borrowed from the strategy.
func TestAttachedFiles(t *testing.T) {
	t.Parallel()
	rs := pipeline.RunState{Question: "sleep spindles", Workflow: research.WorkflowState{History: []research.IterationRecord{{
		Iteration: 1, SearchedAt: at1, ResultCount: 5,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "sleep spindles"}}, Sources: []string{"openalex"},
			YearRange: research.YearRange{From: 2000}, MaxResultsPerSource: 10,
			Filters: research.Filters{ExcludeTerms: []string{"rats"}},
			Files:   []research.AttachedFile{{ID: "f1", Name: "t1.ris", Format: "ris", Records: 3}, {ID: "f2", Name: "bad.bib", Format: "bibtex", Records: 4}}},
		Sources: map[string]research.SourceResult{
			"openalex":      {Count: 2, Queries: []string{"sleep spindles"}, QueryResults: []research.QueryResult{{Count: 2}}},
			"file: t1.ris":  {Count: 3},
			"file: bad.bib": {Error: "the attached file is gone"}},
		Dedup: research.DedupStats{Input: 5, Output: 5},
	}}}}

	md := markdown(t, rs)
	for _, want := range []string{
		"- Databases and sources searched: openalex\n",
		"- Files attached (their records joined the results; not queried): bad.bib, t1.ris\n",
		"### file: t1.ris\n\nFile attached: t1.ris (3 records), not queried.\n",
		"### file: bad.bib\n\nFile attached: bad.bib, not queried.\n\nError: the attached file is gone\n",
		"- Records retrieved (per source, its queries' results merged; before deduplication across sources): 5 (openalex 2, file: bad.bib 0, file: t1.ris 3)\n",
	} {
		require.Contains(t, md, want)
	}
	fileSection := section(md, "### file: t1.ris")
	require.NotContains(t, fileSection, "sleep spindles", "no query invented for a file")
	require.NotContains(t, fileSection, "| 10 |", "no limit for a file")
	require.NotContains(t, fileSection, "2000", "no years for a file")

	got := map[string]map[string]string{}
	for _, m := range csvRows(t, rs) {
		got[m["source"]] = m
	}
	require.Len(t, got, 3, "one row per query of openalex, one per file")
	require.Equal(t, map[string]string{"iteration": "1", "source": "file: t1.ris", "source_kind": "file", "query_as_sent": "",
		"searched_at": "", "year_from": "", "year_to": "", "max_results": "", "results": "3", "error": "", "total_found": "", "warnings": "", "source_records": "3",
		"dedup_input": "5", "dedup_output": "5", "merged": "0", "marked_relevant": "0", "marked_irrelevant": "0"}, got["file: t1.ris"])
	require.Equal(t, "the attached file is gone", got["file: bad.bib"]["error"])
	require.Equal(t, "search", got["openalex"]["source_kind"])
	require.Equal(t, "sleep spindles", got["openalex"]["query_as_sent"])
	require.Equal(t, "10", got["openalex"]["max_results"])
}

// TestSourceNotQueried: a source of the strategy that failed before any
// request (not configured) was not queried, so it is reported as not
// queried, with why, never with the strategy's queries, years or limit as
// if they had been sent.
func TestSourceNotQueried(t *testing.T) {
	t.Parallel()
	notConfigured := `source "scopus" is not configured`
	iteration := func(n int, sources map[string]research.SourceResult) research.IterationRecord {
		return research.IterationRecord{Iteration: n, SearchedAt: at1, ResultCount: 2,
			Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "sleep spindles"}}, Sources: []string{"openalex", "scopus"},
				YearRange: research.YearRange{From: 2000}, MaxResultsPerSource: 10},
			Sources: sources, Dedup: research.DedupStats{Input: 2, Output: 2}}
	}
	rs := pipeline.RunState{Question: "sleep spindles", Workflow: research.WorkflowState{History: []research.IterationRecord{
		iteration(1, map[string]research.SourceResult{
			"openalex": {Count: 2, Queries: []string{"sleep spindles"}, QueryResults: []research.QueryResult{{Count: 2}}},
			"scopus":   {Error: notConfigured}}),
	}}}

	md := markdown(t, rs)
	for _, want := range []string{
		"- Databases and sources searched: openalex\n",
		"- Sources in the strategy but not queried (see each iteration for why): scopus\n",
		"### scopus\n\nNot queried: source \"scopus\" is not configured.\n",
	} {
		require.Contains(t, md, want)
	}
	scopus := section(md, "### scopus")
	require.NotContains(t, scopus, "sleep spindles", "no query reported as sent to a source sent nothing")
	require.NotContains(t, scopus, "| 10 |", "no limit for a source sent nothing")
	require.NotContains(t, scopus, "2000", "no years for a source sent nothing")

	rows := csvRows(t, rs)
	require.Len(t, rows, 2, "openalex's query, scopus's one row")
	require.Equal(t, map[string]string{"iteration": "1", "source": "scopus", "source_kind": "search", "query_as_sent": "",
		"searched_at": "", "year_from": "", "year_to": "", "max_results": "", "results": "0", "error": "not queried: " + notConfigured, "total_found": "", "warnings": "", "source_records": "0",
		"dedup_input": "2", "dedup_output": "2", "merged": "0", "marked_relevant": "0", "marked_irrelevant": "0"}, rows[1])

	// Queried in a later iteration, it is a source searched.
	rs.Workflow.History = append(rs.Workflow.History, iteration(2, map[string]research.SourceResult{
		"openalex": {Count: 1, Queries: []string{"sleep spindles"}, QueryResults: []research.QueryResult{{Count: 1}}},
		"scopus":   {Count: 1, Queries: []string{"sleep spindles"}, QueryResults: []research.QueryResult{{Count: 1}}}}))
	md = markdown(t, rs)
	require.Contains(t, md, "- Databases and sources searched: openalex, scopus\n")
	require.NotContains(t, md, "but not queried (see")
	require.Contains(t, md, "### scopus\n\nNot queried: source \"scopus\" is not configured.\n", "iteration 1 still says why")
}

// TestNotes: what the skills noted while working (an LLM skill falling back
// to the offline heuristics) is part of how the search was done, so the
// report lists it.
func TestNotes(t *testing.T) {
	t.Parallel()
	rs := pipeline.RunState{Question: "q", Notes: []research.Note{
		{Skill: "query_builder", Message: "openai could not be used (401 unauthorized); the offline query builder was used instead"},
		{Skill: "search", Message: "dropped a record from openalex: title is required"},
	}}
	md := markdown(t, rs)
	require.Contains(t, md, "## Notes from the run\n\n")
	require.Contains(t, md, "- query builder: openai could not be used (401 unauthorized); the offline query builder was used instead\n"+
		"- search: dropped a record from openalex: title is required\n")

	require.NotContains(t, markdown(t, pipeline.RunState{Question: "q"}), "Notes from the run", "no section without notes")
}
