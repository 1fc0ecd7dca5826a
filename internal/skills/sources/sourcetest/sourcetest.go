// Package sourcetest is a conformance suite for online Sources, in the
// spirit of testing/fstest: every source must map a documented answer to
// papers and survive the same server misbehaviour (rate limits, 5xx,
// garbage bodies, hangs) in the same way, so the checks are written once
// and run over every source from one table (TestConformance in package
// sources), a row a source stating only its answers, the papers they make
// and the query it sends. Start and StartFunc build a source against a
// fake API for a package's own tests.
package sourcetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
)

// Bodies maps a URL path suffix (e.g. "/works" or "/esearch.fcgi") to the
// body the fake API answers with; sources that need several endpoints list
// each.
type Bodies map[string]string

// Fixture describes one source's documented responses and what the source
// must make of them, so a source's test states only what is its own.
type Fixture struct {
	// OK holds realistic successful responses to Request.
	OK Bodies
	// Request is the search the checks send; zero means the package's
	// Request.
	Request sources.SourceRequest
	// Want is every paper the source must make of OK: mapped, in order,
	// ranked from 1.
	Want []research.RawPaper
	// Total is how many records OK says match the query in all (the API's
	// own count, e.g. OpenAlex meta.count), which the source must report
	// as sources.Counter's Page.Total; Empty must report 0.
	Total int
	// Sent, when set, checks the requests a search of OK sent, in order:
	// the query as the API documents it.
	Sent func(t *testing.T, sent []*http.Request)
	// Empty holds successful responses with no results.
	Empty Bodies
	// Malformed holds bodies that are not the documented format.
	Malformed Bodies
	// ContentType of every body, e.g. "application/json".
	ContentType string
}

// NewSource builds the source under test against baseURL using hc; the
// helpers below fail the test on its error.
type NewSource func(baseURL string, hc *httpclient.Client) (sources.Source, error)

// build is newSource, failing the test on its error.
func build(t *testing.T, newSource NewSource, baseURL string, hc *httpclient.Client) sources.Source {
	t.Helper()
	src, err := newSource(baseURL, hc)
	require.NoError(t, err)
	return src
}

// Server is a fake API: it answers each request with the first queued
// status (if any), then with the route's body.
type Server struct {
	*httptest.Server
	bodies      Bodies
	contentType string
	mu          sync.Mutex
	queue       []Reply
	requests    []*http.Request
	calls       atomic.Int32
	hang        atomic.Bool
}

// Reply is one scripted non-body answer.
type Reply struct {
	Status     int
	RetryAfter string
}

// NewServer starts a fake API serving bodies.
func NewServer(t *testing.T, bodies Bodies, contentType string) *Server {
	t.Helper()
	s := &Server{bodies: bodies, contentType: contentType}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Queue makes the next requests answer with the given replies, in order.
func (s *Server) Queue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Hang makes every request block until the client gives up.
func (s *Server) Hang() { s.hang.Store(true) }

// Requests returns copies of the requests received so far.
func (s *Server) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	s.mu.Lock()
	s.requests = append(s.requests, r.Clone(context.Background()))
	var rep *Reply
	if len(s.queue) > 0 {
		rep = &s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()
	if s.hang.Load() {
		<-r.Context().Done()
		return
	}
	if rep != nil {
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		w.WriteHeader(rep.Status)
		return
	}
	for suffix, body := range s.bodies {
		if strings.HasSuffix(r.URL.Path, suffix) {
			w.Header().Set("Content-Type", s.contentType)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	http.NotFound(w, r)
}

// Sleeps records the waits of a client built by NewClient.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// All returns the recorded waits.
func (s *Sleeps) All() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// NewClient returns a polite client that does not really sleep, and the
// record of what it would have slept.
func NewClient(contact string) (*httpclient.Client, *Sleeps) {
	sl := &Sleeps{}
	return httpclient.New(httpclient.Options{
		Contact:     contact,
		MaxAttempts: 3,
		BaseDelay:   time.Second,
		Jitter:      func(d time.Duration) time.Duration { return d },
		Sleep: func(ctx context.Context, d time.Duration) error {
			sl.mu.Lock()
			sl.d = append(sl.d, d)
			sl.mu.Unlock()
			return ctx.Err()
		},
	}), sl
}

// Start starts a fake API serving bodies and builds the source under test
// against it with a client that does not really sleep; the Server tells
// what the source sent.
func Start(t *testing.T, newSource NewSource, bodies Bodies, contentType string) (sources.Source, *Server) {
	t.Helper()
	srv := NewServer(t, bodies, contentType)
	hc, _ := NewClient("")
	return build(t, newSource, srv.URL, hc), srv
}

// StartFunc is Start for an API that h scripts, for answers a fixed body
// cannot give: an error status, or pages computed from the request.
func StartFunc(t *testing.T, newSource NewSource, h http.HandlerFunc) sources.Source {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	hc, _ := NewClient("")
	return build(t, newSource, srv.URL, hc)
}

// ReadFile returns a testdata file or fails the test.
func ReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// Request is a typical request the suite sends.
var Request = sources.SourceRequest{Query: "sleep memory consolidation", YearRange: research.YearRange{From: 2015, To: 2023}, MaxResults: 25}

// Conformance runs the shared checks against a source: that it maps OK to
// Want, sending what Sent expects, and survives the same server
// misbehaviour as every other source.
func Conformance(t *testing.T, newSource NewSource, fx Fixture) {
	t.Helper()
	req := fx.Request
	if req.Query == "" {
		req = Request
	}
	run := func(t *testing.T, bodies Bodies, queue ...Reply) ([]research.RawPaper, *Server, *Sleeps, error) {
		t.Helper()
		srv := NewServer(t, bodies, fx.ContentType)
		srv.Queue(queue...)
		hc, sl := NewClient("ada@example.org")
		papers, err := build(t, newSource, srv.URL, hc).Search(context.Background(), req)
		return papers, srv, sl, err
	}
	checkOK := func(t *testing.T, papers []research.RawPaper) {
		t.Helper()
		require.Len(t, papers, len(fx.Want))
		for i, p := range papers {
			require.NotEmpty(t, strings.TrimSpace(p.Title), "paper %d", i)
			require.Equal(t, i+1, p.Rank, "paper %d", i)
		}
		require.Equal(t, fx.Want, papers)
	}
	counted := func(t *testing.T, bodies Bodies) sources.Page {
		t.Helper()
		srv := NewServer(t, bodies, fx.ContentType)
		hc, _ := NewClient("ada@example.org")
		src := build(t, newSource, srv.URL, hc)
		c, ok := src.(sources.Counter)
		require.True(t, ok, "%s does not say how many records match (sources.Counter)", src.Name())
		page, err := c.SearchCounted(context.Background(), req)
		require.NoError(t, err)
		return page
	}
	t.Run("Total", func(t *testing.T) {
		t.Parallel()
		page := counted(t, fx.OK)
		checkOK(t, page.Papers)
		require.Positive(t, fx.Total, "the fixture states the total its OK answer reports")
		require.Equal(t, fx.Total, page.Total, "the total is the API's count, not the records returned")
		empty := counted(t, fx.Empty)
		require.Empty(t, empty.Papers)
		require.Equal(t, 0, empty.Total)
	})
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		papers, srv, _, err := run(t, fx.OK)
		require.NoError(t, err)
		checkOK(t, papers)
		for _, r := range srv.Requests() {
			require.Equal(t, "Quarry/0.1 (mailto:ada@example.org)", r.Header.Get("User-Agent"))
		}
		if fx.Sent != nil {
			fx.Sent(t, srv.Requests())
		}
	})
	t.Run("429WithRetryAfterThenSuccess", func(t *testing.T) {
		t.Parallel()
		papers, _, sl, err := run(t, fx.OK, Reply{Status: http.StatusTooManyRequests, RetryAfter: "3"})
		require.NoError(t, err)
		checkOK(t, papers)
		require.Equal(t, []time.Duration{3 * time.Second}, sl.All())
	})
	t.Run("500ThenSuccess", func(t *testing.T) {
		t.Parallel()
		papers, _, sl, err := run(t, fx.OK, Reply{Status: http.StatusInternalServerError})
		require.NoError(t, err)
		checkOK(t, papers)
		require.Equal(t, []time.Duration{time.Second}, sl.All())
	})
	t.Run("Persistent503", func(t *testing.T) {
		t.Parallel()
		r := Reply{Status: http.StatusServiceUnavailable}
		papers, srv, _, err := run(t, fx.OK, r, r, r, r, r, r)
		require.Error(t, err)
		require.Equal(t, fault.EInternal, fault.ErrorCode(err))
		require.Contains(t, err.Error(), "giving up after 3 attempts")
		require.Empty(t, papers)
		require.Equal(t, int32(3), srv.calls.Load())
	})
	t.Run("Malformed", func(t *testing.T) {
		t.Parallel()
		papers, _, _, err := run(t, fx.Malformed)
		require.Error(t, err)
		require.Regexp(t, `not the (JSON|XML) expected|unexpected response`, err.Error())
		require.Empty(t, papers)
	})
	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		papers, _, _, err := run(t, fx.Empty)
		require.NoError(t, err)
		require.NotNil(t, papers)
		require.Empty(t, papers)
	})
	t.Run("ContextTimeout", func(t *testing.T) {
		t.Parallel()
		src, srv := Start(t, newSource, fx.OK, fx.ContentType)
		srv.Hang()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := src.Search(ctx, req)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
