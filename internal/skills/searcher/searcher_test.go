package searcher_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
)

// fakeSource is a real, tiny Source whose behaviour each test writes.
type fakeSource struct {
	name string
	fn   func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error)
}

func (f fakeSource) Name() string { return f.name }
func (f fakeSource) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	return f.fn(ctx, req)
}

// echoSource returns one paper per call whose title is the query it got.
func echoSource(name string) fakeSource {
	return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		return []research.RawPaper{{Title: req.Query}}, nil
	}}
}

func strategy(sources []string, queries ...research.Query) research.SearchStrategy {
	return research.SearchStrategy{Queries: queries, Sources: sources, MaxResultsPerSource: 10}
}

func q(text string) research.Query { return research.Query{Text: text} }

// recorder collects events; OnEvent calls are serialised by the searcher,
// the mutex only protects reads from the test goroutine.
type recorder struct {
	mu     sync.Mutex
	events []searcher.Event
}

func (r *recorder) on(e searcher.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) forSource(name string) []searcher.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []searcher.Event
	for _, e := range r.events {
		if e.Source == name {
			out = append(out, e)
		}
	}
	return out
}

// calls counts outcomes as a done or error event's Calls does.
func calls(outcomes ...searcher.CallOutcome) map[searcher.CallOutcome]int {
	out := map[searcher.CallOutcome]int{}
	for _, o := range outcomes {
		out[o]++
	}
	return out
}

func newSearcher(t *testing.T, opts searcher.Options, sources ...sources.Source) *searcher.Searcher {
	t.Helper()
	s, err := searcher.New(sources, opts)
	require.NoError(t, err)
	return s
}

func TestSearcherQueriesRanksAndIDs(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]sources.SourceRequest{}
	ranked := fakeSource{name: research.SourceOpenAlex, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		mu.Lock()
		got[req.Query] = req
		mu.Unlock()
		return []research.RawPaper{
			{Title: req.Query + " one", DOI: "https://doi.org/10.1000/" + strings.ReplaceAll(req.Query, " ", "-")},
			{Title: req.Query + " two", Year: 2020, Authors: []string{"Ada Lovelace"}},
		}, nil
	}}
	s := newSearcher(t, searcher.Options{}, ranked, echoSource(research.SourceArxiv))
	st := strategy([]string{research.SourceArxiv, research.SourceOpenAlex},
		research.Query{Text: "sleep memory", PerSource: map[string]string{research.SourceOpenAlex: "sleep AND memory", research.SourceCrossref: "other"}},
		q("dream recall"),
	)
	st.YearRange = research.YearRange{From: 2015, To: 2021}
	st.Filters = research.Filters{ExcludeTerms: []string{"mice"}}

	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)

	require.Equal(t, research.SourceResult{Count: 4, Queries: []string{"sleep AND memory", "dream recall"},
		QueryResults: []research.QueryResult{{Count: 2}, {Count: 2}}}, res.Sources[research.SourceOpenAlex])
	require.Equal(t, research.SourceResult{Count: 2, Queries: []string{"sleep memory", "dream recall"},
		QueryResults: []research.QueryResult{{Count: 1}, {Count: 1}}}, res.Sources[research.SourceArxiv])
	require.Equal(t, sources.SourceRequest{Query: "sleep AND memory", YearRange: st.YearRange, MaxResults: 10, Filters: st.Filters}, got["sleep AND memory"])

	type row struct {
		Source, Title string
		Rank          int
	}
	var rows []row
	for _, p := range res.Papers {
		rows = append(rows, row{p.Source, p.Title, p.Rank})
		require.Equal(t, research.StableID(p), p.ID)
	}
	require.Equal(t, []row{
		{research.SourceArxiv, "sleep memory", 1},
		{research.SourceArxiv, "dream recall", 1},
		{research.SourceOpenAlex, "sleep AND memory one", 1},
		{research.SourceOpenAlex, "sleep AND memory two", 2},
		{research.SourceOpenAlex, "dream recall one", 1},
		{research.SourceOpenAlex, "dream recall two", 2},
	}, rows)
	require.Equal(t, "doi:10.1000/sleep-and-memory", res.Papers[2].ID)
}

func TestSearcherSkipsQueriesRenderedToNothing(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	counting := fakeSource{name: "pubmed", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		calls.Add(1)
		return []research.RawPaper{{Title: req.Query}}, nil
	}}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{OnEvent: rec.on}, counting, echoSource("arxiv"))
	res, err := s.Search(context.Background(), strategy([]string{"pubmed", "arxiv"},
		research.Query{Text: "!!", PerSource: map[string]string{"pubmed": "", "arxiv": ""}},
		research.Query{Text: "ok", PerSource: map[string]string{"arxiv": ""}},
	))
	require.NoError(t, err)
	require.Equal(t, int32(1), calls.Load())
	require.Equal(t, research.SourceResult{Count: 1, Queries: []string{"", "ok"}, QueryResults: []research.QueryResult{{}, {Count: 1}}}, res.Sources["pubmed"])
	require.Equal(t, research.SourceResult{Queries: []string{"", ""}, QueryResults: []research.QueryResult{{}, {}}}, res.Sources["arxiv"])
	require.Equal(t, []searcher.Event{{Source: "arxiv", Kind: searcher.EventDone}}, rec.forSource("arxiv"))
}

func TestSearcherKeepsSourceRankAndCapsResults(t *testing.T) {
	t.Parallel()
	many := fakeSource{name: "local", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		var out []research.RawPaper
		for i := range 5 {
			out = append(out, research.RawPaper{Title: fmt.Sprint("p", i), Rank: 10 + i})
		}
		return out, nil
	}}
	s := newSearcher(t, searcher.Options{}, many)
	st := strategy([]string{"local"}, q("x"))
	st.MaxResultsPerSource = 3
	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, res.Papers, 3)
	require.Equal(t, []int{10, 11, 12}, []int{res.Papers[0].Rank, res.Papers[1].Rank, res.Papers[2].Rank})
	require.Equal(t, 3, res.Sources["local"].Count)
	require.Equal(t, 5, res.Sources["local"].QueryResults[0].Total, "a source returning more than the limit matched at least that many")
	require.Equal(t, "3 shown of 5 found", res.Sources["local"].Found().String())
}

// countingSource is a sources.Counter: it returns req.MaxResults of the
// total records its query matches, and says how many that total is.
type countingSource struct {
	name  string
	total map[string]int // query → how many match
}

func (s countingSource) Name() string { return s.name }

func (s countingSource) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

func (s countingSource) SearchCounted(_ context.Context, req sources.SourceRequest) (sources.Page, error) {
	n := s.total[req.Query]
	var out []research.RawPaper
	for i := range min(n, req.MaxResults) {
		out = append(out, research.RawPaper{Title: fmt.Sprintf("%s %d", req.Query, i), DOI: fmt.Sprintf("10.1/%s.%d", req.Query, i)})
	}
	return sources.Page{Papers: out, Total: n}, nil
}

// TestSearcherRecordsEachQuerysTotal is defect 7 of issue 16 ("local: 25
// found" when the query matched 49): each query's total as its source
// counted it is recorded beside what it returned, and the source's total
// says what was cut: exactly for one query, up to the sum of their totals
// for several. A source that cannot tell records no total.
func TestSearcherRecordsEachQuerysTotal(t *testing.T) {
	t.Parallel()
	local := countingSource{name: "local", total: map[string]int{"sleep": 49, "raft": 34}}
	plain := fakeSource{name: "crossref", fn: func(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
		return []research.RawPaper{{Title: "one", DOI: "10.1/one"}}, nil
	}}
	s := newSearcher(t, searcher.Options{}, local, plain)

	st := strategy([]string{"local", "crossref"}, q("sleep"))
	st.MaxResultsPerSource = 25
	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)
	got := res.Sources["local"]
	require.Equal(t, 25, got.Count)
	require.Equal(t, []research.QueryResult{{Count: 25, Total: 49}}, got.QueryResults)
	require.Equal(t, "25 shown of 49 found", got.Found().String())
	require.Equal(t, []research.QueryResult{{Count: 1}}, res.Sources["crossref"].QueryResults, "a source that cannot tell records no total")
	require.Equal(t, "1 found", res.Sources["crossref"].Found().String())

	rec := &recorder{}
	s = newSearcher(t, searcher.Options{OnEvent: rec.on}, local)
	st = strategy([]string{"local"}, q("sleep"), q("raft"))
	st.MaxResultsPerSource = 25
	res, err = s.Search(context.Background(), st)
	require.NoError(t, err)
	got = res.Sources["local"]
	require.Equal(t, 50, got.Count)
	require.Equal(t, []research.QueryResult{{Count: 25, Total: 49}, {Count: 25, Total: 34}}, got.QueryResults)
	require.Equal(t, "50 shown of up to 83 found", got.Found().String())
	events := rec.forSource("local")
	done := events[len(events)-1]
	require.Equal(t, searcher.EventDone, done.Kind)
	require.Equal(t, got.Found(), done.Found(), "the live progress says what the review will")
}

// TestSearcherRunsSourcesInParallel uses a barrier: each source waits until
// the other has started. Run one after the other, the first would wait for
// ever (until its timeout), so success proves they overlap.
func TestSearcherRunsSourcesInParallel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		concurrency int
		wantErr     bool
	}{
		{"Parallel", 0, false},
		{"SerialCannotPassBarrier", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var arrived sync.WaitGroup
			arrived.Add(2)
			allHere := make(chan struct{})
			go func() { arrived.Wait(); close(allHere) }()
			barrier := func(name string) fakeSource {
				return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
					arrived.Done()
					select {
					case <-allHere:
						return []research.RawPaper{{Title: name}}, nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}}
			}
			timeout := 10 * time.Second
			if tt.wantErr {
				timeout = 50 * time.Millisecond
			}
			s := newSearcher(t, searcher.Options{Timeout: timeout, Concurrency: tt.concurrency}, barrier("a"), barrier("b"))
			res, err := s.Search(context.Background(), strategy([]string{"a", "b"}, q("x")))
			require.NoError(t, err)
			failed := res.Sources["a"].Error != "" || res.Sources["b"].Error != ""
			require.Equal(t, tt.wantErr, failed, "%+v", res.Sources)
		})
	}
}

func TestSearcherBoundsConcurrency(t *testing.T) {
	t.Parallel()
	var inflight, peak atomic.Int32
	slow := func(name string) fakeSource {
		return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond) // only to give calls a chance to overlap
			return []research.RawPaper{{Title: req.Query}}, nil
		}}
	}
	s := newSearcher(t, searcher.Options{Concurrency: 2}, slow("a"), slow("b"), slow("c"))
	res, err := s.Search(context.Background(), strategy([]string{"a", "b", "c"}, q("x"), q("y"), q("z")))
	require.NoError(t, err)
	require.Len(t, res.Papers, 9)
	require.LessOrEqual(t, peak.Load(), int32(2))
}

func TestSearcherRecordsFailuresPerSource(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	sources := []sources.Source{
		echoSource("good"),
		fakeSource{name: "broken", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			return nil, fault.Errorf(fault.EUnauthorized, "bad api key")
		}},
		fakeSource{name: "slow", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		fakeSource{name: "deaf", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			<-release // ignores its context entirely
			return nil, nil
		}},
		fakeSource{name: "panics", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			panic("nil map")
		}},
	}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{Timeout: 50 * time.Millisecond, OnEvent: rec.on}, sources...)
	res, err := s.Search(context.Background(), strategy([]string{"good", "broken", "slow", "deaf", "panics", "nowhere"}, q("x")))
	require.NoError(t, err)

	require.Len(t, res.Papers, 1)
	require.Equal(t, "good", res.Papers[0].Source)
	require.Equal(t, research.SourceResult{Count: 1, Queries: []string{"x"}, QueryResults: []research.QueryResult{{Count: 1}}}, res.Sources["good"])
	require.Equal(t, "unauthorized: bad api key", res.Sources["broken"].Error)
	require.Contains(t, res.Sources["slow"].Error, "timed out after 50ms")
	require.Contains(t, res.Sources["deaf"].Error, "timed out after 50ms")
	require.Contains(t, res.Sources["panics"].Error, "source panicked: nil map")
	require.Equal(t, research.SourceResult{Error: `source "nowhere" is not configured`}, res.Sources["nowhere"])

	require.Equal(t, []searcher.Event{{Source: "good", Kind: searcher.EventStart}, {Source: "good", Kind: searcher.EventDone, Count: 1, Calls: calls("ok")}}, rec.forSource("good"))
	require.Equal(t, []searcher.Event{{Source: "broken", Kind: searcher.EventStart}, {Source: "broken", Kind: searcher.EventError, Error: "unauthorized: bad api key", Calls: calls("error")}}, rec.forSource("broken"))
	// A source that overruns the timeout, whether it notices or not, is a
	// timeout, not an error; a panic is the source's error.
	for name, want := range map[string]map[searcher.CallOutcome]int{"slow": calls("timeout"), "deaf": calls("timeout"), "panics": calls("error")} {
		events := rec.forSource(name)
		require.Equal(t, want, events[len(events)-1].Calls, name)
	}
	require.Equal(t, []searcher.Event{{Source: "nowhere", Kind: searcher.EventError, Error: `source "nowhere" is not configured`}}, rec.forSource("nowhere"))
}

func TestSearcherOneFailingQueryKeepsTheOthers(t *testing.T) {
	t.Parallel()
	flaky := fakeSource{name: "crossref", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		if req.Query == "bad" {
			return nil, errors.New("boom")
		}
		return []research.RawPaper{{Title: req.Query}}, nil
	}}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{OnEvent: rec.on}, flaky)
	res, err := s.Search(context.Background(), strategy([]string{"crossref"}, q("good"), q("bad"), q("also good")))
	require.NoError(t, err)
	require.Equal(t, research.SourceResult{Count: 2, Error: "query 2: boom", Queries: []string{"good", "bad", "also good"},
		QueryResults: []research.QueryResult{{Count: 1}, {Error: "boom"}, {Count: 1}}}, res.Sources["crossref"])
	events := rec.forSource("crossref")
	require.Len(t, events, 2)
	require.Equal(t, searcher.Event{Source: "crossref", Kind: searcher.EventError, Count: 2, Error: "boom", Calls: calls("ok", "error", "ok")}, events[1])
}

// TestSearcherProgressCountsMergedRecords: two queries of one source that
// return the same paper report it once in the live "done" event, as the
// source's "N found" does afterwards, while each query keeps its own count.
func TestSearcherProgressCountsMergedRecords(t *testing.T) {
	t.Parallel()
	src := fakeSource{name: "openalex", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		return []research.RawPaper{{Title: "Shared paper", DOI: "10.1/shared"}, {Title: "Only " + req.Query}}, nil
	}}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{OnEvent: rec.on}, src)
	res, err := s.Search(context.Background(), strategy([]string{"openalex"}, q("one"), q("two")))
	require.NoError(t, err)
	require.Equal(t, 3, res.Sources["openalex"].Count)
	require.Equal(t, []research.QueryResult{{Count: 2}, {Count: 2}}, res.Sources["openalex"].QueryResults)
	require.Equal(t, []searcher.Event{{Source: "openalex", Kind: searcher.EventStart}, {Source: "openalex", Kind: searcher.EventDone, Count: 3, Calls: calls("ok", "ok")}}, rec.forSource("openalex"))
}

func TestSearcherCancellation(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 10)
	blocking := func(name string) fakeSource {
		return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}}
	}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{Timeout: time.Hour, Concurrency: 1, OnEvent: rec.on}, blocking("a"), blocking("b"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := s.Search(ctx, strategy([]string{"a", "b"}, q("x"), q("y")))
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, res.Papers)
	for _, name := range []string{"a", "b"} {
		require.Contains(t, res.Sources[name].Error, "search cancelled", name)
	}
	require.Len(t, started, 0, "no call may start after the cancel")
	// Only the request in flight counts, as canceled; unsent ones do not.
	var inFlight map[searcher.CallOutcome]int
	for _, name := range []string{"a", "b"} {
		events := rec.forSource(name)
		if calls := events[len(events)-1].Calls; calls != nil {
			require.Nil(t, inFlight, "one request was in flight")
			inFlight = calls
		}
	}
	require.Equal(t, calls("canceled"), inFlight)
}

func TestSearcherRejectsInvalidStrategy(t *testing.T) {
	t.Parallel()
	s := newSearcher(t, searcher.Options{}, echoSource("a"))
	_, err := s.Search(context.Background(), research.SearchStrategy{Sources: []string{"a"}, MaxResultsPerSource: 10})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

func TestNewSearcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		sources  []sources.Source
		wantCode string
		want     []string
	}{
		{"OK", []sources.Source{echoSource("b"), echoSource("a")}, "", []string{"b", "a"}},
		{"None", nil, "", nil},
		{"Duplicate", []sources.Source{echoSource("a"), echoSource("a")}, fault.EInvalid, nil},
		{"Unnamed", []sources.Source{echoSource(" ")}, fault.EInvalid, nil},
		{"Nil", []sources.Source{nil}, fault.EInvalid, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := searcher.New(tt.sources, searcher.Options{})
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
			if err == nil {
				require.Equal(t, tt.want, s.Names())
			}
		})
	}
}

func TestSearcherKeepsARecordOncePerSource(t *testing.T) {
	t.Parallel()
	both := []research.RawPaper{{Title: "Raft consensus", DOI: "10.1/raft", Year: 2014}, {Title: "Paxos made simple", Year: 2001}}
	src := fakeSource{name: "local", fn: func(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
		return both, nil
	}}
	s, err := searcher.New([]sources.Source{src}, searcher.Options{})
	require.NoError(t, err)
	res, err := s.Search(context.Background(), strategy([]string{"local"}, q("raft"), q("consensus")))
	require.NoError(t, err)
	require.Len(t, res.Papers, 2, "both queries returned both papers; each is kept once")
	require.Equal(t, 2, res.Sources["local"].Count)
}

// TestSearcherRecordsEachQuerysOwnResult: each query's result is its own
// — the records it returned before the source's queries were merged, and
// its own error or warning — beside the source's Count of merged records.
// The search report prints these per query; before, only the source's
// total was kept, and the report printed it on every query's row.
func TestSearcherRecordsEachQuerysOwnResult(t *testing.T) {
	t.Parallel()
	paper := func(id string) research.RawPaper { return research.RawPaper{Title: "Paper " + id, DOI: "10.1/" + id} }
	src := fakeSource{name: "local", fn: func(_ context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		switch req.Query {
		case "narrow":
			return []research.RawPaper{paper("a")}, nil
		case "broad":
			return []research.RawPaper{paper("a"), paper("b"), paper("c")}, nil
		case "partial":
			return []research.RawPaper{paper("c"), paper("d")}, errors.New("page 2 failed")
		case "altered":
			return []research.RawPaper{paper("e")}, &sources.Warning{Message: "left out: zzz"}
		}
		return nil, errors.New("boom")
	}}
	s := newSearcher(t, searcher.Options{}, src)
	res, err := s.Search(context.Background(), strategy([]string{"local"}, q("narrow"), q("broad"), q("partial"), q("altered"), q("failing")))
	require.NoError(t, err)
	sr := res.Sources["local"]
	require.Equal(t, 5, sr.Count, "a, b, c, d, e: each once although two queries returned a and c")
	require.Equal(t, []research.QueryResult{
		{Count: 1},
		{Count: 3},
		{Count: 2, Error: "page 2 failed"},
		{Count: 1, Warning: "left out: zzz"},
		{Error: "boom"},
	}, sr.QueryResults, "each query's own records, before merging, with its own error or warning")
	require.True(t, sr.HasQueryResults())
	require.Equal(t, "query 3: page 2 failed; query 5: boom", sr.Error, "the source's error still names its queries")
	require.Equal(t, []string{"query 4: left out: zzz"}, sr.Warnings)

	b, err := json.Marshal(sr)
	require.NoError(t, err)
	require.Contains(t, string(b), `"query_results":[{"count":1},{"count":3},{"count":2,"error":"page 2 failed"},{"count":1,"warning":"left out: zzz"},{"count":0,"error":"boom"}]`)
}

// TestSearcherKeepsWorksThatShareADOI: two chapters of one book carry the
// book's DOI. The searcher must not merge them silently; it keeps both,
// under unique IDs, and the deduplicator marks them related.
func TestSearcherKeepsWorksThatShareADOI(t *testing.T) {
	t.Parallel()
	chapters := []research.RawPaper{
		{Title: "Sleep and memory consolidation", DOI: "10.1007/978-3-319-12345-6", Year: 2016, Authors: []string{"Rasch, B."}},
		{Title: "Circadian rhythms in shift workers", DOI: "10.1007/978-3-319-12345-6", Year: 2016, Authors: []string{"Folkard, S."}},
	}
	src := fakeSource{name: "serpapi_scholar", fn: func(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
		return chapters, nil
	}}
	s, err := searcher.New([]sources.Source{src}, searcher.Options{})
	require.NoError(t, err)
	res, err := s.Search(context.Background(), strategy([]string{"serpapi_scholar"}, q("sleep"), q("memory")))
	require.NoError(t, err)
	require.Len(t, res.Papers, 2, "both chapters kept, each once although both queries returned them")
	require.Equal(t, 2, res.Sources["serpapi_scholar"].Count)
	require.Equal(t, "doi:10.1007/978-3-319-12345-6", res.Papers[0].ID)
	require.Equal(t, "doi:10.1007/978-3-319-12345-6~2", res.Papers[1].ID)
	out, stats, err := dedup.New().Dedup(context.Background(), res.Papers)
	require.NoError(t, err)
	require.Len(t, out, 2, "the deduplicator keeps them apart")
	require.Equal(t, 1, stats.Related)
}

// TestSearcherKeepsPapersReturnedWithAnError: a source may return papers
// with an error saying they are partial; the searcher keeps both, so
// neither the papers nor the error is lost.
func TestSearcherKeepsPapersReturnedWithAnError(t *testing.T) {
	t.Parallel()
	src := fakeSource{name: "crossref", fn: func(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
		return []research.RawPaper{{Title: "Sleep spindles", DOI: "10.1/s"}}, errors.New("page 2 failed")
	}}
	s := newSearcher(t, searcher.Options{}, src)
	res, err := s.Search(context.Background(), strategy([]string{"crossref"}, q("sleep")))
	require.NoError(t, err)
	require.Len(t, res.Papers, 1)
	require.Equal(t, 1, res.Sources["crossref"].Count)
	require.Equal(t, "page 2 failed", res.Sources["crossref"].Error)
	require.Empty(t, res.Sources["crossref"].Warnings)
}

// TestSearcherRecordsWarningsApart: papers returned with a *Warning (PubMed
// leaving out terms) are good; the warning is recorded in Warnings, per
// query, and the source is done, not failed. A real error of another
// query still goes to Error.
func TestSearcherRecordsWarningsApart(t *testing.T) {
	t.Parallel()
	src := fakeSource{name: "pubmed", fn: func(_ context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		switch req.Query {
		case "bad":
			return nil, errors.New("boom")
		case "sleep zzz":
			return []research.RawPaper{{Title: "Sleep spindles", PMID: "1"}, {Title: "Naps", PMID: "2"}},
				&sources.Warning{Message: "PubMed did not run the query as written", Err: errors.New("terms not found, left out: zzz")}
		}
		return []research.RawPaper{{Title: req.Query, PMID: "3"}}, nil
	}}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{OnEvent: rec.on}, src)

	st := strategy([]string{"pubmed"}, q("sleep zzz"))
	st.MaxResultsPerSource = 1
	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, res.Papers, 1, "the cap holds for papers that come with a warning")
	require.Equal(t, research.SourceResult{Count: 1, Warnings: []string{"PubMed did not run the query as written: terms not found, left out: zzz"},
		Queries: []string{"sleep zzz"}, QueryResults: []research.QueryResult{{Count: 1, Total: 2, Warning: "PubMed did not run the query as written: terms not found, left out: zzz"}}},
		res.Sources["pubmed"], "the source returned 2 of which the cap kept 1: 1 shown of 2 found")
	require.Equal(t, searcher.Event{Source: "pubmed", Kind: searcher.EventDone, Count: 1, Total: 2,
		Warning: "PubMed did not run the query as written: terms not found, left out: zzz", Calls: calls("warning")}, rec.forSource("pubmed")[1])

	rec = &recorder{}
	s = newSearcher(t, searcher.Options{OnEvent: rec.on}, src)
	res, err = s.Search(context.Background(), strategy([]string{"pubmed"}, q("sleep zzz"), q("bad"), q("ok")))
	require.NoError(t, err)
	sr := res.Sources["pubmed"]
	require.Equal(t, 3, sr.Count)
	require.Equal(t, "query 2: boom", sr.Error)
	require.Equal(t, []string{"query 1: PubMed did not run the query as written: terms not found, left out: zzz"}, sr.Warnings)
	events := rec.forSource("pubmed")
	require.Equal(t, searcher.EventError, events[len(events)-1].Kind)
	require.Equal(t, "boom", events[len(events)-1].Error)
}

// TestSearcherTimeoutSkipsWaitsForTurn: the per-call timeout does not run
// while a source waits its turn under its own rate limit (our queue, not a
// slow API); it still runs before and after, and still ends a call that is
// slow outside the wait.
func TestSearcherTimeoutSkipsWaitsForTurn(t *testing.T) {
	t.Parallel()
	const timeout = 60 * time.Millisecond
	queued := func(name string, wait, work time.Duration) fakeSource {
		return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			turn := sources.WaitingForTurn(ctx)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				turn()
				return nil, ctx.Err()
			}
			turn()
			turn() // a second call does nothing
			left, ok := sources.CallTimeLeft(ctx)
			if !ok || left <= timeout/2 {
				return nil, fmt.Errorf("time left after the wait: %s, %v", left, ok)
			}
			select {
			case <-time.After(work):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return []research.RawPaper{{Title: name}}, nil
		}}
	}
	s := newSearcher(t, searcher.Options{Timeout: timeout},
		queued("queued", 4*timeout, time.Millisecond), queued("slow", time.Millisecond, 4*timeout))
	res, err := s.Search(context.Background(), strategy([]string{"queued", "slow"}, q("x")))
	require.NoError(t, err)
	require.Equal(t, research.SourceResult{Count: 1, Queries: []string{"x"}, QueryResults: []research.QueryResult{{Count: 1}}}, res.Sources["queued"],
		"a long wait for a turn is not a timeout")
	require.Contains(t, res.Sources["slow"].Error, "timed out after 60ms")

	left, ok := sources.CallTimeLeft(context.Background())
	require.False(t, ok, "outside a searcher call")
	require.Zero(t, left)
	sources.WaitingForTurn(context.Background())() // outside a call: does nothing
}

// TestSearcherCancelStopsAWaitForTurn: the wait for a turn is bounded by
// the search's context, so cancelling the search ends it at once.
func TestSearcherCancelStopsAWaitForTurn(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{})
	src := fakeSource{name: "arxiv", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		defer sources.WaitingForTurn(ctx)()
		close(waiting)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := newSearcher(t, searcher.Options{Timeout: time.Hour}, src)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-waiting; cancel() }()
	res, err := s.Search(ctx, strategy([]string{"arxiv"}, q("x")))
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, res.Sources["arxiv"].Error, "search cancelled")
}

// TestSearcherCancelRecordsOnlyWhatWasSent: after a cancel, a query is
// recorded as sent only if its call started. One call at a time, so the
// cancel catches three of the four before they start; those are recorded
// as not sent ("" and the reason), and a source none of whose queries
// started has no queries recorded at all.
func TestSearcherCancelRecordsOnlyWhatWasSent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	started := map[string]string{} // source → the query it was sent
	ready := make(chan struct{}, 10)
	blocking := func(name string) fakeSource {
		return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			mu.Lock()
			started[name] = req.Query
			mu.Unlock()
			ready <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}}
	}
	s := newSearcher(t, searcher.Options{Timeout: time.Hour, Concurrency: 1}, blocking("a"), blocking("b"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-ready; cancel() }()
	res, err := s.Search(ctx, strategy([]string{"a", "b"}, q("x"), q("y")))
	require.ErrorIs(t, err, context.Canceled)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, started, 1, "one call started")
	for _, name := range []string{"a", "b"} {
		sent, ok := started[name]
		if !ok {
			require.Equal(t, research.SourceResult{Error: "internal: search cancelled before any query was sent: context canceled"}, res.Sources[name], name)
			continue
		}
		want := research.SourceResult{Queries: []string{"x", ""},
			Error: "query 1: internal: search cancelled: context canceled; query 2: internal: search cancelled before it was sent: context canceled",
			QueryResults: []research.QueryResult{{Error: "internal: search cancelled: context canceled"},
				{Error: "internal: search cancelled before it was sent: context canceled"}}}
		if sent == "y" {
			want = research.SourceResult{Queries: []string{"", "y"},
				Error: "query 1: internal: search cancelled before it was sent: context canceled; query 2: internal: search cancelled: context canceled",
				QueryResults: []research.QueryResult{{Error: "internal: search cancelled before it was sent: context canceled"},
					{Error: "internal: search cancelled: context canceled"}}}
		}
		require.Equal(t, want, res.Sources[name], name)
	}
}

// TestSearcherCancelRecordsQueuedCallsAsNotSent: a call that started but
// whose source still waited for its first turn in its own client's queue
// (WaitingForTurn) sent nothing, so a cancel records it as not sent; a
// call that had its turn may have sent its request, so it is recorded as
// sent.
func TestSearcherCancelRecordsQueuedCallsAsNotSent(t *testing.T) {
	t.Parallel()
	var inPlace sync.WaitGroup
	inPlace.Add(4)
	src := func(name string) fakeSource {
		return fakeSource{name: name, fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
			turn := sources.WaitingForTurn(ctx)
			if req.Query == "turned" {
				turn() // its turn came: the request leaves
			}
			inPlace.Done()
			<-ctx.Done()
			turn() // abandoned, for the queued ones
			return nil, ctx.Err()
		}}
	}
	s := newSearcher(t, searcher.Options{Timeout: time.Hour}, src("one"), src("two"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { inPlace.Wait(); cancel() }()
	st := strategy([]string{"one", "two"}, q("turned"), q("queued"))
	st.Queries[0].PerSource = map[string]string{"two": "queued"}
	res, err := s.Search(ctx, st)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, research.SourceResult{Queries: []string{"turned", ""},
		Error: "query 1: internal: search cancelled: context canceled; query 2: internal: search cancelled before it was sent: context canceled",
		QueryResults: []research.QueryResult{{Error: "internal: search cancelled: context canceled"},
			{Error: "internal: search cancelled before it was sent: context canceled"}}}, res.Sources["one"])
	require.Equal(t, research.SourceResult{Error: "internal: search cancelled before any query was sent: context canceled"}, res.Sources["two"])
}

// TestSearcherSourceDeadline: a hung source that serves one request at a
// time (as arXiv's and Crossref's clients do) holds the search for its
// one deadline, not a per-call timeout per query one after another: the
// paper of the query it answered is kept, the query in flight when the
// deadline passed is recorded as timed out, and the one still waiting
// for its turn as not sent. Before SourceDeadline the search took three
// per-call timeouts (1.2 s here).
func TestSearcherSourceDeadline(t *testing.T) {
	t.Parallel()
	const timeout, deadline = 400 * time.Millisecond, 600 * time.Millisecond
	order := []string{"fast", "hung 1", "hung 2", "hung 3"}
	turns := make([]chan struct{}, len(order)+1) // turns[i] closes when query i may go
	for i := range turns {
		turns[i] = make(chan struct{})
	}
	close(turns[0])
	hung := fakeSource{name: "arxiv", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		i := slices.Index(order, req.Query)
		defer close(turns[i+1]) // the next query's turn comes when this one ends
		turn := sources.WaitingForTurn(ctx)
		select {
		case <-turns[i]:
		case <-ctx.Done():
		}
		turn()
		// The previous query ends at the deadline, so its turn and the
		// deadline come together: a client sends nothing once its
		// context is done (select alone would pick either at random).
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if req.Query == "fast" {
			return []research.RawPaper{{Title: "answered", DOI: "10.1/fast"}}, nil
		}
		<-ctx.Done() // hangs, honouring its context
		return nil, ctx.Err()
	}}
	rec := &recorder{}
	s := newSearcher(t, searcher.Options{Timeout: timeout, SourceDeadline: deadline, OnEvent: rec.on}, hung, echoSource("openalex"))
	qs := make([]research.Query, len(order))
	for i, text := range order {
		qs[i] = q(text)
	}
	began := time.Now()
	res, err := s.Search(context.Background(), strategy([]string{"arxiv", "openalex"}, qs...))
	took := time.Since(began)
	require.NoError(t, err)
	require.Less(t, took, timeout+deadline/2, "the search ends at the source's deadline")
	require.GreaterOrEqual(t, took, deadline)

	got := res.Sources["arxiv"]
	require.Equal(t, 1, got.Count, "the answered query's paper is kept")
	require.Equal(t, []string{"fast", "hung 1", "hung 2", ""}, got.Queries, "the query never sent is not recorded as sent")
	require.Equal(t, research.QueryResult{Count: 1}, got.QueryResults[0])
	require.Contains(t, got.QueryResults[1].Error, "timed out after 400ms")
	require.Contains(t, got.QueryResults[2].Error, "timed out: the source's deadline of 600ms for all its queries passed")
	require.Contains(t, got.QueryResults[3].Error, "timed out: the source's deadline of 600ms for all its queries passed before it was sent")
	require.Contains(t, got.Error, "query 3: internal: timed out: the source's deadline")
	require.Equal(t, 4, res.Sources["openalex"].Count, "another source is not cut short")
	var titles []string
	for _, p := range res.Papers {
		if p.Source == "arxiv" {
			titles = append(titles, p.Title)
		}
	}
	require.Equal(t, []string{"answered"}, titles)
	events := rec.forSource("arxiv")
	last := events[len(events)-1]
	require.Equal(t, searcher.EventError, last.Kind)
	require.Equal(t, 1, last.Count)
	require.Equal(t, calls(searcher.CallOK, searcher.CallTimeout, searcher.CallTimeout), last.Calls)
}

// TestSearcherSourceDeadlineBeforeAnyQuery: a source whose calls all
// still wait for their turn when its deadline passes (its client's queue
// held by others) was sent nothing, and says it timed out, not that the
// search was cancelled.
func TestSearcherSourceDeadlineBeforeAnyQuery(t *testing.T) {
	t.Parallel()
	queued := fakeSource{name: "crossref", fn: func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		defer sources.WaitingForTurn(ctx)()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := newSearcher(t, searcher.Options{Timeout: time.Hour, SourceDeadline: 50 * time.Millisecond}, queued)
	res, err := s.Search(context.Background(), strategy([]string{"crossref"}, q("x"), q("y")))
	require.NoError(t, err)
	require.Equal(t, research.SourceResult{Error: "internal: timed out: the source's deadline of 50ms for all its queries passed before any query was sent: context deadline exceeded"},
		res.Sources["crossref"])
}
