package openalex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
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

// TestNextPage checks a next page ("Show more") asks OpenAlex for the
// page (page, per-page) that holds the offset, dropping the records of
// that page before it when the offset is not on a page boundary, and
// keeps meta.count as the total.
func TestNextPage(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked [][2]string
	src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, [2]string{r.URL.Query().Get("page"), r.URL.Query().Get("per-page")})
		mu.Unlock()
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		per, _ := strconv.Atoi(r.URL.Query().Get("per-page"))
		var results []map[string]any
		for i := range per {
			if n := (page-1)*per + i + 1; n <= 49 {
				results = append(results, map[string]any{"id": fmt.Sprint("https://openalex.org/W", n), "title": fmt.Sprint("Work ", n), "publication_year": 2020})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": 49}, "results": results})
	})
	tests := []struct {
		offset    int
		wantAsked [][2]string
		wantFirst string
		wantLen   int
	}{
		{offset: 25, wantAsked: [][2]string{{"2", "25"}}, wantFirst: "Work 26", wantLen: 24},
		{offset: 10, wantAsked: [][2]string{{"1", "25"}, {"2", "25"}}, wantFirst: "Work 11", wantLen: 25},
	}
	for _, tt := range tests {
		mu.Lock()
		asked = nil
		mu.Unlock()
		page, err := src.(sources.Counter).SearchCounted(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 25, Offset: tt.offset})
		require.NoError(t, err)
		require.Len(t, page.Papers, tt.wantLen)
		require.Equal(t, tt.wantFirst, page.Papers[0].Title)
		require.Equal(t, 1, page.Papers[0].Rank)
		require.Equal(t, 49, page.Total)
		mu.Lock()
		require.Equal(t, tt.wantAsked, asked)
		mu.Unlock()
	}
}
