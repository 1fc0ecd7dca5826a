package handlers

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"
)

// csrfField is the form field that carries the CSRF token.
const csrfField = "_csrf"

// csrfContextKey is where the check leaves the request's token for the
// page's forms (see people.page).
const csrfContextKey = "csrf"

// Token lifetimes. A token lives in the session; it is replaced once it
// has gone unused (no page read) for csrfTokenMaxAge, so a form left open
// longer is refused as expired, and its last use is written back to the
// session at most every csrfTokenRefresh, so pages polling every few
// seconds do not rewrite the cookie each time.
const (
	csrfTokenMaxAge  = 24 * time.Hour
	csrfTokenRefresh = time.Hour
)

// csrfCheck guards unsafe requests twice: net/http's CrossOriginProtection
// refuses any a browser says (Sec-Fetch-Site) or shows (Origin against
// Host) came from another origin, JSON API calls included; then a form
// must carry the token kept in this browser's session, so a token given to
// another session, or planted in a cookie by a site that can set cookies
// for Quarry's domain, is refused. Safe methods get the session's token
// (minted when there is none or it expired) in the context for their forms.
type csrfCheck struct {
	people *people
	cop    *http.CrossOriginProtection
	// skip exempts requests from the token, not from the origin check.
	skip func(echo.Context) bool
	now  func() time.Time
}

// newCSRFCheck builds the check; publicURL ("" for none), the address
// people use, is trusted as an origin, for a proxy that does not pass on
// the Host browsers sent.
func newCSRFCheck(p *people, skip func(echo.Context) bool, publicURL string) *csrfCheck {
	cop := http.NewCrossOriginProtection()
	if u, err := url.Parse(publicURL); err == nil && u.Scheme != "" && u.Host != "" {
		_ = cop.AddTrustedOrigin(u.Scheme + "://" + u.Host) // the configuration checked its shape
	}
	return &csrfCheck{people: p, cop: cop, skip: skip, now: time.Now}
}

// middleware is the check as echo middleware (see csrfGuard for how its
// refusals are answered).
func (k *csrfCheck) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if err := k.cop.Check(req); err != nil {
			return &csrfError{reason: csrfCrossSite, cause: err}
		}
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
			token, err := k.issue(c)
			if err != nil {
				return err
			}
			c.Set(csrfContextKey, token)
			return next(c)
		}
		if k.skip(c) {
			return next(c)
		}
		if req.Form == nil {
			_ = req.ParseMultipartForm(32 << 20) // what req.FormValue does
		}
		sent := req.Form[csrfField]
		if len(sent) == 0 || sent[0] == "" {
			return &csrfError{reason: csrfMissing, cause: errors.New("missing csrf token in the form")}
		}
		want, ok := k.current(c)
		if !ok || subtle.ConstantTimeCompare([]byte(sent[0]), []byte(want)) != 1 {
			return &csrfError{reason: csrfExpired, cause: errors.New("the form's token is not this session's")}
		}
		c.Set(csrfContextKey, want)
		return next(c)
	}
}

// current is the session's token, if it has one that has not expired.
func (k *csrfCheck) current(c echo.Context) (string, bool) {
	s := k.people.session(c)
	token, _ := s.Values[keyCSRF].(string)
	used, _ := s.Values[keyCSRFUsed].(int64)
	if token == "" || k.now().Sub(time.Unix(used, 0)) > csrfTokenMaxAge {
		return "", false
	}
	return token, true
}

// issue returns the session's token, minting one when it has none or it
// expired, and notes its use; the session is saved only when that changed
// something worth writing.
func (k *csrfCheck) issue(c echo.Context) (string, error) {
	s := k.people.session(c)
	now := k.now()
	token, ok := k.current(c)
	used, _ := s.Values[keyCSRFUsed].(int64)
	switch {
	case !ok:
		b := make([]byte, 32)
		rand.Read(b)
		token = base64.RawURLEncoding.EncodeToString(b)
		s.Values[keyCSRF] = token
	case now.Sub(time.Unix(used, 0)) < csrfTokenRefresh:
		return token, nil
	}
	s.Values[keyCSRFUsed] = now.Unix()
	return token, k.people.save(c, s)
}

// csrfReason is why the CSRF check refused a request.
type csrfReason int

const (
	// csrfExpired: the form's token is not the session's (it expired
	// after a day unused, cookies were cleared, or it was another's).
	csrfExpired csrfReason = iota
	// csrfMissing: the request carried no token at all.
	csrfMissing
	// csrfCrossSite: the browser says another site sent the request.
	csrfCrossSite
)

// csrfError is a request the CSRF check refused, with what happened and
// what to do; the error handler maps it to the unauthorized code (403) and
// shows the refused form's text, so nothing typed is lost.
type csrfError struct {
	reason csrfReason
	cause  error
}

func (e *csrfError) Error() string { return "csrf: " + e.cause.Error() }

// title is the error page's heading.
func (e *csrfError) title() string {
	if e.reason == csrfExpired {
		return "Form expired"
	}
	return "Form not accepted"
}

// message says what happened and what to do, for a person at a form.
func (e *csrfError) message() string {
	switch e.reason {
	case csrfExpired:
		return "This form has expired (the page was open too long, or the browser's cookies were cleared), so it was not saved. " +
			"What you sent is below: copy it, open the form again and submit it there."
	case csrfMissing:
		return "This form arrived without its security token, so it was not saved. Forms must be sent from Quarry's own pages, with cookies allowed. " +
			"What you sent is below: copy it, open the form again and submit it there."
	default:
		return "This form was sent from another site, so it was not accepted. Open Quarry and submit the form from its own page."
	}
}

// retryMessage is message for a form shown again with the person's values
// kept, e.g. "This form had expired (…), so the run was not started. Your
// text is kept below; submit again."
func (e *csrfError) retryMessage(outcome string) string {
	cause := "This form had expired (the page was open too long, or the browser's cookies were cleared)"
	if e.reason == csrfMissing {
		cause = "This form arrived without its security token"
	}
	return cause + ", so " + outcome + ". Your text is kept below; submit again."
}

// apiMessage is message for a script: the API needs JSON.
func (e *csrfError) apiMessage() string {
	if e.reason == csrfCrossSite {
		return "cross-site requests are refused"
	}
	return "send API requests with Content-Type: application/json; any other request needs a form's security token"
}

// csrfGuard runs check (csrfCheck.middleware) and hands on its refusals,
// each a *csrfError. When retry is given, a refused form that came from this
// site (an expired or missing token) is handed to retry instead, with a
// fresh token in the context, so the handler can show the same form again
// with the person's values and the reason.
func csrfGuard(check echo.MiddlewareFunc, retry func(echo.Context, *csrfError) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			passed := false
			err := check(func(c echo.Context) error {
				passed = true
				return next(c)
			})(c)
			if err == nil || passed { // the handler's own error, not the check's
				return err
			}
			ce, ok := errors.AsType[*csrfError](err)
			if !ok || retry == nil || ce.reason == csrfCrossSite {
				return err
			}
			return withFreshToken(check, c, func(c echo.Context) error { return retry(c, ce) })
		}
	}
}

// withFreshToken runs h with a valid token in the context (and its cookie
// set) for a request the check refused: the check treats a GET as safe and
// issues the token without checking, so the request is passed through it
// as one (the origin check passed already). Nothing is accepted on the
// way: h only renders a form.
func withFreshToken(check echo.MiddlewareFunc, c echo.Context, h echo.HandlerFunc) error {
	req := c.Request()
	method := req.Method
	req.Method = http.MethodGet
	defer func() { req.Method = method }()
	return check(func(c echo.Context) error {
		req.Method = method
		return h(c)
	})(c)
}

// csrfRoutes adds routes with, in front of their own middleware, who is
// asking (authenticate), the CSRF check, the route's access rule and the
// audit of what it changes. The check is per route rather than on a
// group, because a group's middleware makes echo route every miss through
// it: an unknown address or method must answer 404 or 405, not a token
// error. Every method takes the route's rule, so no route goes without
// one.
type csrfRoutes struct {
	e     *echo.Echo
	check echo.MiddlewareFunc
	guard echo.MiddlewareFunc
	auth  *authenticator
}

func newCSRFRoutes(e *echo.Echo, check echo.MiddlewareFunc, auth *authenticator) csrfRoutes {
	return csrfRoutes{e: e, check: check, guard: csrfGuard(check, nil), auth: auth}
}

// chain is the middleware of a route with rule r, guard as its CSRF check.
func (r csrfRoutes) chain(guard echo.MiddlewareFunc, ru rule, m []echo.MiddlewareFunc) []echo.MiddlewareFunc {
	return append([]echo.MiddlewareFunc{r.auth.authenticate, guard, r.auth.require(ru), r.auth.auditWrites}, m...)
}

// GET adds a GET route, which the check gives a token, and answers HEAD
// on it the same way (net/http drops a HEAD answer's body), so monitors
// and link checkers get the page's status and a 405's Allow header names
// HEAD. It returns the GET route, for its name.
func (r csrfRoutes) GET(path string, h echo.HandlerFunc, ru rule, m ...echo.MiddlewareFunc) *echo.Route {
	mw := r.chain(r.guard, ru, m)
	r.e.HEAD(path, h, mw...)
	return r.e.GET(path, h, mw...)
}

// Stream adds a GET route that answers as a stream for as long as the
// client listens (server-sent events): a HEAD would wait as long for
// nothing, so it answers 405.
func (r csrfRoutes) Stream(path string, h echo.HandlerFunc, ru rule, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.GET(path, h, r.chain(r.guard, ru, m)...)
}

// POST adds a POST route whose token is checked.
func (r csrfRoutes) POST(path string, h echo.HandlerFunc, ru rule, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.POST(path, h, r.chain(r.guard, ru, m)...)
}

// PUT adds a PUT route whose token is checked (JSON API calls are exempt:
// see csrfSkipper).
func (r csrfRoutes) PUT(path string, h echo.HandlerFunc, ru rule, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.PUT(path, h, r.chain(r.guard, ru, m)...)
}

// POSTOrRetry is POST for a form whose handler can show it again when its
// token failed (see csrfGuard).
func (r csrfRoutes) POSTOrRetry(path string, h echo.HandlerFunc, retry func(echo.Context, *csrfError) error, ru rule, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.POST(path, h, r.chain(csrfGuard(r.check, retry), ru, m)...)
}
