package serpapi_test

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

	"quarry/internal/fault"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/serpapi"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(base string, hc *httpclient.Client) (sources.Source, error) {
	return serpapi.New(serpapi.Options{BaseURL: base, APIKey: "serp-secret", HTTP: hc})
}

func TestNewRequiresAPIKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "   "} {
		_, err := serpapi.New(serpapi.Options{APIKey: key})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
		require.Contains(t, fault.ErrorFields(err), "api_key")
	}
}

func TestParseSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		authors []string
		venue   string
		year    int
	}{
		{"", nil, "", 0},
		{"A Vaswani, N Shazeer, N Parmar… - Advances in neural …, 2017 - proceedings.neurips.cc", []string{"A Vaswani", "N Shazeer", "N Parmar"}, "Advances in neural …", 2017},
		{"K Tanaka - 2016 - books.google.com", []string{"K Tanaka"}, "", 2016},
		{"K Müller - Journal of sleep research", []string{"K Müller"}, "Journal of sleep research", 0},
		{"…, B Two - Sleep Medicine Reviews, 2020 - Elsevier", []string{"B Two"}, "Sleep Medicine Reviews", 2020},
		{"only authors", []string{"only authors"}, "", 0},
		{"X Y - Proceedings of the 2019 Workshop, 2020 - acm.org", []string{"X Y"}, "Proceedings of the 2019 Workshop", 2020},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			authors, venue, year := serpapi.ParseSummary(tt.in)
			require.Equal(t, tt.authors, authors)
			require.Equal(t, tt.venue, venue)
			require.Equal(t, tt.year, year)
		})
	}
}

// TestSearchPages checks paging by start, and that the paid-page cap holds.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var starts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, r.URL.Query().Get("start"))
		mu.Unlock()
		start, _ := strconv.Atoi(r.URL.Query().Get("start"))
		num, _ := strconv.Atoi(r.URL.Query().Get("num"))
		var results []map[string]any
		for i := range num {
			results = append(results, map[string]any{"title": fmt.Sprint("Result ", start+i+1)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"search_metadata":    map[string]any{"status": "Success"},
			"organic_results":    results,
			"serpapi_pagination": map[string]any{"next": "https://serpapi.com/search.json?start=more"},
		})
	}))
	t.Cleanup(srv.Close)
	hc, _ := sourcetest.NewClient("")
	c, err := serpapi.New(serpapi.Options{BaseURL: srv.URL, APIKey: "k", MaxPages: 2, HTTP: hc})
	require.NoError(t, err)
	papers, err := c.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 500})
	require.NoError(t, err)
	require.Len(t, papers, 40)
	require.Equal(t, "Result 21", papers[20].Title)
	require.Equal(t, 40, papers[39].Rank)
	mu.Lock()
	require.Equal(t, []string{"", "20"}, starts)
	mu.Unlock()
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		wantCode string
		wantText string
	}{
		{"InvalidKey", http.StatusUnauthorized, `{"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"}`, fault.EUnauthorized, "Invalid API key"},
		{"OutOfSearches", http.StatusOK, `{"error": "Your account has run out of searches."}`, fault.EInternal, "run out of searches"},
		{"StatusError", http.StatusOK, `{"search_metadata": {"status": "Error"}, "organic_results": []}`, fault.EInternal, `status "Error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			_, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
			require.ErrorContains(t, err, tt.wantText)
			require.NotContains(t, err.Error(), "serp-secret")
		})
	}
}

// TestNextPage checks a next page ("Show more") starts at the offset the
// request carries, as Google Scholar's start, and keeps the total the
// first of its responses estimates.
func TestNextPage(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var starts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, r.URL.Query().Get("start"))
		mu.Unlock()
		start, _ := strconv.Atoi(r.URL.Query().Get("start"))
		num, _ := strconv.Atoi(r.URL.Query().Get("num"))
		var results []map[string]any
		for i := range num {
			results = append(results, map[string]any{"title": fmt.Sprint("Result ", start+i+1)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"search_metadata":    map[string]any{"status": "Success"},
			"search_information": map[string]any{"total_results": 130},
			"organic_results":    results,
			"serpapi_pagination": map[string]any{"next": "https://serpapi.com/search.json?start=more"},
		})
	}))
	t.Cleanup(srv.Close)
	hc, _ := sourcetest.NewClient("")
	c, err := serpapi.New(serpapi.Options{BaseURL: srv.URL, APIKey: "k", MaxPages: 2, HTTP: hc})
	require.NoError(t, err)
	page, err := c.SearchCounted(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 20, Offset: 20})
	require.NoError(t, err)
	require.Len(t, page.Papers, 20)
	require.Equal(t, "Result 21", page.Papers[0].Title)
	require.Equal(t, 130, page.Total)
	mu.Lock()
	require.Equal(t, []string{"20"}, starts)
	mu.Unlock()
}
