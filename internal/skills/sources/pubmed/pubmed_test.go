package pubmed_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/pubmed"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(base string, hc *httpclient.Client) (sources.Source, error) {
	return pubmed.New(pubmed.Options{BaseURL: base, Contact: "ada@example.org", HTTP: hc})
}

func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Conformance(t, newSource, sourcetest.Fixture{
		OK: sourcetest.Bodies{
			"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch.json"),
			"/efetch.fcgi":  sourcetest.ReadFile(t, "testdata/efetch.xml"),
		},
		Request: sources.SourceRequest{Query: `sleep[tiab] AND "memory consolidation"[MeSH]`, YearRange: research.YearRange{From: 2015, To: 2023}, MaxResults: 4},
		Want: []research.RawPaper{
			{
				Title:    "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
				Authors:  []string{"Søren Ødegård", "María José García-López"},
				Year:     2019,
				Venue:    "Nature neuroscience",
				Volume:   "22",
				Issue:    "10",
				Pages:    "1598-1610",
				Abstract: "BACKGROUND: Sleep spindles support memory consolidation.\nMETHODS: We recorded EEG in 42 adults (CO2 < 5%).\nRESULTS: Spindle density predicted recall.",
				DOI:      "10.1038/s41593-019-0467-3",
				PMID:     "31451801",
				URL:      "https://pubmed.ncbi.nlm.nih.gov/31451801/",
				Rank:     1,
			},
			{
				Title:    "Schlaf und Gedächtnis bei Kindern",
				Authors:  []string{"German Sleep Study Group", "K Müller"},
				Year:     2018,
				Venue:    "Sleep",
				Volume:   "41",
				Issue:    "12",
				Pages:    "e201",
				Abstract: "Unstructured abstract in one part.",
				PMID:     "29999999",
				URL:      "https://pubmed.ncbi.nlm.nih.gov/29999999/",
				Rank:     2,
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
		Empty:       sourcetest.Bodies{"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch_empty.json")},
		Malformed:   sourcetest.Bodies{"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch_malformed.json")},
		ContentType: "application/json",
	})
}

func TestOpenYearRangeAndAPIKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		years             research.YearRange
		wantMin, wantMax  string
		wantDateTypeIsSet bool
	}{
		{"Open", research.YearRange{}, "", "", false},
		{"FromOnly", research.YearRange{From: 2010}, "2010", "3000", true},
		{"ToOnly", research.YearRange{To: 1999}, "1000", "1999", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sourcetest.NewServer(t, sourcetest.Bodies{"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch_empty.json")}, "application/json")
			hc, _ := sourcetest.NewClient("")
			c, err := pubmed.New(pubmed.Options{BaseURL: srv.URL, APIKey: "ncbi-key", HTTP: hc})
			require.NoError(t, err)
			papers, err := c.Search(context.Background(), sources.SourceRequest{Query: "x", YearRange: tt.years, MaxResults: 5})
			require.NoError(t, err)
			require.Empty(t, papers)
			reqs := srv.Requests()
			require.Len(t, reqs, 1, "no efetch for an empty id list")
			q := reqs[0].URL.Query()
			require.Equal(t, tt.wantMin, q.Get("mindate"))
			require.Equal(t, tt.wantMax, q.Get("maxdate"))
			_, has := q["datetype"]
			require.Equal(t, tt.wantDateTypeIsSet, has)
			require.Equal(t, "ncbi-key", q.Get("api_key"))
			require.Empty(t, q.Get("email"))
		})
	}
}

func TestESearchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, wantCode, wantText string
	}{
		{"QueryError", `{"header":{"type":"esearch","version":"0.3"},"esearchresult":{"ERROR":"Invalid query syntax near ["}}`, fault.EInvalid, "Invalid query syntax"},
		{"TopLevelError", `{"error":"API key invalid","api-key":"x","type":"api-key"}`, fault.EInternal, "API key invalid"},
		{"NoResult", `{"header":{"type":"esearch"}}`, fault.EInternal, "no esearchresult"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{"/esearch.fcgi": tt.body}, "application/json")
			_, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
			require.ErrorContains(t, err, tt.wantText)
		})
	}
}

func TestMalformedEFetch(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{
		"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch.json"),
		"/efetch.fcgi":  `<?xml version="1.0" ?><eFetchResult><ERROR>Cannot retrieve history data.</ERROR></eFetchResult>`,
	}, "text/xml")
	_, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
	require.ErrorContains(t, err, "not the XML expected")
}

// TestQueryNotRunAsWritten checks that when esearch reports terms it left
// out, phrases it could not find or terms it ignored, the papers still come
// back, with a warning (not an error) naming what changed.
func TestQueryNotRunAsWritten(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{
		"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch_warnings.json"),
		"/efetch.fcgi":  sourcetest.ReadFile(t, "testdata/efetch.xml"),
	}, "application/json")
	papers, err := src.Search(context.Background(), sources.SourceRequest{
		Query: `sleep[tiab] AND qqqqzzzz[tiab] AND "spindle burst oscillations"[tiab] AND of[tiab] AND x[tiabx]`, MaxResults: 4,
	})
	require.Len(t, papers, 3)
	require.Equal(t, "31451801", papers[0].PMID)
	var sw *sources.Warning
	require.ErrorAs(t, err, &sw, "a warning, not a failure")
	var w *pubmed.QueryWarning
	require.ErrorAs(t, err, &w)
	require.Equal(t, &pubmed.QueryWarning{
		PhrasesNotFound:       []string{"qqqqzzzz"},
		FieldsNotFound:        []string{"tiabx"},
		QuotedPhrasesNotFound: []string{`"spindle burst oscillations"[tiab]`},
		PhrasesIgnored:        []string{"of"},
		QueryTranslation:      "sleep[Title/Abstract] AND (spindle[Title/Abstract] AND burst[Title/Abstract] AND oscillations[Title/Abstract])",
	}, w)
	require.Equal(t, `PubMed did not run the query as written; the 3 papers are for the query it ran: `+
		`terms not found, left out: qqqqzzzz; unknown fields: tiabx; `+
		`quoted phrases not found, searched as separate words: "spindle burst oscillations"[tiab]; terms ignored: of`, err.Error())
}

// TestQueryWarningNeedsPapers checks which esearch lists count as a change
// to the query, and that a search that found nothing is an empty result
// whatever the lists say.
func TestQueryWarningNeedsPapers(t *testing.T) {
	t.Parallel()
	body := func(count, ids, lists string) string {
		return `{"header":{"type":"esearch","version":"0.3"},"esearchresult":{"count":"` + count + `","idlist":[` + ids + `],"querytranslation":"x"` + lists + `}}`
	}
	const found = `"31451801"`
	tests := []struct {
		name, body, wantErr string
		wantPapers          int
	}{
		{"NoLists", body("1", found, ""), "", 1},
		{"EmptyLists", body("1", found, `,"errorlist":{"phrasesnotfound":[],"fieldsnotfound":[]},"warninglist":{"phrasesignored":[],"quotedphrasesnotfound":[],"outputmessages":[]}`), "", 1},
		{"BlankEntries", body("1", found, `,"errorlist":{"phrasesnotfound":[" "]}`), "", 1},
		{"NoItemsFoundIsNotAChange", body("1", found, `,"warninglist":{"outputmessages":["No items found."]}`), "", 1},
		{"OtherOutputMessage", body("1", found, `,"warninglist":{"outputmessages":["Term was expanded."]}`), "Term was expanded.", 1},
		{"PhraseIgnored", body("1", found, `,"warninglist":{"phrasesignored":["the"]}`), "terms ignored: the", 1},
		{"NothingFound", body("0", "", `,"errorlist":{"phrasesnotfound":["qqqqzzzz"]},"warninglist":{"outputmessages":["No items found."]}`), "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{
				"/esearch.fcgi": tt.body,
				"/efetch.fcgi":  sourcetest.ReadFile(t, "testdata/efetch.xml"),
			}, "application/json")
			papers, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
			require.Len(t, papers, tt.wantPapers)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			var w *pubmed.QueryWarning
			require.True(t, errors.As(err, &w))
			var sw *sources.Warning
			require.True(t, errors.As(err, &sw))
		})
	}
}

// TestSearcherKeepsPapersAndShowsTheWarning runs PubMed through the
// searcher: the papers of a query PubMed altered are kept and the change is
// recorded as the source's warning, not its error, which the run page and
// the search report show apart from failures. It pins down the searcher
// behaviour this source relies on.
func TestSearcherKeepsPapersAndShowsTheWarning(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{
		"/esearch.fcgi": sourcetest.ReadFile(t, "testdata/esearch_warnings.json"),
		"/efetch.fcgi":  sourcetest.ReadFile(t, "testdata/efetch.xml"),
	}, "application/json")
	s, err := searcher.New([]sources.Source{src}, searcher.Options{})
	require.NoError(t, err)
	res, err := s.Search(context.Background(), research.SearchStrategy{
		Queries: []research.Query{{Text: "sleep[tiab] AND qqqqzzzz[tiab]"}}, Sources: []string{research.SourcePubMed}, MaxResultsPerSource: 4,
	})
	require.NoError(t, err)
	require.Len(t, res.Papers, 3)
	sr := res.Sources[research.SourcePubMed]
	require.Equal(t, 3, sr.Count)
	require.Empty(t, sr.Error, "PubMed did not fail")
	require.Len(t, sr.Warnings, 1)
	require.Contains(t, sr.Warnings[0], "PubMed did not run the query as written")
	require.Contains(t, sr.Warnings[0], "terms not found, left out: qqqqzzzz")
}
