package searcher

import (
	"context"
	"errors"
	"fmt"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/text"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EventKind says what happened to a source during a search.
type EventKind string

// The events a search reports per source, so the UI can stream progress.
const (
	EventStart EventKind = "start" // the source's first query was sent
	EventDone  EventKind = "done"  // every query of the source finished without error (warnings allowed)
	EventError EventKind = "error" // the source finished with at least one error (or is unknown)
)

// Event is a per-source progress report of a running search.
type Event struct {
	Source string    `json:"source"`
	Kind   EventKind `json:"kind"`
	// Count is the number of papers the source returned (done and error).
	Count int `json:"count,omitempty"`
	// Total and UpTo say how many the source found when the limit cut
	// what it returned (done and error; see Found): 0 when nothing was cut.
	Total int  `json:"total,omitempty"`
	UpTo  bool `json:"up_to,omitempty"`
	// Error is the source's error text (error only).
	Error string `json:"error,omitempty"`
	// Warning is what the source said about papers it returned (its
	// *Warning texts joined), on done and error alike.
	Warning string `json:"warning,omitempty"`
	// Calls counts how the source's requests ended, one per query sent
	// (done and error), so an operator can count requests by outcome; a
	// request the search's cancellation stopped before it was sent is
	// not counted.
	Calls map[CallOutcome]int `json:"calls,omitempty"`
}

// Found is what the source returned against what it found, worded as the
// review and the report word it ("25 shown of 49 found").
func (e Event) Found() research.Found {
	return research.Found{Shown: e.Count, Total: e.Total, UpTo: e.UpTo}
}

// CallOutcome is how one request to a source ended.
type CallOutcome string

// The outcomes of a request to a source.
const (
	CallOK       CallOutcome = "ok"       // the source answered (with papers or none)
	CallWarning  CallOutcome = "warning"  // it answered with papers and a *sources.Warning
	CallError    CallOutcome = "error"    // it failed (or panicked)
	CallTimeout  CallOutcome = "timeout"  // Options.Timeout or the source's Options.SourceDeadline ran out first
	CallCanceled CallOutcome = "canceled" // the search was cancelled while it was in flight
)

// Defaults for Options.
const (
	DefaultSourceTimeout     = 20 * time.Second
	DefaultSourceDeadline    = 30 * time.Second
	DefaultSearchConcurrency = 8
)

// Options tune a Searcher; the zero value uses the defaults.
type Options struct {
	// Timeout bounds each single source call, so one slow API cannot hold
	// the whole search hostage. It does not run while the source waits
	// its turn under its own API's rate limit (see WaitingForTurn): a
	// query queued behind others is not slow. The search's context bounds
	// that wait, and so may the source's client (arXiv's gives up after
	// a few minutes in its queue).
	Timeout time.Duration
	// SourceDeadline bounds all of one source's calls in one search
	// together, from its first call's start, waits for turns included: a
	// hung source behind its own rate limit (arXiv, Crossref: one request
	// at a time) would otherwise hold the search Timeout per query, one
	// query after another. The papers of the queries answered by then are
	// kept; the others are recorded as timed out (those still waiting for
	// their turn as not sent). It counts from the source's first call, not
	// the search's start, so a source whose calls wait for a Concurrency
	// slot behind other sources' is not cut short for it.
	SourceDeadline time.Duration
	// Concurrency bounds the number of source calls in flight, to stay
	// polite to the APIs and the machine.
	Concurrency int
	// OnEvent, if set, receives per-source progress. Calls are serialised,
	// so it need not be safe for concurrent use, and it should return fast.
	OnEvent func(Event)
}

// Searcher is the Searcher that fans a strategy out over Sources:
// every source × every query in parallel, each call with its own timeout,
// and a failing source recorded in the result instead of failing the search
// (a source's warnings recorded beside its papers).
type Searcher struct {
	byName      map[string]sources.Source
	names       []string
	timeout     time.Duration
	deadline    time.Duration
	concurrency int
	onEvent     func(Event)
}

var _ skills.Searcher = (*Searcher)(nil)

// New returns a Searcher over srcs. Names must be unique
// and non-empty, because results are keyed by them.
func New(srcs []sources.Source, opts Options) (*Searcher, error) {
	s := &Searcher{
		byName:      make(map[string]sources.Source, len(srcs)),
		timeout:     opts.Timeout,
		deadline:    opts.SourceDeadline,
		concurrency: opts.Concurrency,
		onEvent:     opts.OnEvent,
	}
	if s.timeout <= 0 {
		s.timeout = DefaultSourceTimeout
	}
	if s.deadline <= 0 {
		s.deadline = DefaultSourceDeadline
	}
	if s.concurrency <= 0 {
		s.concurrency = DefaultSearchConcurrency
	}
	for i, src := range srcs {
		if src == nil {
			return nil, fault.Errorf(fault.EInvalid, "source %d is nil", i)
		}
		name := src.Name()
		if strings.TrimSpace(name) == "" {
			return nil, fault.Errorf(fault.EInvalid, "source %d has no name", i)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fault.Errorf(fault.EInvalid, "source %q is configured twice", name)
		}
		s.byName[name] = src
		s.names = append(s.names, name)
	}
	return s, nil
}

// Names lists the configured sources in configuration order, for
// SearchStrategy.ValidateSources and for offering choices in the UI.
func (s *Searcher) Names() []string {
	return append([]string(nil), s.names...)
}

// Search runs the strategy. It fails only for an invalid strategy or a
// cancelled context (returning what had arrived so far); a source that errs,
// times out or is not configured is recorded in SearchResult.Sources.
// Papers come out grouped by source in strategy order, and within a source
// by query, each keeping the rank its source gave it. Each source receives
// a query's PerSource text for its name, or Text when it has no entry; an
// entry that is present but blank means the renderer found nothing that
// source can search, so that query is skipped for it (recorded as "").
//
// A source's result records each query's own result (QueryResults: the
// records it returned, its error or warning) beside the source's Count,
// which counts a record two of its queries returned once, and its Error
// and Warnings, which name the query of each text when there were
// several.
//
// A result records only the queries that were sent. A call the search's
// cancellation caught before it started, or while its source still waited
// for its first turn in its own client's queue (WaitingForTurn), reached
// no API: its query is recorded as "" with the error "search cancelled
// before it was sent", and a source that was sent none of its queries has
// no queries recorded at all, only the error "search cancelled before any
// query was sent", as a source that was never queried has.
//
// A source's calls share one deadline (Options.SourceDeadline): a call it
// catches in flight is recorded as timed out, one it catches before it was
// sent (queued for a slot or for its turn) as not sent ("" and the
// reason), and the papers of the calls that finished are kept.
func (s *Searcher) Search(ctx context.Context, st research.SearchStrategy) (skills.SearchResult, error) {
	return s.search(ctx, st, nil)
}

var _ skills.Pager = (*Searcher)(nil)

// SearchMore fetches the next page of every query of st that prev, the
// sources' results so far, says has more (research.QueryResult.HasMore),
// from where each stopped (its Next record): "Show more" at the review.
// Only sources with more are asked, and only those queries. The result
// has, per source asked, the page alone: QueryResults one per query, a
// query not asked zero, so research.SourceResult.WithPage adds it to
// prev; its papers are ranked after the records fetched before.
// Cancellation, deadlines and errors are recorded as Search records them.
func (s *Searcher) SearchMore(ctx context.Context, st research.SearchStrategy, prev map[string]research.SourceResult) (skills.SearchResult, error) {
	if prev == nil {
		prev = map[string]research.SourceResult{}
	}
	return s.search(ctx, st, prev)
}

// search is Search, or with prev set SearchMore.
func (s *Searcher) search(ctx context.Context, st research.SearchStrategy, prev map[string]research.SourceResult) (skills.SearchResult, error) {
	more := prev != nil
	if err := st.Validate(); err != nil {
		return skills.SearchResult{}, err
	}
	res := skills.SearchResult{Sources: make(map[string]research.SourceResult, len(st.Sources))}
	outcomes := make([][]callOutcome, len(st.Sources))
	progress := &progress{onEvent: s.onEvent, pending: map[string]*sourceProgress{}}
	// Plan every call before starting any, so goroutines never see the
	// bookkeeping maps change under them.
	type plannedCall struct {
		si, qi int
		name   string
		src    sources.Source
		req    sources.SourceRequest
		clock  *sourceClock
	}
	var calls []plannedCall
	postExcl := make([][][]query.Term, len(st.Sources))
	notSentTerms := make([][][]query.Term, len(st.Sources))
	strippedTerms := make([][][]query.Term, len(st.Sources))
	offsets := make([][]int, len(st.Sources))
	clocks := map[string]*sourceClock{}
	defer func() {
		for _, c := range clocks {
			c.stop()
		}
	}()
	for si, name := range st.Sources {
		if more && !prev[name].HasMore() {
			continue // nothing more to fetch: the source is not asked
		}
		src, ok := s.byName[name]
		if !ok {
			msg := fmt.Sprintf("source %q is not configured", name)
			res.Sources[name] = research.SourceResult{Error: msg}
			progress.emit(Event{Source: name, Kind: EventError, Error: msg})
			continue
		}
		texts := make([]string, len(st.Queries))
		after := make([][]query.Term, len(st.Queries))
		dropped := make([][]query.Term, len(st.Queries))
		stripped := make([][]query.Term, len(st.Queries))
		offsets[si] = make([]int, len(st.Queries))
		left := 0
		clock := newSourceClock(ctx, s.deadline)
		clocks[name] = clock
		for qi, q := range st.Queries {
			text, rendered := q.PerSource[name]
			if !rendered {
				text = q.Text
			}
			texts[qi] = text
			if ast, err := query.Parse(q.Text); err == nil {
				after[qi] = query.Unexcluded(name, ast)
				if !rendered || text == query.RenderAll(ast, []string{name})[name] {
					// As rendered here: an edited per-source text is sent whole.
					dropped[qi] = query.Unsent(name, ast)
					stripped[qi] = query.Stripped(name, ast)
				}
			}
			if more {
				qs := prev[name].QueryResults
				if qi >= len(qs) || !qs[qi].HasMore() {
					texts[qi] = "" // this query's results were all fetched
					continue
				}
				offsets[si][qi] = qs[qi].Next()
			}
			if strings.TrimSpace(text) == "" {
				continue // rendered to nothing this source can search: skip, as the renderer asks
			}
			left++
			req := sources.SourceRequest{Query: text, YearRange: st.YearRange, MaxResults: st.MaxResultsPerSource, Filters: st.Filters, Offset: offsets[si][qi], QuestionWords: st.QuestionWords}
			if f, ok := src.(sources.QueryFolder); ok {
				texts[qi] = f.SentQuery(req)
			}
			calls = append(calls, plannedCall{si: si, qi: qi, name: name, src: src, req: req, clock: clock})
		}
		res.Sources[name] = research.SourceResult{Queries: texts}
		postExcl[si] = after
		notSentTerms[si] = dropped
		strippedTerms[si] = stripped
		outcomes[si] = make([]callOutcome, len(texts))
		progress.pending[name] = &sourceProgress{left: left}
		if left == 0 {
			progress.emit(Event{Source: name, Kind: EventDone})
		}
	}

	sem := make(chan struct{}, s.concurrency)
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-c.clock.ctx.Done():
				outcomes[c.si][c.qi] = unsent(ctx, c.clock, "it")
				progress.finish(c.name, outcomes[c.si][c.qi])
				return
			}
			defer func() { <-sem }()
			if c.clock.ctx.Err() != nil { // cancelled or out of time while queued: do not start
				outcomes[c.si][c.qi] = unsent(ctx, c.clock, "it")
				progress.finish(c.name, outcomes[c.si][c.qi])
				return
			}
			c.clock.start()
			progress.start(c.name)
			o := s.call(ctx, c.clock, c.src, c.req)
			outcomes[c.si][c.qi] = o
			progress.finish(c.name, o)
		}()
	}
	wg.Wait()

	for si, name := range st.Sources {
		if outcomes[si] == nil {
			continue
		}
		sr := res.Sources[name]
		var errs []string
		many := len(outcomes[si]) > 1
		if planned, unsent := plannedUnsent(outcomes[si], sr.Queries); planned > 0 && unsent == planned {
			// Nothing reached the source: no query to report as sent.
			sr.Queries, sr.Error = nil, notSent(ctx, clocks[name], "any query").Error()
			res.Sources[name] = sr
			continue
		}
		// Two queries of one source often return the same record: it is
		// one record of that source, kept once (at its first, best rank)
		// and counted once, so the page's "N found" is what the source has.
		// Same identifier with another title is another work (the chapters
		// of a book share its DOI): it is kept, under a unique ID, for the
		// deduplicator to judge; merging it here would do so silently.
		// Each query's own count is what it returned, before that
		// merging, so the report can say what each query found.
		seen, ids := map[string]bool{}, map[string]bool{}
		sr.QueryResults = make([]research.QueryResult, len(outcomes[si]))
		for qi, o := range outcomes[si] {
			qr := &sr.QueryResults[qi]
			if !o.unsent && len(postExcl[si][qi]) > 0 {
				var w string
				o.papers, w = leaveOut(name, o.papers, postExcl[si][qi])
				if o.err == nil && w != "" {
					o.err = &sources.Warning{Message: w}
				}
			}
			if !o.unsent && len(notSentTerms[si][qi]) > 0 {
				o.err = addWarning(o.err, unsentMessage(name, notSentTerms[si][qi]))
			}
			if !o.unsent && len(strippedTerms[si][qi]) > 0 {
				o.err = addWarning(o.err, strippedMessage(name, strippedTerms[si][qi]))
			}
			qr.Count = len(o.papers)
			switch {
			case more && !o.unsent && strings.TrimSpace(sr.Queries[qi]) != "":
				qr.Fetched, qr.Pages = o.fetched, 1 // a page asked: WithPage adds it
			case o.fetched != qr.Count:
				qr.Fetched = o.fetched // some were left out: the next page starts after all sent
			}
			if o.total > 0 { // TotalUnknown (or a known 0) is recorded as 0
				qr.Total = o.total
			}
			if o.unsent {
				sr.Queries[qi] = ""
			}
			if o.err != nil {
				own, all := &qr.Error, &errs
				if isWarning(o.err) {
					own, all = &qr.Warning, &sr.Warnings
				}
				*own = o.err.Error()
				text := *own
				if many {
					text = fmt.Sprintf("query %d: %s", qi+1, text)
				}
				*all = append(*all, text)
			}
			for i, p := range o.papers {
				p.Source = name
				if p.Rank == 0 {
					p.Rank = i + 1
				}
				p.Rank += offsets[si][qi] // a next page ranks after the records fetched before
				p.ID = research.StableID(p)
				key := sourceRecordKey(p)
				if seen[key] {
					continue
				}
				seen[key] = true
				for k, base := 2, p.ID; ids[p.ID]; k++ {
					p.ID = base + "~" + strconv.Itoa(k)
				}
				ids[p.ID] = true
				res.Papers = append(res.Papers, p)
				sr.Count++
			}
		}
		sr.Error = strings.Join(errs, "; ")
		res.Sources[name] = sr
	}
	if ctx.Err() != nil {
		return res, cancelled(ctx)
	}
	return res, nil
}

// leaveOut drops the papers whose title or abstract uses one of the
// excluded terms the source could not be sent (query.Unexcluded), and
// says what it did, so the report shows the exclusion held though the
// request as sent could not carry it. A term matches whole words, as the
// sources that can exclude match it.
func leaveOut(source string, papers []research.RawPaper, excl []query.Term) ([]research.RawPaper, string) {
	var names []string
	var words [][]string
	for _, t := range excl {
		if w := text.Words(t.Text); len(w) > 0 {
			words = append(words, w)
			names = append(names, strconv.Quote(t.Text))
		}
	}
	if len(words) == 0 {
		return papers, ""
	}
	var kept []research.RawPaper
	for _, p := range papers {
		doc := text.Words(p.Title + " " + p.Abstract)
		if !slices.ContainsFunc(words, func(w []string) bool { return containsRun(doc, w) }) {
			kept = append(kept, p)
		}
	}
	return kept, fmt.Sprintf("%s cannot exclude terms in a query: %d of %d results using %s were left out after retrieval",
		source, len(papers)-len(kept), len(papers), strings.Join(names, ", "))
}

// unsentMessage says which alternatives a source was not sent
// (query.Unsent), so the report shows the query as the source had it.
func unsentMessage(source string, terms []query.Term) string {
	return fmt.Sprintf("%s searches plain words and finds little for a long list of them, so it was sent each concept's main term; not sent: %s",
		source, quotedTerms(terms))
}

// quotedTerms lists terms as the messages quote them: "a", "b".
func quotedTerms(terms []query.Term) string {
	names := make([]string, len(terms))
	for i, t := range terms {
		names[i] = strconv.Quote(t.Text)
	}
	return strings.Join(names, ", ")
}

// strippedMessage says which truncated terms (child*) a source searched as
// their stem (query.Stripped).
func strippedMessage(source string, terms []query.Term) string {
	return fmt.Sprintf("%s has no truncation: %s searched as the word without its wildcard", source, quotedTerms(terms))
}

// addWarning adds msg to a call's outcome: a warning of its own, or one
// more sentence of the warning it has; a failed call keeps its error.
func addWarning(err error, msg string) error {
	if err == nil {
		return &sources.Warning{Message: msg}
	}
	var w *sources.Warning
	if errors.As(err, &w) {
		return &sources.Warning{Message: w.Message + "; " + msg, Err: w.Err}
	}
	return err
}

// containsRun reports whether run occurs in doc as consecutive words.
func containsRun(doc, run []string) bool {
	for i := 0; i+len(run) <= len(doc); i++ {
		if slices.Equal(doc[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

type callOutcome struct {
	papers []research.RawPaper
	// total is how many records the source said match the query
	// (sources.Page.Total; TotalUnknown when it did not say).
	total int
	// fetched is how many records the source sent (at most the limit),
	// before any was left out after retrieval: where a next page starts.
	fetched int
	err     error
	// unsent is set for a call the search's cancellation caught before
	// anything was sent: its query is not recorded as sent.
	unsent bool
	// outcome is how a sent call ended ("" when unsent).
	outcome CallOutcome
}

// plannedUnsent counts a source's planned calls (its queries not rendered
// to nothing, texts being what the plan recorded) and those never sent.
func plannedUnsent(outcomes []callOutcome, texts []string) (planned, unsent int) {
	for qi, o := range outcomes {
		if strings.TrimSpace(texts[qi]) != "" {
			planned++
		}
		if o.unsent {
			unsent++
		}
	}
	return planned, unsent
}

// call runs one source call under its own timeout, which does not run
// while the source waits its turn in its own client's queue (see
// WaitingForTurn). It returns when the timeout fires even if the source
// ignores its context, and turns a panic in a source into that source's
// error rather than the server's crash. A call cancelled before its
// source's first turn came comes back unsent.
func (s *Searcher) call(ctx context.Context, sc *sourceClock, src sources.Source, req sources.SourceRequest) callOutcome {
	cctx, cancel := context.WithCancelCause(sc.ctx)
	defer cancel(nil)
	cctx, clock := sources.StartCall(cctx, s.timeout, func() { cancel(callTimeout{}) })
	defer clock.Stop()
	type reply struct {
		page sources.Page
		err  error
	}
	ch := make(chan reply, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- reply{err: fault.Errorf(fault.EInternal, "source panicked: %v", r)}
			}
		}()
		page, err := sources.SearchPage(cctx, src, req)
		ch <- reply{page: page, err: err}
	}()
	var r reply
	select {
	case r = <-ch:
	case <-cctx.Done():
		r = reply{err: context.Cause(cctx)}
	}
	if r.err != nil {
		var to callTimeout
		switch {
		case ctx.Err() != nil && clock.SentNothing():
			return callOutcome{err: cancelledUnsent(ctx, "it"), unsent: true}
		case ctx.Err() != nil:
			return callOutcome{err: cancelled(ctx), outcome: CallCanceled}
		case errors.As(context.Cause(cctx), &to):
			return callOutcome{err: &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("timed out after %s", s.timeout), Err: r.err},
				outcome: CallTimeout}
		case sc.ctx.Err() != nil && clock.SentNothing():
			return unsent(ctx, sc, "it")
		case sc.ctx.Err() != nil:
			return callOutcome{err: &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("timed out: the source's deadline of %s for all its queries passed", sc.d), Err: r.err},
				outcome: CallTimeout}
		}
	}
	papers := r.page.Papers
	if len(papers) > req.MaxResults {
		papers = papers[:req.MaxResults]
	}
	// A source that returned more than the limit matched at least that
	// many, whether or not it says how many in all: the cut is not silent.
	total := r.page.Total
	if total >= 0 || len(r.page.Papers) > len(papers) {
		total = max(total, len(r.page.Papers))
	}
	o := callOutcome{papers: papers, total: total, fetched: len(papers), err: r.err, outcome: CallOK}
	switch {
	case isWarning(r.err):
		o.outcome = CallWarning
	case r.err != nil:
		o.outcome = CallError
	}
	return o
}

// sourceClock is one source's deadline in one search: its context, which
// the source's calls run under, is cancelled SourceDeadline after the
// first of them starts (or when the search's context is done).
type sourceClock struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	d      time.Duration
	once   sync.Once
	mu     sync.Mutex
	timer  *time.Timer
}

func newSourceClock(ctx context.Context, d time.Duration) *sourceClock {
	sctx, cancel := context.WithCancelCause(ctx)
	return &sourceClock{ctx: sctx, cancel: cancel, d: d}
}

// start starts the deadline at the source's first call; later calls do
// not move it.
func (c *sourceClock) start() {
	c.once.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.timer = time.AfterFunc(c.d, func() { c.cancel(sourceDeadline{}) })
	})
}

// stop releases the clock when the search ends.
func (c *sourceClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.cancel(nil)
}

// expired reports whether the source's deadline (not the search's
// cancellation) ended its calls.
func (c *sourceClock) expired(ctx context.Context) bool {
	return ctx.Err() == nil && c.ctx.Err() != nil
}

// unsent is the outcome of a call that was never sent, because the
// search was cancelled or the source's deadline passed first.
func unsent(ctx context.Context, c *sourceClock, what string) callOutcome {
	return callOutcome{err: notSent(ctx, c, what), unsent: true}
}

// notSent is the error of a call (what: "it") or of a whole source ("any
// query") that was never sent: cancelled, or out of the source's time.
func notSent(ctx context.Context, c *sourceClock, what string) error {
	if c.expired(ctx) {
		return &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("timed out: the source's deadline of %s for all its queries passed before %s was sent", c.d, what),
			Err: context.DeadlineExceeded}
	}
	return cancelledUnsent(ctx, what)
}

// sourceDeadline is the cause of a source's calls cancelled by its
// deadline; like callTimeout it matches context.DeadlineExceeded.
type sourceDeadline struct{}

func (sourceDeadline) Error() string        { return context.DeadlineExceeded.Error() }
func (sourceDeadline) Is(target error) bool { return target == context.DeadlineExceeded }

// isWarning reports whether a source's error is a *Warning: its papers
// stand, and the source did not fail.
func isWarning(err error) bool {
	var w *sources.Warning
	return errors.As(err, &w)
}

// callTimeout is the cause of a source call cancelled by its timeout. It
// reads and matches (errors.Is) as context.DeadlineExceeded, as a
// deadline's would, for sources that look for one.
type callTimeout struct{}

func (callTimeout) Error() string        { return context.DeadlineExceeded.Error() }
func (callTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

func cancelled(ctx context.Context) error {
	return &fault.Error{Code: fault.EInternal, Message: "search cancelled", Err: ctx.Err()}
}

// cancelledUnsent is the error of a call (what: "it") or of a whole
// source ("any query") the search's cancellation caught before anything
// was sent, so nobody reads its query as sent.
func cancelledUnsent(ctx context.Context, what string) error {
	return &fault.Error{Code: fault.EInternal, Message: "search cancelled before " + what + " was sent", Err: ctx.Err()}
}

// progress turns per-call completions into per-source events, serialised.
type progress struct {
	mu      sync.Mutex
	onEvent func(Event)
	pending map[string]*sourceProgress
}

type sourceProgress struct {
	started bool
	left    int
	count   int
	seen    map[string]bool // sourceRecordKey of the records counted
	errs    []string
	warns   []string
	calls   map[CallOutcome]int
	// sent counts the calls that were sent; totals adds up what each
	// said it found (what it returned when it did not say), and cut is
	// set once one returned fewer than it found: as SourceResult.Found.
	sent   int
	totals int
	cut    bool
}

// sourceRecordKey is what makes two records of one source the same record
// (the merge in Search): the same stable ID and title. The live progress
// counts by it too, so "N papers" while searching is the "N found" after.
func sourceRecordKey(p research.RawPaper) string {
	return p.ID + "\x00" + research.NormalizeTitle(p.Title)
}

func (p *progress) emit(e Event) {
	if p.onEvent == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onEvent(e)
}

func (p *progress) start(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.pending[name]
	if sp.started {
		return
	}
	sp.started = true
	if p.onEvent != nil {
		p.onEvent(Event{Source: name, Kind: EventStart})
	}
}

func (p *progress) finish(name string, o callOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.pending[name]
	sp.left--
	if sp.seen == nil {
		sp.seen = map[string]bool{}
	}
	if !o.unsent {
		sp.sent++
		sp.totals += max(o.total, len(o.papers))
		sp.cut = sp.cut || o.total > len(o.papers)
	}
	if o.outcome != "" {
		if sp.calls == nil {
			sp.calls = map[CallOutcome]int{}
		}
		sp.calls[o.outcome]++
	}
	err := o.err
	for _, r := range o.papers {
		r.Source = name
		r.ID = research.StableID(r)
		if k := sourceRecordKey(r); !sp.seen[k] {
			sp.seen[k] = true
			sp.count++
		}
	}
	switch {
	case isWarning(err):
		sp.warns = append(sp.warns, err.Error())
	case err != nil:
		sp.errs = append(sp.errs, err.Error())
	}
	if sp.left > 0 || p.onEvent == nil {
		return
	}
	ev := Event{Source: name, Kind: EventDone, Count: sp.count, Warning: strings.Join(sp.warns, "; "), Calls: sp.calls}
	if sp.cut {
		ev.Total, ev.UpTo = max(sp.totals, sp.count), sp.sent > 1
	}
	if len(sp.errs) > 0 {
		ev.Kind, ev.Error = EventError, strings.Join(sp.errs, "; ")
	}
	p.onEvent(ev)
}
