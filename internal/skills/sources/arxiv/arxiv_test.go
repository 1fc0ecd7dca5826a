package arxiv_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/arxiv"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(base string, hc *httpclient.Client) (sources.Source, error) {
	return arxiv.New(arxiv.Options{BaseURL: base, HTTP: hc})
}

const atom = "application/atom+xml; charset=utf-8"

// TestSearcherRecordsTheQueryAsSent runs arXiv through the searcher: the
// query the search records (and the PRISMA-S report prints) is the
// search_query arXiv received, year clause included.
func TestSearcherRecordsTheQueryAsSent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		years research.YearRange
		want  string
	}{
		{"Open", research.YearRange{}, "ti:sleep OR abs:dream"},
		{"From", research.YearRange{From: 2015}, "(ti:sleep OR abs:dream) AND submittedDate:[201501010000 TO 999912312359]"},
		{"To", research.YearRange{To: 2001}, "(ti:sleep OR abs:dream) AND submittedDate:[199101010000 TO 200112312359]"},
		{"Both", research.YearRange{From: 1999, To: 2001}, "(ti:sleep OR abs:dream) AND submittedDate:[199901010000 TO 200112312359]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, srv := sourcetest.Start(t, newSource, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/empty.xml")}, atom)
			s, err := searcher.New([]sources.Source{src}, searcher.Options{})
			require.NoError(t, err)
			res, err := s.Search(context.Background(), research.SearchStrategy{
				Queries:             []research.Query{{Text: "sleep OR dream", PerSource: map[string]string{research.SourceArxiv: "ti:sleep OR abs:dream"}}},
				Sources:             []string{research.SourceArxiv},
				YearRange:           tt.years,
				MaxResultsPerSource: 5,
			})
			require.NoError(t, err)
			require.Equal(t, tt.want, srv.Requests()[0].URL.Query().Get("search_query"))
			require.Equal(t, []string{tt.want}, res.Sources[research.SourceArxiv].Queries)
		})
	}
}

func TestMaxResultsCapsEntries(t *testing.T) {
	t.Parallel()
	src, srv := sourcetest.Start(t, newSource, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	papers, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 1})
	require.NoError(t, err)
	require.Len(t, papers, 1)
	require.Equal(t, "1", srv.Requests()[0].URL.Query().Get("max_results"))
}

func TestAPIErrorFeed(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/error.xml")}, atom)
	papers, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "max_results must be non-negative")
	require.Nil(t, papers)
}

func TestHTMLInsteadOfAtom(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{"/api/query": "<html><body>Service temporarily unavailable</body></html>"}, "text/html")
	_, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
	require.ErrorContains(t, err, "not the XML expected")
}

// searchUnderLimit runs queries through a searcher whose per-call timeout
// is timeout, against srv, with arXiv's limit scaled down to one request
// every `every` on one connection, and a query's wait for its turn bounded
// by queue (0: no bound).
func searchUnderLimit(t *testing.T, ctx context.Context, srv *sourcetest.Server, every, queue, timeout time.Duration, queries ...string) (skills.SearchResult, error) {
	t.Helper()
	hc := httpclient.New(httpclient.Options{MaxAttempts: 1, Limit: httpclient.Limit{Every: every, Burst: 1, Concurrent: 1, MaxQueueWait: queue}})
	src, err := newSource(srv.URL, hc)
	require.NoError(t, err)
	s, err := searcher.New([]sources.Source{src}, searcher.Options{Timeout: timeout})
	require.NoError(t, err)
	st := research.SearchStrategy{Sources: []string{research.SourceArxiv}, MaxResultsPerSource: 5}
	for _, q := range queries {
		st.Queries = append(st.Queries, research.Query{Text: q})
	}
	return s.Search(ctx, st)
}

// TestQueuedQueriesDoNotTimeOut is arXiv under load: a strategy's queries
// all reach arXiv's client at once and leave it one per interval, so the
// last waits (N-1) × interval, here more than the per-call timeout. The
// wait is our own queue, not arXiv being slow, so every query must succeed:
// the timeout bounds the remote call only.
func TestQueuedQueriesDoNotTimeOut(t *testing.T) {
	t.Parallel()
	const n, every, timeout = 6, 150 * time.Millisecond, 500 * time.Millisecond // generous: the remote call gets 500ms even on a loaded CI machine
	srv := sourcetest.NewServer(t, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	queries := make([]string, n)
	for i := range queries {
		queries[i] = fmt.Sprintf("all:sleep%d", i)
	}
	start := time.Now()
	res, err := searchUnderLimit(t, context.Background(), srv, every, time.Minute, timeout, queries...)
	require.NoError(t, err)
	sr := res.Sources[research.SourceArxiv]
	require.Empty(t, sr.Error)
	require.Len(t, srv.Requests(), n)
	require.GreaterOrEqual(t, time.Since(start), (n-1)*every, "the limit spaced the requests out")
	require.Greater(t, (n-1)*every, timeout, "the queue is longer than the timeout")
}

// TestSlowArxivStillTimesOut: a server that does not answer still fails
// the call after the timeout, and a query queued behind it still gets its
// own full timeout, not what the first left over.
func TestSlowArxivStillTimesOut(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(t, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	srv.Hang()
	res, err := searchUnderLimit(t, context.Background(), srv, 10*time.Millisecond, 0, 100*time.Millisecond, "all:a", "all:b")
	require.NoError(t, err)
	sr := res.Sources[research.SourceArxiv]
	require.Regexp(t, `^query 1: internal: timed out after 100ms\b.*; query 2: internal: timed out after 100ms\b`, sr.Error)
	require.Len(t, srv.Requests(), 2, "the queued query was sent, then timed out on its own")
}

// TestCancelStopsTheQueue: cancelling the search stops a query waiting its
// turn at once, long before the queue's bound.
func TestCancelStopsTheQueue(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(t, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // the second query is queued for an hour by now
		cancel()
	}()
	start := time.Now()
	// The queue's bound is above the hour's wait: with both at an hour,
	// the second query's wait for the one connection could bring its turn
	// past the bound, and it failed at once instead of waiting.
	res, err := searchUnderLimit(t, ctx, srv, time.Hour, 2*time.Hour, time.Hour, "all:a", "all:b")
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), 10*time.Second)
	require.Len(t, srv.Requests(), 1)
	// Only the query arXiv received is recorded as sent; the one still
	// queued is recorded as not sent, and says why.
	sent := srv.Requests()[0].URL.Query().Get("search_query")
	queries := res.Sources[research.SourceArxiv].Queries
	require.ElementsMatch(t, []string{sent, ""}, queries)
	notSent := 1 + slices.Index(queries, "")
	require.Contains(t, res.Sources[research.SourceArxiv].Error, fmt.Sprintf("query %d: internal: search cancelled before it was sent", notSent))
}

// TestQueueWaitIsBounded: a query whose turn under arXiv's limit would
// not come within the queue's bound fails, in arXiv's terms, instead of
// waiting: here the next turn is an hour away and the bound 50ms. The
// other query is sent and kept, and the search itself does not fail.
func TestQueueWaitIsBounded(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(t, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	start := time.Now()
	res, err := searchUnderLimit(t, context.Background(), srv, time.Hour, 50*time.Millisecond, time.Hour, "all:a", "all:b")
	require.NoError(t, err)
	require.Less(t, time.Since(start), time.Minute, "the search did not wait for the hour")
	sr := res.Sources[research.SourceArxiv]
	require.Regexp(t, `^query [12]: internal: no turn within 50ms under arXiv's rate limit \(one request every 1h0m0s, shared by every search on this server\); try again later$`, sr.Error)
	require.Positive(t, sr.Count, "the query that was sent kept its papers")
	require.Len(t, srv.Requests(), 1)
}

// TestQueueWaitBehindASlowQuery: a query queued behind one arXiv takes
// long to answer (it holds the one connection) gives up after the bound,
// while the slow one still gets its whole timeout.
func TestQueueWaitBehindASlowQuery(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(t, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	srv.Hang()
	res, err := searchUnderLimit(t, context.Background(), srv, time.Millisecond, 100*time.Millisecond, 2*time.Second, "all:a", "all:b")
	require.NoError(t, err)
	sr := res.Sources[research.SourceArxiv]
	require.Regexp(t, `^query [12]: internal: (timed out after 2s\b.*; query [12]: internal: no turn within 100ms under arXiv's rate limit|no turn within 100ms under arXiv's rate limit .*; query [12]: internal: timed out after 2s\b)`, sr.Error)
	require.Len(t, srv.Requests(), 1, "the queued query was never sent")
}

// TestNextPage checks a next page ("Show more") is asked from arXiv with
// start at the offset, and its total is still opensearch:totalResults.
func TestNextPage(t *testing.T) {
	t.Parallel()
	src, srv := sourcetest.Start(t, newSource, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/feed.xml")}, atom)
	page, err := src.(sources.Counter).SearchCounted(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 2, Offset: 2})
	require.NoError(t, err)
	q := srv.Requests()[0].URL.Query()
	require.Equal(t, "2", q.Get("start"))
	require.Equal(t, "2", q.Get("max_results"))
	require.Equal(t, 4, page.Total)
}

// TestSpuriousEmptyFirstPageIsAskedAgain: arXiv sometimes answers a query
// with an empty feed that the same request answers in full a moment later;
// an empty first page is asked for once more, a next page is not, and the
// request says it wants relevance order.
func TestSpuriousEmptyFirstPageIsAskedAgain(t *testing.T) {
	t.Parallel()
	empty, full := sourcetest.ReadFile(t, "testdata/empty.xml"), sourcetest.ReadFile(t, "testdata/feed.xml")
	var mu sync.Mutex
	var got []url.Values
	src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Query())
		n := len(got)
		mu.Unlock()
		w.Header().Set("Content-Type", atom)
		if n == 1 {
			fmt.Fprint(w, empty)
			return
		}
		fmt.Fprint(w, full)
	})
	p, err := src.(sources.Counter).SearchCounted(context.Background(), sources.SourceRequest{Query: "ti:sleep", MaxResults: 5})
	require.NoError(t, err)
	require.NotEmpty(t, p.Papers, "the second answer is used")
	require.Len(t, got, 2)
	require.Equal(t, "relevance", got[0].Get("sortBy"))
	require.Equal(t, "descending", got[0].Get("sortOrder"))

	mu.Lock()
	got = nil
	mu.Unlock()
	_, err = src.(sources.Counter).SearchCounted(context.Background(), sources.SourceRequest{Query: "ti:sleep", MaxResults: 5, Offset: 5})
	require.NoError(t, err)
	require.Len(t, got, 1, "a next page is not asked again")
}

// TestRecordedResponse decodes a feed arXiv really sent, as recorded in
// arxiv.py's test fixtures (testdata/recorded/arxiv-py): the current
// feed's namespaces, its opensearch total and its entries.
func TestRecordedResponse(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{"/api/query": sourcetest.ReadFile(t, "testdata/recorded/arxiv-py/query_testing_m10.xml")}, atom)
	page, err := src.(sources.Counter).SearchCounted(context.Background(), sources.SourceRequest{Query: "all:testing", MaxResults: 10})
	require.NoError(t, err)
	require.Equal(t, 214881, page.Total, "opensearch:totalResults")
	require.Len(t, page.Papers, 10)
	first := page.Papers[0]
	require.Equal(t, "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques", first.Title)
	require.Equal(t, "2202.12139", research.NormalizeArxivID(first.ArxivID))
	require.Equal(t, 2022, first.Year)
	require.NotEmpty(t, first.Authors)
	require.NotEmpty(t, first.Abstract)
}
