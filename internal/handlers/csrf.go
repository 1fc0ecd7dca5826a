package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// csrfField is the form field that carries the CSRF token.
const csrfField = "_csrf"

// csrfReason is why the CSRF check refused a request.
type csrfReason int

const (
	// csrfExpired: the form's token no longer matches the browser's
	// cookie (it expired after a day, or cookies were cleared).
	csrfExpired csrfReason = iota
	// csrfMissing: the request carried no token at all.
	csrfMissing
	// csrfCrossSite: the browser says another site sent the request.
	csrfCrossSite
)

// csrfError is a request the CSRF check refused. It replaces echo's terse
// errors ("invalid csrf token", "missing csrf token in the form
// parameter"), which read as a bug, with what happened and what to do; the
// error handler maps it to the unauthorized code (403) and shows the
// refused form's text, so nothing typed is lost. It does not unwrap to
// echo's error, whose own status would otherwise win.
type csrfError struct {
	reason csrfReason
	cause  error
}

func (e *csrfError) Error() string { return "csrf: " + e.cause.Error() }

// newCSRFError classifies an error of echo's CSRF middleware.
func newCSRFError(err error) *csrfError {
	he, _ := errors.AsType[*echo.HTTPError](err)
	switch {
	case errors.Is(err, middleware.ErrCSRFInvalid):
		return &csrfError{reason: csrfExpired, cause: err}
	case he != nil && he.Code == http.StatusBadRequest:
		return &csrfError{reason: csrfMissing, cause: err}
	default:
		return &csrfError{reason: csrfCrossSite, cause: err}
	}
}

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

// csrfGuard runs check (echo's CSRF middleware) and turns its refusals into
// a *csrfError. When retry is given, a refused form that came from this
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
			ce := newCSRFError(err)
			if retry == nil || ce.reason == csrfCrossSite {
				return ce
			}
			return withFreshToken(check, c, func(c echo.Context) error { return retry(c, ce) })
		}
	}
}

// withFreshToken runs h with a valid token in the context (and its cookie
// set) for a request the check refused: the check treats a GET as safe and
// issues the token without checking, so the request is passed through it
// as one. Nothing is accepted on the way: h only renders a form.
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

// csrfRoutes adds routes with the CSRF check in front of their own
// middleware. The check is per route rather than on a group, because a
// group's middleware makes echo route every miss through it: an unknown
// address or method must answer 404 or 405, not a token error.
type csrfRoutes struct {
	e     *echo.Echo
	check echo.MiddlewareFunc
	guard echo.MiddlewareFunc
}

func newCSRFRoutes(e *echo.Echo, check echo.MiddlewareFunc) csrfRoutes {
	return csrfRoutes{e: e, check: check, guard: csrfGuard(check, nil)}
}

// GET adds a GET route, which the check gives a token, and answers HEAD
// on it the same way (net/http drops a HEAD answer's body), so monitors
// and link checkers get the page's status and a 405's Allow header names
// HEAD. It returns the GET route, for its name.
func (r csrfRoutes) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	mw := append([]echo.MiddlewareFunc{r.guard}, m...)
	r.e.HEAD(path, h, mw...)
	return r.e.GET(path, h, mw...)
}

// Stream adds a GET route that answers as a stream for as long as the
// client listens (server-sent events): a HEAD would wait as long for
// nothing, so it answers 405.
func (r csrfRoutes) Stream(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.GET(path, h, append([]echo.MiddlewareFunc{r.guard}, m...)...)
}

// POST adds a POST route whose token is checked.
func (r csrfRoutes) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.POST(path, h, append([]echo.MiddlewareFunc{r.guard}, m...)...)
}

// POSTOrRetry is POST for a form whose handler can show it again when its
// token failed (see csrfGuard).
func (r csrfRoutes) POSTOrRetry(path string, h echo.HandlerFunc, retry func(echo.Context, *csrfError) error, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.POST(path, h, append([]echo.MiddlewareFunc{csrfGuard(r.check, retry)}, m...)...)
}
