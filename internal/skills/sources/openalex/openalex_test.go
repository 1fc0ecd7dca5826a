package openalex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
	return openalex.New(openalex.Options{BaseURL: base, Contact: "ada@example.org", APIKey: "k1", HTTP: hc})
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		years research.YearRange
		want  string
	}{
		{"Open", research.YearRange{}, "title_and_abstract.search:x"},
		{"FromOnly", research.YearRange{From: 2010}, "title_and_abstract.search:x,from_publication_date:2010-01-01"},
		{"ToOnly", research.YearRange{To: 1999}, "title_and_abstract.search:x,to_publication_date:1999-12-31"},
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
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
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
		{max: 300, wantLen: 300, wantCalls: 3},
		{max: 1000, wantLen: 450, wantCalls: 5},
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
	c, err := openalex.New(openalex.Options{APIKey: "k1"})
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
		asked = append(asked, [2]string{r.URL.Query().Get("page"), r.URL.Query().Get("per_page")})
		mu.Unlock()
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
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

// TestKeyRequired: OpenAlex has required an API key since 13 February
// 2026 (https://developers.openalex.org/guides/authentication); a client
// without one is refused when it is built, not after its first search
// was turned away.
func TestKeyRequired(t *testing.T) {
	t.Parallel()
	_, err := openalex.New(openalex.Options{Contact: "ada@example.org", APIKey: "  "})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "API key is required")
}

// TestPerPageCapped: the documented per_page is 1–100; a search for more
// asks for pages of 100.
func TestPerPageCapped(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var perPages []string
	src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		perPages = append(perPages, r.URL.Query().Get("per_page"))
		mu.Unlock()
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		if per < 1 || per > 100 {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Invalid query parameters error.","message":"per_page must be between 1 and 100"}`))
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		var results []map[string]any
		for i := range per {
			n := (page-1)*per + i + 1
			results = append(results, map[string]any{"id": fmt.Sprint("https://openalex.org/W", n), "title": fmt.Sprint("Work ", n)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": 1000}, "results": results})
	})
	papers, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 150})
	require.NoError(t, err)
	require.Len(t, papers, 150)
	require.Equal(t, []string{"100", "100"}, perPages)
}

// TestStatusesAsOpenAlexDocumentsThem: OpenAlex answers 403 for "rate
// limit exceeded; slow down" and 429 for "daily limit exceeded"
// (https://developers.openalex.org/api-reference/errors). A 403 is
// retried, not reported as a bad key; a daily-limit 429 is not retried
// (each retry would be refused too, and counts against the key) and the
// error says so, for the run page to show as the source's error.
func TestStatusesAsOpenAlexDocumentsThem(t *testing.T) {
	t.Parallel()
	ok := sourcetest.ReadFile(t, "testdata/works.json")
	tests := []struct {
		name      string
		replies   []func(w http.ResponseWriter)
		wantErr   string
		wantText  string
		wantCalls int32
	}{
		{"403IsSlowDown", []func(http.ResponseWriter){status(403, nil, `{"error":"Rate limit exceeded"}`), body(ok)}, "", "", 2},
		{"429IsTheDailyLimit", []func(http.ResponseWriter){status(429, nil, `{"error":"Rate limit exceeded"}`), body(ok)}, fault.EInternal, openalex.DailyLimitReason, 1},
		{"429SayingDailyWithRetryAfter", []func(http.ResponseWriter){status(429, map[string]string{"Retry-After": "5"}, `{"message":"You have exceeded your daily credits"}`), body(ok)}, fault.EInternal, "not retried", 1},
		{"429WithAShortRetryAfterIsTheRate", []func(http.ResponseWriter){status(429, map[string]string{"Retry-After": "1"}, `{"error":"Too many requests per second"}`), body(ok)}, "", "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				tt.replies[min(n, len(tt.replies)-1)](w)
			})
			papers, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
			require.Equal(t, tt.wantErr, fault.ErrorCode(err), "err: %v", err)
			if tt.wantErr == "" {
				require.NotEmpty(t, papers)
			} else {
				require.NotEqual(t, fault.EUnauthorized, fault.ErrorCode(err))
				require.Contains(t, err.Error(), tt.wantText)
			}
			require.Equal(t, tt.wantCalls, calls.Load())
		})
	}
}

func status(code int, header map[string]string, b string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(b))
	}
}

func body(b string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { _, _ = w.Write([]byte(b)) }
}

// TestLongQueryRefused: OpenAlex refuses a request URL over 4094 bytes
// with a 400; the source refuses such a query before sending it, saying
// why and how to shorten it, instead of passing on the bare 400.
func TestLongQueryRefused(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if len(r.URL.String()) > openalex.MaxURLBytes {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Request URL too long"}`))
			return
		}
		_, _ = w.Write([]byte(`{"meta":{"count":0},"results":[]}`))
	})
	long := "sleep AND (" + strings.Repeat("memoryconsolidation OR ", 200) + "recall)"
	_, err := src.Search(context.Background(), sources.SourceRequest{Query: long, MaxResults: 5})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "too long for OpenAlex")
	require.Contains(t, err.Error(), "4094")
	require.Zero(t, calls.Load())

	_, err = src.Search(context.Background(), sources.SourceRequest{Query: "sleep AND (memory OR recall)", MaxResults: 5})
	require.NoError(t, err)
}

// TestFilterText: commas and bars separate filters and a filter's
// alternatives, so a query's own are sent as spaces.
func TestFilterText(t *testing.T) {
	t.Parallel()
	require.Equal(t, `"sleep memory consolidation" OR "a b"`, openalex.FilterText(`"sleep, memory, consolidation" OR "a|b"`))
}
