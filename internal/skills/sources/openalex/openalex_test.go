package openalex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/openalex"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(base string, hc *httpclient.Client) (sources.Source, error) {
	return openalex.New(openalex.Options{BaseURL: base, Contact: "ada@example.org", HTTP: hc})
}

func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Conformance(t, newSource, sourcetest.Fixture{
		OK:      sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/works.json")},
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
		Sent: func(t *testing.T, reqs []*http.Request) {
			require.Len(t, reqs, 1)
			q := reqs[0].URL.Query()
			require.Equal(t, "/works", reqs[0].URL.Path)
			require.Equal(t, `"sleep spindles" AND memory`, q.Get("search"))
			require.Equal(t, "from_publication_date:2015-01-01,to_publication_date:2020-12-31", q.Get("filter"))
			require.Equal(t, "25", q.Get("per-page"))
			require.Equal(t, "1", q.Get("page"))
			require.Equal(t, "ada@example.org", q.Get("mailto"))
			require.Empty(t, q.Get("api_key"))
		},
		Empty:       sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/empty.json")},
		Malformed:   sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/malformed.json")},
		ContentType: "application/json",
	})
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		years research.YearRange
		want  string
	}{
		{"Open", research.YearRange{}, ""},
		{"FromOnly", research.YearRange{From: 2010}, "from_publication_date:2010-01-01"},
		{"ToOnly", research.YearRange{To: 1999}, "to_publication_date:1999-12-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sourcetest.NewServer(t, sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/empty.json")}, "application/json")
			hc, _ := sourcetest.NewClient("")
			c, err := openalex.New(openalex.Options{BaseURL: srv.URL + "/", APIKey: "k1", HTTP: hc})
			require.NoError(t, err)
			_, err = c.Search(context.Background(), sources.SourceRequest{Query: "x", YearRange: tt.years, MaxResults: 5})
			require.NoError(t, err)
			q := srv.Requests()[0].URL.Query()
			require.Equal(t, tt.want, q.Get("filter"))
			_, has := q["filter"]
			require.Equal(t, tt.want != "", has)
			require.Equal(t, "k1", q.Get("api_key"))
			require.Empty(t, q.Get("mailto"))
		})
	}
}

// TestSearchPages checks that more than one page is fetched when the caller
// wants more than OpenAlex serves per page, and that it stops at the cap.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		per, _ := strconv.Atoi(r.URL.Query().Get("per-page"))
		var results []map[string]any
		for i := range per {
			n := (page-1)*per + i + 1
			if n > 450 {
				break
			}
			results = append(results, map[string]any{"id": fmt.Sprint("https://openalex.org/W", n), "title": fmt.Sprint("Work ", n), "publication_year": 2020})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": 450}, "results": results})
	})
	tests := []struct {
		max       int
		wantLen   int
		wantCalls int32
	}{
		{max: 300, wantLen: 300, wantCalls: 2},
		{max: 1000, wantLen: 450, wantCalls: 3},
	}
	for _, tt := range tests {
		calls.Store(0)
		papers, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: tt.max})
		require.NoError(t, err)
		require.Len(t, papers, tt.wantLen)
		require.Equal(t, tt.wantCalls, calls.Load())
		require.Equal(t, "Work 201", papers[200].Title)
		require.Equal(t, 201, papers[200].Rank)
	}
}

func TestAbstract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		index map[string][]int
		want  string
	}{
		{"Nil", nil, ""},
		{"Repeated", map[string][]int{"the": {0, 2}, "cat": {1}, "hat": {3}}, "the cat the hat"},
		{"Gap", map[string][]int{"a": {0}, "c": {5}}, "a c"},
		{"Unicode", map[string][]int{"naïve": {1}, "Über": {0}}, "Über naïve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, openalex.Abstract(tt.index))
		})
	}
}

func TestNewAndSearchValidate(t *testing.T) {
	t.Parallel()
	_, err := openalex.New(openalex.Options{BaseURL: "not a url"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	c, err := openalex.New(openalex.Options{})
	require.NoError(t, err)
	require.Equal(t, research.SourceOpenAlex, c.Name())
	_, err = c.Search(context.Background(), sources.SourceRequest{Query: " ", MaxResults: 5})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}
