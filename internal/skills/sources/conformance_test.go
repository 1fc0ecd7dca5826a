package sources_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/arxiv"
	"quarry/internal/skills/sources/crossref"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/openalex"
	"quarry/internal/skills/sources/pubmed"
	"quarry/internal/skills/sources/semanticscholar"
	"quarry/internal/skills/sources/serpapi"
	"quarry/internal/skills/sources/sourcetest"
)

// TestConformance runs the sourcetest suite over every online source, one
// row a source: its name, how to build it against a fake API, and its
// Fixture (documented answers from the package's testdata, the exact
// papers they map to, the query it must send). A new source is a new row;
// a source's package tests only what is its own.
func TestConformance(t *testing.T) {
	t.Parallel()
	s2Request := sources.SourceRequest{Query: `"sleep spindles" +memory -"rodent model"`, YearRange: research.YearRange{From: 2015, To: 2020}, MaxResults: 10}
	s2, err := semanticscholar.New(semanticscholar.Options{}) // for SentQuery
	require.NoError(t, err)
	tests := []struct {
		name      string
		newSource sourcetest.NewSource
		fixture   sourcetest.Fixture
	}{
		{
			name: research.SourceArxiv,
			newSource: func(base string, hc *httpclient.Client) (sources.Source, error) {
				return arxiv.New(arxiv.Options{BaseURL: base, HTTP: hc})
			},
			fixture: sourcetest.Fixture{
				OK:      sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "arxiv/testdata/feed.xml")},
				Request: sources.SourceRequest{Query: "all:sleep AND all:memory", YearRange: research.YearRange{From: 2015, To: 2023}, MaxResults: 25},
				Want: []research.RawPaper{
					{
						Title:    "Replay in artificial agents: consolidation without sleep?",
						Authors:  []string{"Jane Q. Doe", "Jürgen Schmidhüber"},
						Year:     2021,
						Venue:    "arXiv",
						Abstract: `We study experience replay as an analogue of hippocampal replay during sleep. Agents with "offline" replay retain 23% more (p < 0.01) — see Fig. 2.`,
						DOI:      "10.1016/j.neunet.2022.01.001",
						ArxivID:  "2106.01234",
						URL:      "http://arxiv.org/abs/2106.01234v2",
						Rank:     1,
					},
					{
						Title:    "Sleep, σ-models and the ℏ → 0 limit",
						Authors:  []string{"李明"},
						Year:     2019,
						Venue:    "arXiv",
						Abstract: "An old-style identifier with no DOI.",
						ArxivID:  "hep-th/9901001",
						URL:      "http://arxiv.org/abs/hep-th/9901001v3",
						Rank:     2,
					},
				},
				Total: 4,
				Sent: func(t *testing.T, reqs []*http.Request) {
					q := reqs[0].URL.Query()
					require.Equal(t, "(all:sleep AND all:memory) AND submittedDate:[201501010000 TO 202312312359]", q.Get("search_query"))
					require.Equal(t, "0", q.Get("start"))
					require.Equal(t, "25", q.Get("max_results"))
				},
				Empty:       sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "arxiv/testdata/empty.xml")},
				Malformed:   sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "arxiv/testdata/malformed.xml")},
				ContentType: "application/atom+xml; charset=utf-8",
			},
		},
		{
			name: research.SourceCrossref,
			newSource: func(base string, hc *httpclient.Client) (sources.Source, error) {
				return crossref.New(crossref.Options{BaseURL: base, Contact: "ada@example.org", HTTP: hc})
			},
			fixture: sourcetest.Fixture{
				OK:      sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "crossref/testdata/works.json")},
				Request: sources.SourceRequest{Query: "sleep memory consolidation", YearRange: research.YearRange{From: 2015, To: 2021}, MaxResults: 25},
				Want: []research.RawPaper{
					{
						Title:       "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
						Authors:     []string{"Søren Ødegård", "María José García-López", "李"},
						AuthorNames: []research.AuthorName{{Family: "Ødegård", Given: "Søren"}, {Family: "García-López", Given: "María José"}, {Family: "李"}},
						Year:        2019,
						Venue:       "Nature Neuroscience",
						Volume:      "22",
						Issue:       "10",
						Pages:       "1598-1610",
						Abstract:    "Sleep spindles support memory consolidation. We show that CO2 levels & spindle density (n = 42) predict recall.",
						DOI:         "10.1038/s41593-019-0467-3",
						URL:         "https://doi.org/10.1038/s41593-019-0467-3",
						Rank:        1,
					},
					{
						Title:       "0001 Targeted Memory Reactivation During Slow-wave Sleep",
						Authors:     []string{"The TMR Consortium"},
						AuthorNames: []research.AuthorName{{Literal: "The TMR Consortium"}},
						Year:        2020,
						Venue:       "SLEEP",
						Volume:      "43",
						Issue:       "Supplement_1",
						Pages:       "A1-A1",
						DOI:         "10.1093/sleep/zsaa056.001",
						URL:         "https://doi.org/10.1093/sleep/zsaa056.001",
						Rank:        2,
					},
					{
						Title: "Memory & sleep in the wild",
						Year:  2021,
						DOI:   "10.1145/3442188.3445922",
						URL:   "https://doi.org/10.1145/3442188.3445922",
						Rank:  3,
					},
				},
				Total: 48213,
				Sent: func(t *testing.T, reqs []*http.Request) {
					r := reqs[0]
					q := r.URL.Query()
					require.Equal(t, "/works", r.URL.Path)
					require.Equal(t, "sleep memory consolidation", q.Get("query.bibliographic"))
					require.Equal(t, "25", q.Get("rows"))
					require.Equal(t, "from-pub-date:2015-01-01,until-pub-date:2021-12-31", q.Get("filter"))
					require.Equal(t, "ada@example.org", q.Get("mailto"))
					require.Contains(t, q.Get("select"), "abstract")
				},
				Empty:       sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "crossref/testdata/empty.json")},
				Malformed:   sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "crossref/testdata/malformed.json")},
				ContentType: "application/json",
			},
		},
		{
			name: research.SourceOpenAlex,
			newSource: func(base string, hc *httpclient.Client) (sources.Source, error) {
				return openalex.New(openalex.Options{BaseURL: base, Contact: "ada@example.org", APIKey: "k1", HTTP: hc})
			},
			fixture: sourcetest.Fixture{
				OK:      sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "openalex/testdata/works.json")},
				Request: sources.SourceRequest{Query: `"sleep spindles" AND memory`, YearRange: research.YearRange{From: 2015, To: 2020}, MaxResults: 25},
				Want: []research.RawPaper{
					{
						Title:    "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
						Authors:  []string{"Søren Ødegård", "María José García-López", "李明"},
						Year:     2019,
						Venue:    "Nature Neuroscience",
						Volume:   "22",
						Issue:    "10",
						Pages:    "1598-1610",
						Abstract: "Sleep spindles support memory consolidation. We show that thalamocortical spindles predict recall (n = 42).",
						DOI:      "10.1038/s41593-019-0467-3",
						PMID:     "31451801",
						URL:      "https://doi.org/10.1038/s41593-019-0467-3",
						Rank:     1,
					},
					{
						Title:   "Replay in artificial agents: consolidation without sleep?",
						Authors: []string{"Jane Q. Doe"},
						Year:    2021,
						Venue:   "arXiv (Cornell University)",
						DOI:     "10.48550/arxiv.2106.01234",
						ArxivID: "2106.01234",
						URL:     "http://arxiv.org/abs/2106.01234v2",
						Rank:    2,
					},
					{
						Title:   "Targeted memory reactivation during slow-wave sleep",
						Authors: []string{"K. Tanaka"},
						Year:    2016,
						Volume:  "5",
						Pages:   "e12",
						ArxivID: "1605.00042",
						URL:     "https://openalex.org/W3000000003",
						Rank:    3,
					},
				},
				Total: 4,
				Sent: func(t *testing.T, reqs []*http.Request) {
					require.Len(t, reqs, 1)
					q := reqs[0].URL.Query()
					require.Equal(t, "/works", reqs[0].URL.Path)
					_, search := q["search"]
					require.False(t, search, "search also matches full text")
					require.Equal(t, `title_and_abstract.search:"sleep spindles" AND memory,from_publication_date:2015-01-01,to_publication_date:2020-12-31`, q.Get("filter"))
					require.Equal(t, "relevance_score:desc", q.Get("sort"))
					require.Equal(t, "25", q.Get("per_page"))
					require.Equal(t, "1", q.Get("page"))
					require.Equal(t, "ada@example.org", q.Get("mailto"))
					require.Equal(t, "k1", q.Get("api_key"))
				},
				Empty:       sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "openalex/testdata/empty.json")},
				Malformed:   sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "openalex/testdata/malformed.json")},
				ContentType: "application/json",
			},
		},
		{
			name: research.SourcePubMed,
			newSource: func(base string, hc *httpclient.Client) (sources.Source, error) {
				return pubmed.New(pubmed.Options{BaseURL: base, Contact: "ada@example.org", HTTP: hc})
			},
			fixture: sourcetest.Fixture{
				OK: sourcetest.Bodies{
					"/esearch.fcgi": sourcetest.ReadFile(t, "pubmed/testdata/esearch.json"),
					"/efetch.fcgi":  sourcetest.ReadFile(t, "pubmed/testdata/efetch.xml"),
				},
				Request: sources.SourceRequest{Query: `sleep[tiab] AND "memory consolidation"[MeSH]`, YearRange: research.YearRange{From: 2015, To: 2023}, MaxResults: 4},
				Want: []research.RawPaper{
					{
						Title:       "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
						Authors:     []string{"Søren Ødegård", "María José García-López"},
						AuthorNames: []research.AuthorName{{Family: "Ødegård", Given: "Søren"}, {Family: "García-López", Given: "María José"}},
						Year:        2019,
						Venue:       "Nature neuroscience",
						Volume:      "22",
						Issue:       "10",
						Pages:       "1598-1610",
						Abstract:    "BACKGROUND: Sleep spindles support memory consolidation.\nMETHODS: We recorded EEG in 42 adults (CO2 < 5%).\nRESULTS: Spindle density predicted recall.",
						DOI:         "10.1038/s41593-019-0467-3",
						PMID:        "31451801",
						URL:         "https://pubmed.ncbi.nlm.nih.gov/31451801/",
						Rank:        1,
					},
					{
						Title:       "Schlaf und Gedächtnis bei Kindern",
						Authors:     []string{"German Sleep Study Group", "K Müller"},
						AuthorNames: []research.AuthorName{{Literal: "German Sleep Study Group"}, {Family: "Müller", Given: "K"}},
						Year:        2018,
						Venue:       "Sleep",
						Volume:      "41",
						Issue:       "12",
						Pages:       "e201",
						Abstract:    "Unstructured abstract in one part.",
						PMID:        "29999999",
						URL:         "https://pubmed.ncbi.nlm.nih.gov/29999999/",
						Rank:        2,
					},
					{
						Title: "Targeted memory reactivation during slow-wave sleep",
						Year:  2016,
						Venue: "Frontiers in human neuroscience",
						DOI:   "10.3389/fnhum.2016.00001",
						PMID:  "27000001",
						URL:   "https://pubmed.ncbi.nlm.nih.gov/27000001/",
						Rank:  3,
					},
				},
				Total: 1532,
				Sent: func(t *testing.T, reqs []*http.Request) {
					require.Len(t, reqs, 2)
					es, ef := reqs[0].URL.Query(), reqs[1].URL.Query()
					require.True(t, strings.HasSuffix(reqs[0].URL.Path, "/esearch.fcgi"))
					require.Equal(t, `sleep[tiab] AND "memory consolidation"[MeSH]`, es.Get("term"))
					require.Equal(t, "pubmed", es.Get("db"))
					require.Equal(t, "4", es.Get("retmax"))
					require.Equal(t, "json", es.Get("retmode"))
					require.Equal(t, "pdat", es.Get("datetype"))
					require.Equal(t, "2015", es.Get("mindate"))
					require.Equal(t, "2023", es.Get("maxdate"))
					require.Equal(t, "quarry", es.Get("tool"))
					require.Equal(t, "ada@example.org", es.Get("email"))
					require.True(t, strings.HasSuffix(reqs[1].URL.Path, "/efetch.fcgi"))
					require.Equal(t, "31451801,29999999,27000001,25000002", ef.Get("id"))
					require.Equal(t, "xml", ef.Get("retmode"))
					require.Equal(t, "pubmed", ef.Get("db"))
				},
				Empty:       sourcetest.Bodies{"/esearch.fcgi": sourcetest.ReadFile(t, "pubmed/testdata/esearch_empty.json")},
				Malformed:   sourcetest.Bodies{"/esearch.fcgi": sourcetest.ReadFile(t, "pubmed/testdata/esearch_malformed.json")},
				ContentType: "application/json",
			},
		},
		{
			name: research.SourceSemanticScholar,
			// With an API key, which a search sends as x-api-key.
			newSource: func(base string, hc *httpclient.Client) (sources.Source, error) {
				return semanticscholar.New(semanticscholar.Options{BaseURL: base, APIKey: "s2-key", HTTP: hc})
			},
			fixture: sourcetest.Fixture{
				OK:      sourcetest.Bodies{"/paper/search": sourcetest.ReadFile(t, "semanticscholar/testdata/search.json")},
				Request: s2Request,
				Want: []research.RawPaper{
					{
						Title:    "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
						Authors:  []string{"Søren Ødegård", "María José García-López", "李明"},
						Year:     2019,
						Venue:    "Nature Neuroscience",
						Abstract: "Sleep spindles support memory consolidation — we show that thalamocortical spindles predict recall.",
						DOI:      "10.1038/s41593-019-0467-3",
						PMID:     "31451801",
						URL:      "https://www.semanticscholar.org/paper/649def34f8be52c8b66281af98ae884c09aef38b",
						Rank:     1,
					},
					{
						Title:   "Replay in artificial agents: consolidation without sleep?",
						Authors: []string{"Jane Q. Doe"},
						Year:    2021,
						Venue:   "arXiv.org",
						DOI:     "10.48550/arxiv.2106.01234",
						ArxivID: "2106.01234",
						URL:     "https://www.semanticscholar.org/paper/8e2b3c1f0a7d9e6b5c4a3f2e1d0c9b8a7f6e5d4c",
						Rank:    2,
					},
					{
						Title: "Targeted memory reactivation during slow-wave sleep",
						URL:   "https://www.semanticscholar.org/paper/1111aaaabbbbccccddddeeeeffff000011112222",
						Rank:  3,
					},
				},
				Total: 4,
				Sent: func(t *testing.T, reqs []*http.Request) {
					require.Len(t, reqs, 1)
					r := reqs[0]
					require.Equal(t, "/graph/v1/paper/search", r.URL.Path)
					require.Equal(t, "sleep spindles memory", r.URL.Query().Get("query"))
					require.Equal(t, s2.SentQuery(s2Request), r.URL.Query().Get("query"), "the report records what was sent")
					require.Equal(t, "0", r.URL.Query().Get("offset"))
					require.Equal(t, "10", r.URL.Query().Get("limit"))
					require.Equal(t, "title,authors,year,venue,abstract,externalIds,url", r.URL.Query().Get("fields"))
					require.Equal(t, "2015-2020", r.URL.Query().Get("year"))
					require.Equal(t, "s2-key", r.Header.Get("x-api-key"))
				},
				Empty:       sourcetest.Bodies{"/paper/search": sourcetest.ReadFile(t, "semanticscholar/testdata/empty.json")},
				Malformed:   sourcetest.Bodies{"/paper/search": sourcetest.ReadFile(t, "semanticscholar/testdata/malformed.json")},
				ContentType: "application/json",
			},
		},
		{
			name: research.SourceSerpAPIScholar,
			newSource: func(base string, hc *httpclient.Client) (sources.Source, error) {
				return serpapi.New(serpapi.Options{BaseURL: base, APIKey: "serp-secret", HTTP: hc})
			},
			fixture: sourcetest.Fixture{
				OK:      sourcetest.Bodies{"/search.json": sourcetest.ReadFile(t, "serpapi/testdata/scholar.json")},
				Request: sources.SourceRequest{Query: `"sleep" memory consolidation`, YearRange: research.YearRange{From: 2015, To: 2023}, MaxResults: 10},
				Want: []research.RawPaper{
					{
						Title:    "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
						Authors:  []string{"S Ødegård", "MJ García-López", "M Li"},
						Year:     2019,
						Venue:    "Nature neuroscience",
						Abstract: "Sleep spindles support memory consolidation. We show that thalamocortical spindles predict recall …",
						URL:      "https://www.nature.com/articles/s41593-019-0467-3",
						Rank:     1,
					},
					{
						Title:    "Replay in artificial agents: consolidation without sleep?",
						Authors:  []string{"JQ Doe", "J Schmidhüber"},
						Year:     2021,
						Venue:    "arXiv preprint arXiv:2106.01234",
						Abstract: "We study experience replay as an analogue of hippocampal replay during sleep.",
						ArxivID:  "2106.01234",
						URL:      "https://arxiv.org/abs/2106.01234",
						Rank:     2,
					},
					{
						Title:   "Memory consolidation during sleep: a handbook",
						Authors: []string{"K Tanaka"},
						Year:    2016,
						Rank:    3,
					},
					{
						Title:    "Schlaf und Gedächtnis",
						Authors:  []string{"K Müller"},
						Venue:    "Journal of sleep research",
						Abstract: "Zusammenfassung …",
						DOI:      "10.1111/jsr.12345",
						URL:      "https://onlinelibrary.wiley.com/doi/abs/10.1111/jsr.12345",
						Rank:     4,
					},
				},
				Total: 18400,
				Sent: func(t *testing.T, reqs []*http.Request) {
					require.Len(t, reqs, 1, "a short page is the last page")
					q := reqs[0].URL.Query()
					require.Equal(t, "/search.json", reqs[0].URL.Path)
					require.Equal(t, "google_scholar", q.Get("engine"))
					require.Equal(t, `"sleep" memory consolidation`, q.Get("q"))
					require.Equal(t, "serp-secret", q.Get("api_key"))
					require.Equal(t, "10", q.Get("num"))
					require.Equal(t, "2015", q.Get("as_ylo"))
					require.Equal(t, "2023", q.Get("as_yhi"))
					require.Empty(t, q.Get("start"))
				},
				Empty:       sourcetest.Bodies{"/search.json": sourcetest.ReadFile(t, "serpapi/testdata/empty.json")},
				Malformed:   sourcetest.Bodies{"/search.json": sourcetest.ReadFile(t, "serpapi/testdata/malformed.json")},
				ContentType: "application/json",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sourcetest.Conformance(t, tt.newSource, tt.fixture)
		})
	}
}
