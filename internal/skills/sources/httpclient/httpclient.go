// Package httpclient is the one polite HTTP client every online source uses,
// so that retries, backoff, rate limiting, identification and response size
// limits are written (and tested) once instead of six times. Scholarly APIs
// ask callers to keep to a published request rate, back off on 429/5xx,
// honour Retry-After and identify themselves with a contact address; doing
// so keeps Quarry in their "polite pool" instead of being throttled or
// blocked.
package httpclient

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"quarry/internal/fault"
	"quarry/internal/skills/sources"
)

// Defaults are chosen for interactive literature search: a few quick retries,
// never a wait longer than a person would tolerate.
const (
	DefaultMaxAttempts  = 4
	DefaultBaseDelay    = 500 * time.Millisecond
	DefaultMaxWait      = 30 * time.Second
	DefaultMaxBodyBytes = 32 << 20
	// UserAgentProduct is the product token sent in User-Agent.
	UserAgentProduct = "Quarry/0.1"
)

// Options configure a Client. The zero value is usable; tests inject Sleep,
// Now and Jitter so retries run instantly and deterministically.
type Options struct {
	// HTTPClient performs the requests; nil means a client without its own
	// timeout, because every request is bounded by its context instead.
	HTTPClient *http.Client
	// Contact is an e-mail address put into User-Agent as
	// "Quarry/0.1 (mailto:CONTACT)", as OpenAlex, Crossref and NCBI ask.
	Contact string
	// MaxAttempts caps the total number of tries of one request (>= 1).
	MaxAttempts int
	// BaseDelay is the first backoff; it doubles on every retry.
	BaseDelay time.Duration
	// MaxWait caps any single wait. A Retry-After longer than MaxWait makes
	// the client give up at once: waiting less than the server asked for
	// would only earn another 429.
	MaxWait time.Duration
	// MaxBodyBytes caps a response body, so a misbehaving server cannot
	// exhaust memory.
	MaxBodyBytes int64
	// Limit is the request rate (and concurrency) the API allows; every
	// attempt, retries included, waits its turn. The zero Limit sends at
	// once, which is what tests want.
	Limit Limit
	// Sleep waits for d or until ctx is done; nil means a real timer. Backoff
	// and rate-limit waits both go through it, so a fake Sleep and Now make
	// a test's clock entirely its own.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now returns the current time, used to read HTTP-date Retry-After values
	// and to schedule requests under Limit.
	Now func() time.Time
	// Jitter randomises a backoff delay so that many clients do not retry in
	// lock-step; nil means "equal jitter": a uniform value in [d/2, d].
	Jitter func(d time.Duration) time.Duration
}

// Limit is how fast one API may be called. Scholarly APIs publish a rate
// (arXiv one request every 3 s, NCBI 3 per second, …) and some a cap on
// requests in flight (Crossref); the searcher sends a strategy's queries all
// at once, so without a limit they would reach one API together and earn
// 429s or a block. The zero Limit means no limit.
type Limit struct {
	// Every is the minimum average interval between two requests; 0 means
	// no rate limit.
	Every time.Duration
	// Burst is how many requests may leave back to back after a quiet
	// spell; below 1 means 1, so requests are evenly spaced.
	Burst int
	// Concurrent caps the requests in flight at once; 0 means no cap.
	Concurrent int
	// MaxQueueWait bounds how long one request (all its attempts
	// together) waits in this queue for its turns; 0 means no bound.
	// Only the caller's context bounds the wait otherwise, and a search
	// job has no deadline, so when many runs queue for a slow API a
	// request would wait as long as the queue is. Past the bound the
	// request fails with a *QueueError, and a turn that would only come
	// later fails at once rather than after waiting the bound out.
	MaxQueueWait time.Duration
}

// Client sends GET requests politely. It is safe for concurrent use, and
// its Limit holds across all callers, so one Client should serve one API.
type Client struct {
	http        *http.Client
	limit       Limit
	limiter     *rate.Limiter // nil without a rate limit
	slots       chan struct{} // nil without a concurrency cap
	userAgent   string
	maxAttempts int
	baseDelay   time.Duration
	maxWait     time.Duration
	maxBody     int64
	sleep       func(ctx context.Context, d time.Duration) error
	now         func() time.Time
	jitter      func(d time.Duration) time.Duration
}

// New returns a Client with defaults filled in.
func New(opts Options) *Client {
	c := &Client{
		http:        opts.HTTPClient,
		userAgent:   UserAgent(opts.Contact),
		maxAttempts: opts.MaxAttempts,
		baseDelay:   opts.BaseDelay,
		maxWait:     opts.MaxWait,
		maxBody:     opts.MaxBodyBytes,
		sleep:       opts.Sleep,
		now:         opts.Now,
		jitter:      opts.Jitter,
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.maxAttempts < 1 {
		c.maxAttempts = DefaultMaxAttempts
	}
	if c.baseDelay <= 0 {
		c.baseDelay = DefaultBaseDelay
	}
	if c.maxWait <= 0 {
		c.maxWait = DefaultMaxWait
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBodyBytes
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.jitter == nil {
		c.jitter = equalJitter
	}
	c.limit = opts.Limit
	if c.limit.Every > 0 {
		c.limit.Burst = max(c.limit.Burst, 1)
		c.limiter = rate.NewLimiter(rate.Every(c.limit.Every), c.limit.Burst)
	} else {
		c.limit.Every, c.limit.Burst = 0, 0
	}
	if c.limit.Concurrent > 0 {
		c.slots = make(chan struct{}, c.limit.Concurrent)
	} else {
		c.limit.Concurrent = 0
	}
	if (c.limiter == nil && c.slots == nil) || c.limit.MaxQueueWait < 0 {
		c.limit.MaxQueueWait = 0 // no queue, or no bound on it
	}
	return c
}

// Limit reports the limit the client enforces, defaults applied, so a
// source's choice can be checked and shown.
func (c *Client) Limit() Limit { return c.limit }

// UserAgent is the User-Agent sent for a contact address; exported so
// sources and tests agree on one spelling.
func UserAgent(contact string) string {
	contact = strings.TrimSpace(contact)
	if contact == "" {
		return UserAgentProduct
	}
	return UserAgentProduct + " (mailto:" + contact + ")"
}

// StatusError is the cause of a failure the server answered with a non-2xx
// status; callers reach it with errors.As to tell, say, 404 from 503.
type StatusError struct {
	Status int
	// Body is the start of the response body, for diagnosis.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("status %d", e.Status)
	}
	return fmt.Sprintf("status %d: %s", e.Status, e.Body)
}

// QueueError is the cause of a request given up because its turn under
// the client's Limit did not come within Limit.MaxQueueWait: too many
// requests were queued for the API, which is not the API failing, so a
// source can say so in its own words (errors.As).
type QueueError struct {
	// MaxQueueWait is the bound that was reached.
	MaxQueueWait time.Duration
	// Limit is the limit the request was queued under.
	Limit Limit
}

// Error implements error.
func (e *QueueError) Error() string {
	return fmt.Sprintf("no turn within %s under this API's rate limit; try again later", e.MaxQueueWait)
}

// Request is one call to an API, for Do: a GET of URL unless Method or
// Form says otherwise.
type Request struct {
	// Method defaults to GET, or POST when Form is set.
	Method string
	URL    string
	Header http.Header
	// Form is sent as an application/x-www-form-urlencoded body, the way
	// NCBI asks long E-utilities requests to be sent.
	Form url.Values
	// Classify gives a non-2xx answer the meaning this API documents for
	// it, where that differs from HTTP's (OpenAlex answers 403 for "slow
	// down" and 429 for a used-up daily allowance); ok false keeps the
	// default (DefaultVerdict).
	Classify func(r Response) (v Verdict, ok bool)
}

// Response is a non-2xx answer as Request.Classify sees it.
type Response struct {
	Status int
	Header http.Header
	// Body is the start of the body (at most the client's MaxBodyBytes).
	Body []byte
}

// Verdict is how the client treats a non-2xx answer.
type Verdict struct {
	// Code is the fault code of the error returned.
	Code string
	// Retry retries the request (after Retry-After when given).
	Retry bool
	// Reason replaces the status text in the error's message, to say
	// what the answer means for this API.
	Reason string
}

// DefaultVerdict is the meaning HTTP gives status: 400 and 422 EInvalid,
// 401 and 403 EUnauthorized, 404 ENotFound, anything else EInternal;
// 429 and 5xx are retried.
func DefaultVerdict(status int) Verdict {
	v := Verdict{Code: fault.EInternal, Reason: http.StatusText(status)}
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		v.Code = fault.EInvalid
	case http.StatusUnauthorized, http.StatusForbidden:
		v.Code = fault.EUnauthorized
	case http.StatusNotFound:
		v.Code = fault.ENotFound
	}
	v.Retry = status == http.StatusTooManyRequests || status >= 500
	return v
}

// Get fetches rawURL and returns its body: Do with a plain GET.
func (c *Client) Get(ctx context.Context, rawURL string, header http.Header) ([]byte, error) {
	return c.Do(ctx, Request{URL: rawURL, Header: header})
}

// Do sends r and returns the body, retrying transient failures (network
// errors, and the answers r.Classify or DefaultVerdict say to retry).
// Every attempt first waits for its turn under the client's Limit.
// Errors carry fault codes (DefaultVerdict, or r.Classify's). Error
// texts never contain the query string or the form, because they may
// hold an API key.
func (c *Client) Do(ctx context.Context, r Request) ([]byte, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
		if r.Form != nil {
			r.Method = http.MethodPost
		}
	}
	where := r.Method + " " + redact(r.URL)
	var lastErr error
	queueLeft := c.limit.MaxQueueWait // what the attempts still may wait for turns, if bounded
	for attempt := 1; ; attempt++ {
		release, err := c.acquire(ctx, where, lastErr, &queueLeft)
		if err != nil {
			return nil, err
		}
		body, retryAfter, retry, err := c.try(ctx, r, where)
		release()
		if err == nil {
			return body, nil
		}
		lastErr = err
		if !retry {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, contextError(ctx, where, lastErr)
		}
		if attempt >= c.maxAttempts {
			return nil, &fault.Error{Code: fault.ErrorCode(err), Message: fmt.Sprintf("%s: giving up after %d attempts", where, attempt), Err: err}
		}
		wait := c.jitter(c.backoff(attempt))
		if retryAfter >= 0 {
			if retryAfter > c.maxWait {
				return nil, &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: server asks to retry after %s, longer than the %s this client waits", where, retryAfter, c.maxWait), Err: err}
			}
			wait = retryAfter
		}
		if deadline, ok := ctx.Deadline(); ok && c.now().Add(wait).After(deadline) {
			return nil, &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: next retry in %s would pass the deadline", where, wait), Err: err}
		}
		if left, ok := sources.CallTimeLeft(ctx); ok && wait > left {
			return nil, &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: next retry in %s would pass the search's timeout", where, wait), Err: err}
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, contextError(ctx, where, lastErr)
		}
	}
}

// DoJSON sends r and decodes the JSON body into v; a body that is not
// the JSON expected is reported as such, not as an empty result.
func (c *Client) DoJSON(ctx context.Context, r Request, v any) error {
	body, err := c.Do(ctx, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: response is not the JSON expected", describe(r)), Err: err}
	}
	return nil
}

// DoXML sends r and decodes the XML body into v.
func (c *Client) DoXML(ctx context.Context, r Request, v any) error {
	body, err := c.Do(ctx, r)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(body, v); err != nil {
		return &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: response is not the XML expected", describe(r)), Err: err}
	}
	return nil
}

// describe is r's method and redacted URL, for messages.
func describe(r Request) string {
	m := r.Method
	switch {
	case m != "":
	case r.Form != nil:
		m = http.MethodPost
	default:
		m = http.MethodGet
	}
	return m + " " + redact(r.URL)
}

// GetJSON fetches rawURL and decodes its JSON body into v: DoJSON with a
// plain GET.
func (c *Client) GetJSON(ctx context.Context, rawURL string, header http.Header, v any) error {
	return c.DoJSON(ctx, Request{URL: rawURL, Header: header}, v)
}

// GetXML fetches rawURL and decodes its XML body into v: DoXML with a
// plain GET.
func (c *Client) GetXML(ctx context.Context, rawURL string, header http.Header, v any) error {
	return c.DoXML(ctx, Request{URL: rawURL, Header: header}, v)
}

// acquire waits for a free slot under Limit.Concurrent, then for the rate
// limiter's next turn, and returns the function that frees the slot. The
// slot is taken first so that a request never spends a turn it cannot use.
// A turn that would come after ctx's deadline, or past what *queueLeft
// (the request's share of Limit.MaxQueueWait) allows, fails at once, and
// a turn not taken is given back, so a request that gives up does not slow
// the others. The wait is our own queue, not the API being slow, so it is
// marked with sources.WaitingForTurn: a searcher's per-call timeout does not
// run during it; ctx's cancellation and deadline and Limit.MaxQueueWait
// bound it.
func (c *Client) acquire(ctx context.Context, where string, lastErr error, queueLeft *time.Duration) (release func(), err error) {
	release = func() {}
	if c.slots == nil && c.limiter == nil {
		return release, nil
	}
	defer sources.WaitingForTurn(ctx)()
	bounded := c.limit.MaxQueueWait > 0
	start := c.now()
	if bounded {
		if *queueLeft <= 0 {
			return nil, c.queueError(where, lastErr)
		}
		defer func() {
			if err == nil {
				*queueLeft -= c.now().Sub(start)
			}
		}()
	}
	if c.slots != nil {
		var expired <-chan time.Time // a slot frees in real time, whatever c.now says
		if bounded {
			t := time.NewTimer(*queueLeft)
			defer t.Stop()
			expired = t.C
		}
		select {
		case c.slots <- struct{}{}:
			release = func() { <-c.slots }
		case <-ctx.Done():
			return nil, contextError(ctx, where, lastErr)
		case <-expired:
			*queueLeft = 0
			return nil, c.queueError(where, lastErr)
		}
	}
	if c.limiter == nil {
		return release, nil
	}
	now := c.now()
	r := c.limiter.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait <= 0 {
		return release, nil
	}
	if deadline, ok := ctx.Deadline(); ok && now.Add(wait).After(deadline) {
		r.CancelAt(now)
		release()
		return nil, &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: this API's rate limit allows the next request in %s, after the deadline", where, wait), Err: lastErr}
	}
	if bounded && now.Add(wait).Sub(start) > *queueLeft {
		r.CancelAt(now)
		release()
		return nil, c.queueError(where, lastErr)
	}
	if err := c.sleep(ctx, wait); err != nil {
		r.CancelAt(c.now())
		release()
		return nil, contextError(ctx, where, lastErr)
	}
	return release, nil
}

// queueError reports a request given up after Limit.MaxQueueWait in the
// queue. It names the bound, not this request's own wait, because a turn
// known to come too late fails before the bound is waited out.
func (c *Client) queueError(where string, lastErr error) error {
	qe := &QueueError{MaxQueueWait: c.limit.MaxQueueWait, Limit: c.limit}
	return &fault.Error{Code: fault.EInternal, Message: where, Err: errors.Join(qe, lastErr)}
}

// try performs one attempt. retryAfter is negative when the server gave none.
func (c *Client) try(ctx context.Context, r Request, where string) (body []byte, retryAfter time.Duration, retry bool, err error) {
	retryAfter = -1
	var payload io.Reader
	if r.Form != nil {
		payload = strings.NewReader(r.Form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, payload)
	if err != nil {
		return nil, retryAfter, false, fault.Errorf(fault.EInvalid, "%s: bad request: %v", where, unwrapURLError(err))
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if r.Form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, retryAfter, false, contextError(ctx, where, unwrapURLError(err))
		}
		return nil, retryAfter, true, &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: network error", where), Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if readErr != nil {
			if ctx.Err() != nil {
				return nil, retryAfter, false, contextError(ctx, where, readErr)
			}
			return nil, retryAfter, true, &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("%s: reading response", where), Err: readErr}
		}
		if int64(len(body)) > c.maxBody {
			return nil, retryAfter, false, fault.Errorf(fault.EInternal, "%s: response larger than %d bytes", where, c.maxBody)
		}
		return body, retryAfter, false, nil
	}
	se := &StatusError{Status: resp.StatusCode, Body: snippet(body)}
	v := DefaultVerdict(resp.StatusCode)
	if r.Classify != nil {
		if own, ok := r.Classify(Response{Status: resp.StatusCode, Header: resp.Header, Body: body}); ok {
			v = own
		}
	}
	if v.Retry {
		retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	}
	return nil, retryAfter, v.Retry, &fault.Error{Code: v.Code, Message: fmt.Sprintf("%s: %s", where, v.Reason), Err: se}
}

// backoff is BaseDelay doubled per failed attempt, capped at MaxWait.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.baseDelay
	for i := 1; i < attempt && d < c.maxWait; i++ {
		d *= 2
	}
	return min(d, c.maxWait)
}

// parseRetryAfter reads delay-seconds or an HTTP-date; -1 means absent or
// unreadable, so the caller falls back to its own backoff.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return -1
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// contextError reports a request ended by ctx. It uses ctx's cause, so a
// searcher's call timeout (a cancellation whose cause is a deadline) reads
// as the deadline it is.
func contextError(ctx context.Context, where string, last error) error {
	cause := context.Cause(ctx)
	msg := fmt.Sprintf("%s: cancelled", where)
	if errors.Is(cause, context.DeadlineExceeded) {
		msg = fmt.Sprintf("%s: deadline exceeded", where)
	}
	return &fault.Error{Code: fault.EInternal, Message: msg, Err: errors.Join(cause, last)}
}

// unwrapURLError drops *url.Error's wrapper, whose text repeats the full URL
// (and with it any api_key in the query string).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact keeps scheme, host and path: enough to say which endpoint failed
// without printing credentials from the query string.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// EndpointOptions are the options every API source takes, as its caller
// writes them; NewEndpoint resolves them into an Endpoint. A source whose
// options are only these declares its Options as this type, and says in
// its doc what Contact and APIKey mean to its API.
type EndpointOptions struct {
	// BaseURL defaults to the source's DefaultBaseURL; tests point it at
	// httptest.
	BaseURL string
	// Contact is the e-mail address that names us: in User-Agent when HTTP
	// is nil, and as a parameter to APIs that ask for one.
	Contact string
	// APIKey is the source's key, for an API that takes one.
	APIKey string
	// HTTP is the polite client; nil builds one with Contact and the
	// source's RateLimit.
	HTTP *Client
}

// Endpoint is what every API source is built from: a validated base URL,
// the trimmed contact e-mail and API key, and the polite client. A source's
// Client holds one rather than copies of its fields.
type Endpoint struct {
	Base, Contact, APIKey string
	HTTP                  *Client
}

// NewEndpoint resolves a source's options: the base URL (or def when
// blank) must be an absolute URL, and a nil HTTP becomes a polite client
// that names the contact and keeps to the limit the source's API
// documents, which limit returns for the trimmed contact and API key (a
// key or a contact address often buys a higher rate). A given HTTP is used
// as it is, limit included.
func NewEndpoint(source, def string, opts EndpointOptions, limit func(contact, apiKey string) Limit) (Endpoint, error) {
	b, err := BaseURL(source, opts.BaseURL, def)
	if err != nil {
		return Endpoint{}, err
	}
	contact, apiKey, hc := strings.TrimSpace(opts.Contact), strings.TrimSpace(opts.APIKey), opts.HTTP
	if hc == nil {
		o := Options{Contact: contact}
		if limit != nil {
			o.Limit = limit(contact, apiKey)
		}
		hc = New(o)
	}
	return Endpoint{Base: b, Contact: contact, APIKey: apiKey, HTTP: hc}, nil
}

// BaseURL returns s (or def when s is blank) without a trailing slash, or
// an EInvalid error naming source when it is not an absolute URL, so a
// misconfigured source fails at construction rather than at first search.
func BaseURL(source, s, def string) (string, error) {
	if strings.TrimSpace(s) == "" {
		s = def
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fault.Errorf(fault.EInvalid, "%s: base URL %q is not an absolute URL", source, s)
	}
	return strings.TrimRight(s, "/"), nil
}
