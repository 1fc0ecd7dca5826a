package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"quarry/internal/views"
)

// sessionName is the cookie that carries a browser's display name and the
// runs it knows; it is signed and encrypted with the session key.
const sessionName = "quarry"

// maxRememberedRuns bounds the run list kept in the cookie (4 KB limit).
const maxRememberedRuns = 40

// Session keys.
const (
	keyName = "name"
	keyRuns = "runs"
	// keyCSRF is the session's CSRF token, keyCSRFUsed when (Unix
	// seconds) a page last used it (see csrfCheck).
	keyCSRF     = "csrf"
	keyCSRFUsed = "csrf_used"
)

// people reads and writes the cookie session: who is deciding, and which
// runs this browser started or opened.
type people struct {
	store *sessions.CookieStore
	// secure marks the cookie Secure on every response (see
	// Deps.SecureCookies), not only on requests that arrived over TLS.
	secure bool
}

func newPeople(key []byte, secure bool) *people {
	// The first 32 bytes sign, the next 32 encrypt; a shorter key only signs.
	var cs *sessions.CookieStore
	if len(key) >= 64 {
		cs = sessions.NewCookieStore(key[:32], key[32:64])
	} else {
		cs = sessions.NewCookieStore(key)
	}
	cs.Options = &sessions.Options{Path: "/", MaxAge: 365 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	return &people{store: cs, secure: secure}
}

// session returns the request's session; a cookie that fails to decode (a
// rotated key) yields a fresh session rather than an error page.
func (p *people) session(c echo.Context) *sessions.Session {
	s, _ := p.store.Get(c.Request(), sessionName)
	return s
}

func (p *people) save(c echo.Context, s *sessions.Session) error {
	opts := *p.store.Options
	// Secure only when the browser can send it back: it reached us over
	// TLS, or the operator said a TLS proxy is in front.
	opts.Secure = p.secure || c.IsTLS()
	s.Options = &opts
	return s.Save(c.Request(), c.Response())
}

// name is the display name of the person making the request ("" if
// unknown): a signed-in account's, a share link's guest's, or in open mode
// the name the browser gave.
func (p *people) name(c echo.Context) string {
	if id, ok := c.Get(identityKey).(identity); ok && !id.open {
		return id.name
	}
	return p.typedName(c)
}

// typedName is the name this browser gave on the name form.
func (p *people) typedName(c echo.Context) string {
	n, _ := p.session(c).Values[keyName].(string)
	return n
}

// runs returns the IDs this browser started or opened, most recent first.
func (p *people) runs(c echo.Context) []string {
	ids, _ := p.session(c).Values[keyRuns].([]string)
	return ids
}

// remember puts a run at the front of this browser's list.
func (p *people) remember(c echo.Context, runID string) error {
	s := p.session(c)
	ids, _ := s.Values[keyRuns].([]string)
	if len(ids) > 0 && ids[0] == runID {
		return nil
	}
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == runID })
	ids = append([]string{runID}, ids...)
	if len(ids) > maxRememberedRuns {
		ids = ids[:maxRememberedRuns]
	}
	s.Values[keyRuns] = ids
	return p.save(c, s)
}

// requireName sends people who have not given a name to the name form,
// coming back to where they were going afterwards.
func (p *people) requireName(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p.name(c) != "" {
			return next(c)
		}
		back := c.Request().URL.Path
		if c.Request().Method != http.MethodGet {
			back = strings.TrimSuffix(strings.SplitN(back, "/checkpoints/", 2)[0], "/")
		}
		if isHTMX(c) {
			c.Response().Header().Set("HX-Redirect", "/name?next="+back)
			return c.NoContent(http.StatusNoContent)
		}
		return c.Redirect(http.StatusSeeOther, "/name?next="+back)
	}
}

// page is the per-request data every full page needs.
func (p *people) page(c echo.Context) views.Page {
	token, _ := c.Get(csrfContextKey).(string)
	return views.Page{CSRF: token, Person: p.name(c)}
}

// safeNext keeps redirects on this site: only a local path, else "/".
// Browsers strip tabs and newlines from a URL and read a backslash as a
// slash, so "/<tab>/evil.example" or "/\evil.example" would reach another
// host; next must start with one "/" (not "//" or "/\") and hold no
// control character or backslash, neither as sent nor once its
// %-escapes are decoded (which must decode).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || !cleanPath(next) {
		return "/"
	}
	decoded, err := url.PathUnescape(next)
	if err != nil || strings.HasPrefix(decoded, "//") || !cleanPath(decoded) {
		return "/"
	}
	return next
}

// cleanPath reports whether s holds no backslash and no control character.
func cleanPath(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r == '\\' || unicode.IsControl(r) })
}

// csrfSkipper exempts JSON API calls from the form token. Browsers cannot
// send a cross-site request with Content-Type: application/json without a
// CORS preflight, and Quarry enables no CORS, so such a request can only
// come from a same-origin script or a non-browser client.
func csrfSkipper(c echo.Context) bool {
	req := c.Request()
	if !strings.HasPrefix(req.URL.Path, "/api/") {
		return false
	}
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(req.Header.Get(echo.HeaderContentType), ";", 2)[0]))
	return ct == echo.MIMEApplicationJSON
}

// randomKey makes a throw-away 64-byte session key, for servers built
// without one (tests); sessions then last as long as the process.
func randomKey() []byte {
	return securecookie.GenerateRandomKey(64)
}
