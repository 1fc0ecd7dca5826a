// Package webhook makes a workflow's webhook calls: an HTTP request to a
// host on the configured allowlist, whose answer must match what the
// stage expects. It is the only place a workflow reaches the network, so
// it re-checks the allowlist on the URL as sent (templates filled), follows
// no redirect, caps the answer's size and keeps secret values out of every
// error it returns.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
)

// Defaults for a Caller's zero fields.
const (
	DefaultTimeout = 30 * time.Second
	// DefaultMaxAnswer bounds the answer read: a webhook confirms or
	// returns a small JSON document, never a download.
	DefaultMaxAnswer = 1 << 20
)

// Caller sends webhook calls. The zero value refuses every host.
type Caller struct {
	// Hosts is the allowlist (QUARRY_WEBHOOK_HOSTS): see def.HostAllowed.
	Hosts []string
	// Secrets are the values `{{ secrets.NAME }}` fills in; any of them
	// found in an error message is replaced by its name.
	Secrets map[string]string
	// Client sends the requests; nil means a client with DefaultTimeout.
	// Its redirect policy is replaced: no redirect is followed, since the
	// allowlist names where a call may go, not where it may be sent on.
	Client *http.Client
	// MaxAnswer caps the answer's body in bytes (0: DefaultMaxAnswer).
	MaxAnswer int64
}

// Call is one request, its templates already filled.
type Call struct {
	Method  string // default POST
	URL     string
	Headers map[string]string
	// Body is sent as JSON when not nil.
	Body any
}

// Expect is what the answer must be: one of Status (empty: any 2xx) and,
// when JSON is not nil, a JSON body containing it (see Contains).
type Expect struct {
	Status []int
	JSON   any
}

// Answer is what came back: the status and the body decoded as JSON (nil
// when it is empty or not JSON).
type Answer struct {
	Status int
	JSON   any
}

// Do sends call and checks its answer against want. Its errors carry
// fault codes: EInvalid for a malformed call, EUnauthorized for a host off
// the allowlist, EUnavailable for what may pass (a network error, a
// timeout, a 5xx or 429), EInvalid for an answer that does not match, and
// ETooLarge for an oversized answer. A stage's on_error decides whether to
// try again.
func (c *Caller) Do(ctx context.Context, call Call, want Expect) (Answer, error) {
	a, err := c.do(ctx, call, want)
	return a, c.redact(err)
}

func (c *Caller) do(ctx context.Context, call Call, want Expect) (Answer, error) {
	u, err := url.Parse(call.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Answer{}, fault.Errorf(fault.EInvalid, "webhook URL %q is not an absolute http(s) URL", call.URL)
	}
	if !def.HostAllowed(c.Hosts, u) {
		return Answer{}, fault.Errorf(fault.EUnauthorized, "webhook host %q is not in the allowlist (QUARRY_WEBHOOK_HOSTS)", u.Host)
	}
	method := strings.ToUpper(call.Method)
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if call.Body != nil {
		b, err := json.Marshal(call.Body)
		if err != nil {
			return Answer{}, fault.Errorf(fault.EInvalid, "webhook body is not JSON: %v", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return Answer{}, fault.Errorf(fault.EInvalid, "webhook request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range call.Headers {
		req.Header.Set(k, v)
	}
	res, err := c.client().Do(req)
	if err != nil {
		return Answer{}, fault.Errorf(fault.EUnavailable, "webhook %s %s: %v", method, u.Redacted(), err)
	}
	defer res.Body.Close()
	limit := c.MaxAnswer
	if limit <= 0 {
		limit = DefaultMaxAnswer
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return Answer{}, fault.Errorf(fault.EUnavailable, "webhook %s %s: reading the answer: %v", method, u.Redacted(), err)
	}
	if int64(len(raw)) > limit {
		return Answer{}, fault.Errorf(fault.ETooLarge, "webhook %s %s: the answer is over %d bytes", method, u.Redacted(), limit)
	}
	a := Answer{Status: res.StatusCode}
	if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &a.JSON) != nil {
		a.JSON = nil
	}
	if !statusOK(res.StatusCode, want.Status) {
		code := fault.EInvalid
		if res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests {
			code = fault.EUnavailable
		}
		return a, fault.Errorf(code, "webhook %s %s answered %d, want %s", method, u.Redacted(), res.StatusCode, wantStatus(want.Status))
	}
	if want.JSON != nil && !Contains(a.JSON, want.JSON) {
		return a, fault.Errorf(fault.EInvalid, "webhook %s %s: the answer's JSON does not contain what the stage expects", method, u.Redacted())
	}
	return a, nil
}

func (c *Caller) client() *http.Client {
	cl := http.Client{Timeout: DefaultTimeout}
	if c.Client != nil {
		cl = *c.Client
	}
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cl
}

// redact replaces every secret value in err's message by its name. The
// fault code is kept.
func (c *Caller) redact(err error) error {
	if err == nil || len(c.Secrets) == 0 {
		return err
	}
	msg := err.Error()
	for name, v := range c.Secrets {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, "[secret "+name+"]")
			msg = strings.ReplaceAll(msg, url.QueryEscape(v), "[secret "+name+"]")
		}
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return &fault.Error{Code: fe.Code, Message: msg}
	}
	return errors.New(msg)
}

func statusOK(got int, want []int) bool {
	if len(want) == 0 {
		return got >= 200 && got < 300
	}
	for _, w := range want {
		if got == w {
			return true
		}
	}
	return false
}

func wantStatus(want []int) string {
	if len(want) == 0 {
		return "2xx"
	}
	return strings.Trim(fmt.Sprint(want), "[]")
}

// Stage makes a workflow webhook stage's call (flow.Webhook): main passes
// it to flow.CompileWith.
func (c *Caller) Stage(ctx context.Context, call flow.WebhookCall) (flow.WebhookAnswer, error) {
	a, err := c.Do(ctx, Call{Method: call.Method, URL: call.URL, Headers: call.Headers, Body: call.Body},
		Expect{Status: call.Status, JSON: call.JSON})
	return flow.WebhookAnswer{Status: a.Status, JSON: a.JSON}, err
}
