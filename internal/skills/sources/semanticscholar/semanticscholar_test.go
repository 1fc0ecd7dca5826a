package semanticscholar_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/semanticscholar"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(t *testing.T, base string, hc *httpclient.Client) skills.Source {
	t.Helper()
	c, err := semanticscholar.New(semanticscholar.Options{BaseURL: base, HTTP: hc})
	require.NoError(t, err)
	return c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Conformance(t, newSource, sourcetest.Fixture{
		OK:          sourcetest.Bodies{"/paper/search/bulk": sourcetest.ReadFile(t, "testdata/bulk.json")},
		WantOK:      3,
		Empty:       sourcetest.Bodies{"/paper/search/bulk": sourcetest.ReadFile(t, "testdata/empty.json")},
		Malformed:   sourcetest.Bodies{"/paper/search/bulk": sourcetest.ReadFile(t, "testdata/malformed.json")},
		ContentType: "application/json",
	})
}

func TestSearchMapsPapers(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(t, sourcetest.Bodies{"/paper/search/bulk": sourcetest.ReadFile(t, "testdata/bulk.json")}, "application/json")
	hc, _ := sourcetest.NewClient("")
	c, err := semanticscholar.New(semanticscholar.Options{BaseURL: srv.URL, APIKey: "s2-key", HTTP: hc})
	require.NoError(t, err)
	papers, err := c.Search(context.Background(), skills.SourceRequest{Query: `"sleep spindles" + memory`, YearRange: skills.YearRange{From: 2015, To: 2020}, MaxResults: 10})
	require.NoError(t, err)
	require.Equal(t, []skills.RawPaper{
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
	}, papers)
	r := srv.Requests()[0]
	require.Equal(t, "/graph/v1/paper/search/bulk", r.URL.Path)
	require.Equal(t, `"sleep spindles" + memory`, r.URL.Query().Get("query"))
	require.Equal(t, "title,authors,year,venue,abstract,externalIds,url", r.URL.Query().Get("fields"))
	require.Equal(t, "2015-2020", r.URL.Query().Get("year"))
	require.Equal(t, "s2-key", r.Header.Get("x-api-key"))
}

func TestYearParameter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		years skills.YearRange
		want  string
	}{
		{"Open", skills.YearRange{}, ""},
		{"From", skills.YearRange{From: 2015}, "2015-"},
		{"To", skills.YearRange{To: 2020}, "-2020"},
		{"Single", skills.YearRange{From: 2019, To: 2019}, "2019-2019"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sourcetest.NewServer(t, sourcetest.Bodies{"/bulk": `{"total":0,"data":[]}`}, "application/json")
			hc, _ := sourcetest.NewClient("")
			_, err := newSource(t, srv.URL, hc).Search(context.Background(), skills.SourceRequest{Query: "x", YearRange: tt.years, MaxResults: 3})
			require.NoError(t, err)
			r := srv.Requests()[0]
			require.Equal(t, tt.want, r.URL.Query().Get("year"))
			require.Empty(t, r.Header.Get("x-api-key"))
		})
	}
}

// TestSearchFollowsToken checks continuation tokens are followed until the
// cap, and not beyond.
func TestSearchFollowsToken(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("token")
		mu.Lock()
		tokens = append(tokens, tok)
		mu.Unlock()
		batch := 0
		if tok != "" {
			batch, _ = strconv.Atoi(tok)
		}
		var data []map[string]any
		for i := range 4 {
			data = append(data, map[string]any{"paperId": fmt.Sprint(batch, i), "title": fmt.Sprintf("Paper %d.%d", batch, i)})
		}
		next := any(strconv.Itoa(batch + 1))
		if batch == 2 {
			next = nil
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"total": 12, "token": next, "data": data})
	}))
	t.Cleanup(srv.Close)
	hc, _ := sourcetest.NewClient("")
	papers, err := newSource(t, srv.URL, hc).Search(context.Background(), skills.SourceRequest{Query: "x", MaxResults: 6})
	require.NoError(t, err)
	require.Len(t, papers, 6)
	require.Equal(t, "Paper 1.1", papers[5].Title)
	mu.Lock()
	require.Equal(t, []string{"", "1"}, tokens)
	tokens = nil
	mu.Unlock()
	papers, err = newSource(t, srv.URL, hc).Search(context.Background(), skills.SourceRequest{Query: "x", MaxResults: 100})
	require.NoError(t, err)
	require.Len(t, papers, 12)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"", "1", "2"}, tokens)
}

func TestBadRequestIsInvalid(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"Unrecognized or unsupported fields: [bogus]"}`))
	}))
	t.Cleanup(srv.Close)
	hc, _ := sourcetest.NewClient("")
	_, err := newSource(t, srv.URL, hc).Search(context.Background(), skills.SourceRequest{Query: "x", MaxResults: 3})
	require.Equal(t, engine.EInvalid, engine.ErrorCode(err))
	require.ErrorContains(t, err, "Unrecognized or unsupported fields")
}
