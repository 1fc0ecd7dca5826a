package handlers

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
)

// TestCSRFTokenExpiresUnused: the session's token stays the same while
// pages are read, is written back at most hourly, and is refused (and
// replaced) once unused for a day.
func TestCSRFTokenExpiresUnused(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	k := newCSRFCheck(newPeople(randomKey(), false), func(echo.Context) bool { return false }, "")
	k.now = func() time.Time { return now }
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		ce, ok := errors.AsType[*csrfError](err)
		require.True(t, ok, "%v", err)
		require.Equal(t, csrfExpired, ce.reason)
		_ = c.NoContent(http.StatusForbidden)
	}
	e.GET("/form", func(c echo.Context) error { return c.String(http.StatusOK, c.Get(csrfContextKey).(string)) }, k.middleware)
	e.POST("/form", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }, k.middleware)

	var cookie *http.Cookie
	send := func(req *http.Request) *httptest.ResponseRecorder {
		if cookie != nil {
			req.AddCookie(cookie)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		for _, ck := range rec.Result().Cookies() {
			cookie = ck
		}
		return rec
	}
	get := func() (string, bool) {
		rec := send(httptest.NewRequest(http.MethodGet, "/form", nil))
		return rec.Body.String(), len(rec.Result().Cookies()) > 0
	}
	post := func(token string) int {
		req := httptest.NewRequest(http.MethodPost, "/form", strings.NewReader(url.Values{csrfField: {token}}.Encode()))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
		rec := send(req)
		return rec.Code
	}

	token, saved := get()
	require.True(t, saved, "a new token is saved in the session")
	now = now.Add(30 * time.Minute)
	again, saved := get()
	require.Equal(t, token, again)
	require.False(t, saved, "a read within the hour does not rewrite the cookie")
	require.Equal(t, http.StatusNoContent, post(token))

	now = now.Add(23 * time.Hour) // 23.5 h after the last write of its use
	require.Equal(t, http.StatusNoContent, post(token), "used within a day")
	_, saved = get()
	require.True(t, saved, "the use is written back after an hour")

	now = now.Add(24*time.Hour + time.Minute)
	require.Equal(t, http.StatusForbidden, post(token), "unused for more than a day")
	fresh, saved := get()
	require.True(t, saved)
	require.NotEqual(t, token, fresh, "an expired token is replaced")
	require.Equal(t, http.StatusForbidden, post(token))
	require.Equal(t, http.StatusNoContent, post(fresh))
}
