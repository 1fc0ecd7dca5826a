package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/report"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/arxiv"
	"quarry/internal/skills/sources/crossref"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/openalex"
	"quarry/internal/skills/sources/pubmed"
	"quarry/internal/skills/sources/semanticscholar"
	"quarry/internal/skills/sources/sourcetest"
)

// fakeAPI is one source served by httptest from its package's testdata,
// and how to read the query text out of a request it received.
type fakeAPI struct {
	name    string
	build   sourcetest.NewSource
	bodies  sourcetest.Bodies
	ctype   string
	queryOf func(*http.Request) (string, bool) // false: not a search request (PubMed's efetch)
}

func param(name string) func(*http.Request) (string, bool) {
	return func(r *http.Request) (string, bool) { return r.URL.Query().Get(name), true }
}

// TestReportAsSentIsWhatTheSourcesReceived runs a search whose first query
// the researcher rewrote at the strategy checkpoint (without the question's
// exclusion) against fake APIs, and checks the search report's "as sent"
// against the requests the fake APIs received: the same texts, each
// carrying the exclusion in the source's syntax; and for the sources whose
// search cannot exclude (Crossref, Semantic Scholar) the report says the
// exclusion was applied to their results. Before issue 16 the rewritten
// query was sent without the exclusion (only a change to the filters was
// folded into edited queries) while the report listed "exclude: computer
// memory", and Crossref and Semantic Scholar ignored it silently.
func TestReportAsSentIsWhatTheSourcesReceived(t *testing.T) {
	t.Parallel()
	const src = "../skills/sources/"
	apis := []fakeAPI{
		{research.SourceOpenAlex, func(base string, hc *httpclient.Client) (sources.Source, error) {
			return openalex.New(openalex.Options{BaseURL: base, APIKey: "k1", HTTP: hc})
		}, sourcetest.Bodies{"/works": sourcetest.ReadFile(t, src+"openalex/testdata/works.json")}, "application/json", func(r *http.Request) (string, bool) {
			// OpenAlex receives the query as its title_and_abstract.search filter, before the years.
			q, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Query().Get("filter"), "title_and_abstract.search:"), ",from_publication_date")
			q, _, _ = strings.Cut(q, ",to_publication_date")
			return q, true
		}},
		{research.SourceArxiv, func(base string, hc *httpclient.Client) (sources.Source, error) {
			return arxiv.New(arxiv.Options{BaseURL: base, HTTP: hc})
		}, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, src+"arxiv/testdata/feed.xml")}, "application/atom+xml", param("search_query")},
		{research.SourcePubMed, func(base string, hc *httpclient.Client) (sources.Source, error) {
			return pubmed.New(pubmed.Options{BaseURL: base, HTTP: hc})
		}, sourcetest.Bodies{
			"/esearch.fcgi": sourcetest.ReadFile(t, src+"pubmed/testdata/esearch.json"),
			"/efetch.fcgi":  sourcetest.ReadFile(t, src+"pubmed/testdata/efetch.xml"),
		}, "application/json", func(r *http.Request) (string, bool) {
			return r.URL.Query().Get("term"), strings.HasSuffix(r.URL.Path, "/esearch.fcgi")
		}},
		{research.SourceCrossref, func(base string, hc *httpclient.Client) (sources.Source, error) {
			return crossref.New(crossref.Options{BaseURL: base, HTTP: hc})
		}, sourcetest.Bodies{"/works": sourcetest.ReadFile(t, src+"crossref/testdata/works.json")}, "application/json", param("query.bibliographic")},
		{research.SourceSemanticScholar, func(base string, hc *httpclient.Client) (sources.Source, error) {
			return semanticscholar.New(semanticscholar.Options{BaseURL: base, HTTP: hc})
		}, sourcetest.Bodies{"/paper/search": sourcetest.ReadFile(t, src+"semanticscholar/testdata/search.json")}, "application/json", param("query")},
	}
	var names []string
	var srcs []sources.Source
	servers := map[string]*sourcetest.Server{}
	for _, a := range apis {
		s, srv := sourcetest.Start(t, a.build, a.bodies, a.ctype)
		names = append(names, a.name)
		srcs = append(srcs, s)
		servers[a.name] = srv
	}

	ctx := context.Background()
	in, err := intent.New(nil).ParseIntent(ctx, "sleep and memory, excluding computer memory")
	require.NoError(t, err)
	require.Equal(t, []string{"computer memory"}, in.ExcludeTerms)
	proposed, err := querybuilder.New().BuildStrategy(ctx, skills.QueryInput{Intent: in, Sources: names})
	require.NoError(t, err)
	edited := proposed
	edited.Queries = []research.Query{{Text: "sleep deprivation memory"}} // rewritten: no exclusion written
	for _, q := range proposed.Queries[1:] {
		edited.Queries = append(edited.Queries, research.Query{Text: q.Text})
	}
	strategy, err := pipeline.Rerender(edited, proposed)
	require.NoError(t, err)

	se, err := searcher.New(srcs, searcher.Options{})
	require.NoError(t, err)
	res, err := se.Search(ctx, strategy)
	require.NoError(t, err)
	rs := pipeline.RunState{Question: in.Topic, Intent: &in, Strategy: &strategy, Workflow: research.WorkflowState{
		CurrentIteration: 1,
		History: []research.IterationRecord{{Iteration: 1, Strategy: strategy, ResultCount: len(res.Papers),
			SearchedAt: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), Sources: res.Sources}},
	}}
	var buf bytes.Buffer
	require.NoError(t, report.SearchStrategyCSV(&buf, rs))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	col := func(name string) int { return slices.Index(report.CSVHeader(), name) }
	reported, warnings := map[string][]string{}, map[string][]string{}
	for _, row := range rows[1:] {
		reported[row[col("source")]] = append(reported[row[col("source")]], row[col("query_as_sent")])
		warnings[row[col("source")]] = append(warnings[row[col("source")]], row[col("warnings")])
	}

	for _, a := range apis {
		var received []string
		for _, r := range servers[a.name].Requests() {
			if q, ok := a.queryOf(r); ok {
				received = append(received, q)
			}
		}
		require.Len(t, reported[a.name], len(strategy.Queries), a.name)
		require.ElementsMatch(t, reported[a.name], received, "%s: the report's \"as sent\" is what the API received", a.name)
		for i, q := range reported[a.name] {
			switch a.name {
			case research.SourceCrossref, research.SourceSemanticScholar: // no exclusion syntax: applied to the results
				require.NotContains(t, q, "computer", "%s query %d", a.name, i+1)
				require.Contains(t, warnings[a.name][i], `"computer memory" were left out after retrieval`, "%s query %d", a.name, i+1)
			default:
				require.Contains(t, q, `"computer memory"`, "%s query %d: the exclusion is sent", a.name, i+1)
			}
		}
	}
	require.Contains(t, reported[research.SourceOpenAlex], `sleep AND deprivation AND memory NOT "computer memory"`, "the rewritten query carries the exclusion")
	require.Contains(t, reported[research.SourcePubMed][0], `NOT "computer memory"[tiab]`)
	require.Contains(t, reported[research.SourceArxiv][0], `ANDNOT all:"computer memory"`)
	for _, p := range res.Papers {
		require.NotContains(t, strings.ToLower(p.Title+" "+p.Abstract), "computer memory", "no source's result uses the excluded term")
	}
}
