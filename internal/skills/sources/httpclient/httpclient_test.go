package httpclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
)

// reply is one scripted server answer.
type reply struct {
	status int
	header map[string]string
	body   string
	hangup bool // close the connection without answering (a network error)
}

// bundle is what setup returns: a server that answers with the script in
// order (repeating the last reply), the client under test and what it slept.
type bundle struct {
	srv      *httptest.Server
	client   *httpclient.Client
	calls    atomic.Int32
	mu       sync.Mutex
	sleeps   []time.Duration
	gotAgent atomic.Value
}

var fixedNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T, opts httpclient.Options, script ...reply) *bundle {
	t.Helper()
	b := &bundle{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(b.calls.Add(1)) - 1
		b.gotAgent.Store(r.Header.Get("User-Agent"))
		rep := script[min(n, len(script)-1)]
		if rep.hangup {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write([]byte(rep.body))
	}))
	t.Cleanup(b.srv.Close)
	if opts.Sleep == nil {
		opts.Sleep = func(ctx context.Context, d time.Duration) error {
			b.mu.Lock()
			b.sleeps = append(b.sleeps, d)
			b.mu.Unlock()
			return ctx.Err()
		}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	if opts.Jitter == nil {
		opts.Jitter = func(d time.Duration) time.Duration { return d }
	}
	if opts.BaseDelay == 0 {
		opts.BaseDelay = 100 * time.Millisecond
	}
	b.client = httpclient.New(opts)
	return b
}

func (b *bundle) slept() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.sleeps...)
}

func TestGetRetries(t *testing.T) {
	t.Parallel()
	ok := reply{status: 200, body: `{"ok":true}`}
	tests := []struct {
		name       string
		opts       httpclient.Options
		script     []reply
		wantErr    string // engine code; "" for success
		wantCalls  int
		wantSleeps []time.Duration
	}{
		{"Success", httpclient.Options{}, []reply{ok}, "", 1, nil},
		{"429RetryAfterSeconds", httpclient.Options{}, []reply{{status: 429, header: map[string]string{"Retry-After": "7"}}, ok}, "", 2, []time.Duration{7 * time.Second}},
		{"503RetryAfterHTTPDate", httpclient.Options{}, []reply{{status: 503, header: map[string]string{"Retry-After": fixedNow.Add(5 * time.Second).Format(http.TimeFormat)}}, ok}, "", 2, []time.Duration{5 * time.Second}},
		{"RetryAfterDateInPast", httpclient.Options{}, []reply{{status: 503, header: map[string]string{"Retry-After": fixedNow.Add(-time.Hour).Format(http.TimeFormat)}}, ok}, "", 2, []time.Duration{0}},
		{"RetryAfterGarbageFallsBackToBackoff", httpclient.Options{}, []reply{{status: 429, header: map[string]string{"Retry-After": "soon"}}, ok}, "", 2, []time.Duration{100 * time.Millisecond}},
		{"500ThenSuccess", httpclient.Options{}, []reply{{status: 500}, ok}, "", 2, []time.Duration{100 * time.Millisecond}},
		{"NetworkErrorThenSuccess", httpclient.Options{}, []reply{{hangup: true}, ok}, "", 2, []time.Duration{100 * time.Millisecond}},
		{"Persistent503ExponentialBackoff", httpclient.Options{MaxAttempts: 4}, []reply{{status: 503}}, fault.EInternal, 4, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"BackoffCappedAtMaxWait", httpclient.Options{MaxAttempts: 4, MaxWait: 250 * time.Millisecond}, []reply{{status: 502}}, fault.EInternal, 4, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}},
		{"RetryAfterLongerThanMaxWaitGivesUp", httpclient.Options{MaxWait: time.Minute}, []reply{{status: 429, header: map[string]string{"Retry-After": "3600"}}, ok}, fault.EInternal, 1, nil},
		{"400NotRetried", httpclient.Options{}, []reply{{status: 400, body: "bad filter"}, ok}, fault.EInvalid, 1, nil},
		{"401NotRetried", httpclient.Options{}, []reply{{status: 401}, ok}, fault.EUnauthorized, 1, nil},
		{"403NotRetried", httpclient.Options{}, []reply{{status: 403}, ok}, fault.EUnauthorized, 1, nil},
		{"404NotRetried", httpclient.Options{}, []reply{{status: 404}, ok}, fault.ENotFound, 1, nil},
		{"BodyTooLarge", httpclient.Options{MaxBodyBytes: 8}, []reply{{status: 200, body: strings.Repeat("x", 9)}}, fault.EInternal, 1, nil},
		{"BodyAtLimit", httpclient.Options{MaxBodyBytes: 8}, []reply{{status: 200, body: strings.Repeat("x", 8)}}, "", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.opts, tt.script...)
			body, err := b.client.Get(context.Background(), b.srv.URL+"/works?q=x", nil)
			require.Equal(t, tt.wantErr, fault.ErrorCode(err), "err: %v", err)
			if tt.wantErr == "" {
				require.NotEmpty(t, body)
			}
			require.Equal(t, tt.wantCalls, int(b.calls.Load()))
			require.Equal(t, tt.wantSleeps, b.slept())
		})
	}
}

func TestStatusErrorIsReachable(t *testing.T) {
	t.Parallel()
	b := setup(t, httpclient.Options{MaxAttempts: 2}, reply{status: 503, body: "upstream\n  down"})
	_, err := b.client.Get(context.Background(), b.srv.URL, nil)
	var se *httpclient.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 503, se.Status)
	require.Equal(t, "upstream down", se.Body)
	require.Contains(t, err.Error(), "giving up after 2 attempts")
}

func TestUserAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		contact string
		want    string
	}{
		{"", "Quarry/0.1"},
		{"  ", "Quarry/0.1"},
		{"ada@example.org", "Quarry/0.1 (mailto:ada@example.org)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			b := setup(t, httpclient.Options{Contact: tt.contact}, reply{status: 200, body: "{}"})
			_, err := b.client.Get(context.Background(), b.srv.URL, http.Header{"User-Agent": {"overridden"}})
			require.NoError(t, err)
			require.Equal(t, tt.want, b.gotAgent.Load())
		})
	}
}

func TestErrorsDoNotLeakQueryString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script []reply
	}{
		{"Status", []reply{{status: 401}}},
		{"Network", []reply{{hangup: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, httpclient.Options{MaxAttempts: 2}, tt.script...)
			_, err := b.client.Get(context.Background(), b.srv.URL+"/search.json?api_key=s3cr3t&q=x", nil)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "s3cr3t")
			require.Contains(t, err.Error(), "/search.json")
		})
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	b := setup(t, httpclient.Options{
		Sleep: func(ctx context.Context, d time.Duration) error {
			cancel() // the user gives up while we wait
			<-ctx.Done()
			return ctx.Err()
		},
	}, reply{status: 503})
	_, err := b.client.Get(ctx, b.srv.URL, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, int(b.calls.Load()))
}

func TestRetryThatWouldPassDeadlineGivesUp(t *testing.T) {
	t.Parallel()
	b := setup(t, httpclient.Options{Now: time.Now}, reply{status: 429, header: map[string]string{"Retry-After": "20"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := b.client.Get(ctx, b.srv.URL, nil)
	require.ErrorContains(t, err, "would pass the deadline")
	require.Empty(t, b.slept())
}

func TestRealSleepHonoursContext(t *testing.T) {
	t.Parallel()
	// Default Sleep: a 1h backoff must end as soon as the context does.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	c := httpclient.New(httpclient.Options{BaseDelay: time.Hour, MaxWait: 2 * time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Get(ctx, srv.URL, nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestGetJSONMalformed(t *testing.T) {
	t.Parallel()
	b := setup(t, httpclient.Options{}, reply{status: 200, body: `{"results": [`})
	var v map[string]any
	err := b.client.GetJSON(context.Background(), b.srv.URL, nil, &v)
	require.Equal(t, fault.EInternal, fault.ErrorCode(err))
	require.ErrorContains(t, err, "not the JSON expected")
	var se *httpclient.StatusError
	require.False(t, errors.As(err, &se))
}

func TestGetXMLMalformed(t *testing.T) {
	t.Parallel()
	b := setup(t, httpclient.Options{}, reply{status: 200, body: `<feed><entry>`})
	var v struct{}
	err := b.client.GetXML(context.Background(), b.srv.URL, nil, &v)
	require.ErrorContains(t, err, "not the XML expected")
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantCode string
	}{
		{"", "https://api.example.org", ""},
		{"http://127.0.0.1:9/api/", "http://127.0.0.1:9/api", ""},
		{"api.example.org", "", fault.EInvalid},
		{"::", "", fault.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := httpclient.BaseURL("demo", tt.in, "https://api.example.org/")
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
			require.Equal(t, tt.want, got)
		})
	}
}

// fakeClock is a clock that only moves when the client sleeps, so limiter
// waits are exact and cost no real time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return ctx.Err()
}

func (f *fakeClock) Slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

func TestLimitSpacesRequestsOnAFakeClock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		limit      httpclient.Limit
		script     []reply
		requests   int
		wantSleeps []time.Duration
	}{
		{"NoLimit", httpclient.Limit{}, []reply{{status: 200, body: "{}"}}, 3, nil},
		{"OneEvery50ms", httpclient.Limit{Every: 50 * time.Millisecond}, []reply{{status: 200, body: "{}"}}, 4,
			[]time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}},
		{"BurstOfTwo", httpclient.Limit{Every: 50 * time.Millisecond, Burst: 2}, []reply{{status: 200, body: "{}"}}, 4,
			[]time.Duration{50 * time.Millisecond, 50 * time.Millisecond}},
		// The retry waits out Retry-After (0 s) and then its turn: a retry
		// is a request like any other.
		{"RetryWaitsItsTurn", httpclient.Limit{Every: 50 * time.Millisecond}, []reply{{status: 429, header: map[string]string{"Retry-After": "0"}}, {status: 200, body: "{}"}}, 1,
			[]time.Duration{0, 50 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeClock{now: fixedNow}
			b := setup(t, httpclient.Options{Limit: tt.limit, Now: clock.Now, Sleep: clock.Sleep}, tt.script...)
			for range tt.requests {
				_, err := b.client.Get(context.Background(), b.srv.URL, nil)
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantSleeps, clock.Slept())
		})
	}
}

// TestLimitSpacesRequestsInRealTime fires requests together at a real
// limiter of one per 50 ms. The limiter's first turn is no earlier than the
// client's creation, so the i-th request to arrive cannot arrive before
// i×50 ms after it: a lower bound only, which no slow machine can break.
func TestLimitSpacesRequestsInRealTime(t *testing.T) {
	t.Parallel()
	const n, every = 4, 50 * time.Millisecond
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	start := time.Now()
	c := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Every: every}})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := c.Get(context.Background(), srv.URL, nil)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, arrivals, n)
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	for i, at := range arrivals {
		require.GreaterOrEqual(t, at.Sub(start), time.Duration(i)*every, "request %d", i)
	}
}

func TestLimitCapsRequestsInFlight(t *testing.T) {
	t.Parallel()
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond) // let the others pile up if they can
	}))
	t.Cleanup(srv.Close)
	c := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Concurrent: 2}})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			_, err := c.Get(context.Background(), srv.URL, nil)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.LessOrEqual(t, most.Load(), int32(2))
	require.Equal(t, httpclient.Limit{Concurrent: 2}, c.Limit())
}

func TestLimitWaitHonoursContext(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	c := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Every: time.Hour}})
	require.Equal(t, httpclient.Limit{Every: time.Hour, Burst: 1}, c.Limit())
	_, err := c.Get(context.Background(), srv.URL, nil) // spends the one turn there is
	require.NoError(t, err)

	t.Run("Cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := c.Get(ctx, srv.URL, nil)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("TurnAfterDeadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := c.Get(ctx, srv.URL, nil)
		require.Equal(t, fault.EInternal, fault.ErrorCode(err))
		require.ErrorContains(t, err, "after the deadline")
	})
}

func TestLimitSlotWaitHonoursContext(t *testing.T) {
	t.Parallel()
	arrived, unblock := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-unblock:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(unblock) })
	c := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Concurrent: 1}})
	go func() { _, _ = c.Get(context.Background(), srv.URL, nil) }() // holds the one slot
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := c.Get(ctx, srv.URL, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestNewEndpointLimit(t *testing.T) {
	t.Parallel()
	limit := func(contact, apiKey string) httpclient.Limit {
		if apiKey != "" {
			return httpclient.Limit{Every: 100 * time.Millisecond}
		}
		return httpclient.Limit{Every: time.Second, Concurrent: 1}
	}
	ep, err := httpclient.NewEndpoint("demo", "https://api.example.org", httpclient.EndpointOptions{Contact: " ada@example.org ", APIKey: " key "}, limit)
	require.NoError(t, err)
	require.Equal(t, httpclient.Limit{Every: 100 * time.Millisecond, Burst: 1}, ep.HTTP.Limit())
	require.Equal(t, "key", ep.APIKey)
	ep, err = httpclient.NewEndpoint("demo", "https://api.example.org", httpclient.EndpointOptions{APIKey: "  "}, limit)
	require.NoError(t, err)
	require.Equal(t, httpclient.Limit{Every: time.Second, Burst: 1, Concurrent: 1}, ep.HTTP.Limit())
	// A client the caller built is used as it is.
	hc := httpclient.New(httpclient.Options{})
	ep, err = httpclient.NewEndpoint("demo", "https://api.example.org", httpclient.EndpointOptions{APIKey: "key", HTTP: hc}, limit)
	require.NoError(t, err)
	require.Same(t, hc, ep.HTTP)
	require.Equal(t, httpclient.Limit{}, ep.HTTP.Limit())
}

// getSource is a Source that GETs url with c, so tests can run the client
// under a searcher's per-call timeout.
type getSource struct {
	c   *httpclient.Client
	url string
}

func (getSource) Name() string { return "api" }
func (s getSource) Search(ctx context.Context, _ sources.SourceRequest) ([]research.RawPaper, error) {
	if _, err := s.c.Get(ctx, s.url, nil); err != nil {
		return nil, err
	}
	return []research.RawPaper{{Title: "ok"}}, nil
}

// TestSearcherTimeoutUnderLimit: under a searcher, the wait for a turn
// under Limit does not count against the call's timeout, while a retry the
// server asks to come after the timeout gives up at once, as it would
// before a deadline.
func TestSearcherTimeoutUnderLimit(t *testing.T) {
	t.Parallel()
	search := func(t *testing.T, c *httpclient.Client, url string, timeout time.Duration, queries int) research.SourceResult {
		t.Helper()
		s, err := searcher.New([]sources.Source{getSource{c, url}}, searcher.Options{Timeout: timeout})
		require.NoError(t, err)
		st := research.SearchStrategy{Sources: []string{"api"}, MaxResultsPerSource: 1}
		for i := range queries {
			st.Queries = append(st.Queries, research.Query{Text: fmt.Sprint("q", i)})
		}
		res, err := s.Search(context.Background(), st)
		require.NoError(t, err)
		return res.Sources["api"]
	}
	t.Run("TurnsAreNotTimedOut", func(t *testing.T) {
		t.Parallel()
		b := setup(t, httpclient.Options{}, reply{status: 200, body: "{}"}) // its server; the client waits in real time
		// The last query waits 3 × 250ms for its turn, more than the 600ms
		// timeout; the call itself gets all 600ms, ample on a loaded machine
		// (50ms made this flaky under make test's -race on 2 cores).
		c := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Every: 250 * time.Millisecond, Concurrent: 1}})
		sr := search(t, c, b.srv.URL, 600*time.Millisecond, 4)
		require.Empty(t, sr.Error, "3 × 250ms in the queue is not a 600ms timeout")
		require.Equal(t, 4, int(b.calls.Load()))
	})
	t.Run("RetryAfterTheTimeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, httpclient.Options{Now: time.Now}, reply{status: 429, header: map[string]string{"Retry-After": "20"}})
		sr := search(t, b.client, b.srv.URL, 5*time.Second, 1)
		require.Contains(t, sr.Error, "would pass the search's timeout")
		require.Empty(t, b.slept())
	})
}

// TestMaxQueueWaitOnAFakeClock: a turn that would come past MaxQueueWait
// fails at once with a *QueueError, without waiting and without spending
// the turn; a turn within it is waited for; the attempts of one request
// share the bound.
func TestMaxQueueWaitOnAFakeClock(t *testing.T) {
	t.Parallel()
	ok := reply{status: 200, body: "{}"}
	retryNow := reply{status: 503, header: map[string]string{"Retry-After": "0"}}
	tests := []struct {
		name       string
		limit      httpclient.Limit
		script     []reply
		requests   int // the last one is checked; the others must succeed
		wantErr    bool
		wantCalls  int
		wantSleeps []time.Duration
	}{
		{"TurnWithinTheBound", httpclient.Limit{Every: 30 * time.Second, MaxQueueWait: time.Minute}, []reply{ok}, 2, false, 2,
			[]time.Duration{30 * time.Second}},
		{"TurnPastTheBoundFailsAtOnce", httpclient.Limit{Every: 2 * time.Minute, Concurrent: 1, MaxQueueWait: time.Minute}, []reply{ok}, 2, true, 1, nil},
		// Attempt 2 waits 40s of the minute for its turn; attempt 3 would
		// wait 40s more (the zeros are Retry-After).
		{"AttemptsShareTheBound", httpclient.Limit{Every: 40 * time.Second, MaxQueueWait: time.Minute}, []reply{retryNow, retryNow, ok}, 1, true, 2,
			[]time.Duration{0, 40 * time.Second, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeClock{now: fixedNow}
			b := setup(t, httpclient.Options{Limit: tt.limit, Now: clock.Now, Sleep: clock.Sleep}, tt.script...)
			for range tt.requests - 1 {
				_, err := b.client.Get(context.Background(), b.srv.URL, nil)
				require.NoError(t, err)
			}
			_, err := b.client.Get(context.Background(), b.srv.URL, nil)
			if !tt.wantErr {
				require.NoError(t, err)
			} else {
				var qe *httpclient.QueueError
				require.ErrorAs(t, err, &qe)
				require.Equal(t, time.Minute, qe.MaxQueueWait)
				require.Equal(t, tt.limit.Every, qe.Limit.Every)
				require.Equal(t, fault.EInternal, fault.ErrorCode(err))
				require.ErrorContains(t, err, "no turn within 1m0s under this API's rate limit; try again later")
			}
			require.Equal(t, tt.wantCalls, int(b.calls.Load()))
			require.Equal(t, tt.wantSleeps, clock.Slept())
		})
	}
}

// TestMaxQueueWaitGivesTheTurnBack: a request that gives up on a turn
// past the bound does not keep it, so the next request's turn is the one
// it gave up, not one after it.
func TestMaxQueueWaitGivesTheTurnBack(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: fixedNow}
	b := setup(t, httpclient.Options{Limit: httpclient.Limit{Every: 2 * time.Minute, MaxQueueWait: time.Minute}, Now: clock.Now, Sleep: clock.Sleep}, reply{status: 200, body: "{}"})
	_, err := b.client.Get(context.Background(), b.srv.URL, nil)
	require.NoError(t, err)
	_, err = b.client.Get(context.Background(), b.srv.URL, nil)
	var qe *httpclient.QueueError
	require.ErrorAs(t, err, &qe)
	require.NoError(t, clock.Sleep(context.Background(), 90*time.Second)) // the turn is 30s away now
	_, err = b.client.Get(context.Background(), b.srv.URL, nil)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{90 * time.Second, 30 * time.Second}, clock.Slept())
}

// TestMaxQueueWaitBoundsTheSlotWait: a request queued behind one that
// holds the only slot gives up after MaxQueueWait in real time, while a
// cancelled one still stops at once under a long bound.
func TestMaxQueueWaitBoundsTheSlotWait(t *testing.T) {
	t.Parallel()
	arrived, unblock := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-unblock:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(unblock) })
	const bound = 50 * time.Millisecond
	c := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Concurrent: 1, MaxQueueWait: bound}})
	require.Equal(t, httpclient.Limit{Concurrent: 1, MaxQueueWait: bound}, c.Limit())
	go func() { _, _ = c.Get(context.Background(), srv.URL, nil) }() // holds the one slot
	<-arrived

	start := time.Now()
	_, err := c.Get(context.Background(), srv.URL, nil)
	var qe *httpclient.QueueError
	require.ErrorAs(t, err, &qe)
	require.GreaterOrEqual(t, time.Since(start), bound)
	require.ErrorContains(t, err, "no turn within 50ms")

	long := httpclient.New(httpclient.Options{Limit: httpclient.Limit{Concurrent: 1, MaxQueueWait: time.Hour}})
	go func() { _, _ = long.Get(context.Background(), srv.URL, nil) }()
	<-arrived
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = long.Get(ctx, srv.URL, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.As(err, &qe))
}

// TestMaxQueueWaitNeedsAQueue: without a rate or a concurrency limit
// there is no queue, so there is no bound to report.
func TestMaxQueueWaitNeedsAQueue(t *testing.T) {
	t.Parallel()
	require.Equal(t, httpclient.Limit{}, httpclient.New(httpclient.Options{Limit: httpclient.Limit{MaxQueueWait: time.Minute}}).Limit())
	require.Equal(t, httpclient.Limit{Concurrent: 1}, httpclient.New(httpclient.Options{Limit: httpclient.Limit{Concurrent: 1, MaxQueueWait: -time.Minute}}).Limit())
}

// TestClassifyGivesAStatusTheAPIsMeaning: an API may document its own
// meaning for a status (OpenAlex answers 403 for "rate limit exceeded;
// slow down"); with Request.Classify the client retries such a 403
// instead of reporting it as unauthorized, and a classified answer that
// must not be retried (a used-up daily allowance) is sent once.
func TestClassifyGivesAStatusTheAPIsMeaning(t *testing.T) {
	t.Parallel()
	slowDown := func(r httpclient.Response) (httpclient.Verdict, bool) {
		switch r.Status {
		case http.StatusForbidden:
			return httpclient.Verdict{Code: fault.EInternal, Retry: true, Reason: "rate limit exceeded"}, true
		case http.StatusTooManyRequests:
			return httpclient.Verdict{Code: fault.EInternal, Reason: "daily allowance used up"}, true
		}
		return httpclient.Verdict{}, false
	}
	t.Run("403Retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, httpclient.Options{}, reply{status: 403}, reply{status: 200, body: "{}"})
		_, err := b.client.Do(context.Background(), httpclient.Request{URL: b.srv.URL, Classify: slowDown})
		require.NoError(t, err)
		require.Equal(t, 2, int(b.calls.Load()))
	})
	t.Run("403AlwaysIsNotUnauthorized", func(t *testing.T) {
		t.Parallel()
		b := setup(t, httpclient.Options{MaxAttempts: 2}, reply{status: 403})
		_, err := b.client.Do(context.Background(), httpclient.Request{URL: b.srv.URL, Classify: slowDown})
		require.Equal(t, fault.EInternal, fault.ErrorCode(err))
		require.Contains(t, err.Error(), "rate limit exceeded")
	})
	t.Run("429NotRetried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, httpclient.Options{}, reply{status: 429}, reply{status: 200, body: "{}"})
		_, err := b.client.Do(context.Background(), httpclient.Request{URL: b.srv.URL, Classify: slowDown})
		require.Error(t, err)
		require.Contains(t, err.Error(), "daily allowance used up")
		require.Equal(t, 1, int(b.calls.Load()))
		require.Empty(t, b.slept())
	})
	t.Run("OtherStatusesKeepTheirDefault", func(t *testing.T) {
		t.Parallel()
		b := setup(t, httpclient.Options{}, reply{status: 401})
		_, err := b.client.Do(context.Background(), httpclient.Request{URL: b.srv.URL, Classify: slowDown})
		require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err))
	})
}

// TestDoPostsAForm: a Request with a Form is sent as a POST with a
// form-encoded body (NCBI asks long E-utilities requests to be POSTed),
// its body sent again on a retry, and the form kept out of error texts.
func TestDoPostsAForm(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		mu.Lock()
		calls++
		got = append(got, r.Method+" "+r.Header.Get("Content-Type")+" "+r.PostForm.Get("term")+" "+r.URL.RawQuery)
		n := calls
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	c := httpclient.New(httpclient.Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	long := strings.Repeat("sleep[tiab] OR ", 500) + "memory[tiab]"
	var v struct{ OK bool }
	require.NoError(t, c.DoJSON(context.Background(), httpclient.Request{URL: srv.URL + "/esearch.fcgi", Form: url.Values{"term": {long}, "api_key": {"SECRET"}}}, &v))
	require.True(t, v.OK)
	want := "POST application/x-www-form-urlencoded " + long + " "
	require.Equal(t, []string{want, want}, got)

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	t.Cleanup(bad.Close)
	_, err := c.Do(context.Background(), httpclient.Request{URL: bad.URL, Form: url.Values{"api_key": {"SECRET"}}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "POST ")
	require.NotContains(t, err.Error(), "SECRET")
}
