package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/handlers"
)

// TestCSRFRefusesCrossOrigin: a browser request from another origin is
// refused with 403 although it carries a valid token, whether the browser
// says so in Sec-Fetch-Site or only its Origin differs, and a JSON API
// call too; the same origin passes.
func TestCSRFRefusesCrossOrigin(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	c := newClient(t)
	_, doc := w.get(t, c, "/name")
	token := csrf(doc)
	require.NotEmpty(t, token)
	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	send := func(t *testing.T, path, contentType, body string, header http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, w.srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := noFollow.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	form := url.Values{"_csrf": {token}, "name": {"Mallory"}, "next": {"/"}}.Encode()
	for _, tt := range []struct {
		name   string
		header http.Header
	}{
		{"SecFetchSite", http.Header{"Sec-Fetch-Site": {"cross-site"}}},
		{"SameSiteOtherOrigin", http.Header{"Sec-Fetch-Site": {"same-site"}, "Origin": {"http://sub.evil.example"}}},
		{"OriginOnly", http.Header{"Origin": {"http://evil.example"}}},
	} {
		t.Run("Form"+tt.name, func(t *testing.T) {
			res := send(t, "/name", "application/x-www-form-urlencoded", form, tt.header)
			require.Equal(t, http.StatusForbidden, res.StatusCode)
		})
	}
	t.Run("JSONAPI", func(t *testing.T) {
		res := send(t, "/api/runs", "application/json", `{"question":"sleep"}`, http.Header{"Origin": {"http://evil.example"}})
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		var eb handlers.ErrorBody
		require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
		require.Equal(t, handlers.ErrorJSON{Code: fault.EUnauthorized, Message: "cross-site requests are refused"}, eb.Error)
	})
	t.Run("SameOrigin", func(t *testing.T) {
		res := send(t, "/name", "application/x-www-form-urlencoded", form,
			http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {w.srv.URL}})
		require.Equal(t, http.StatusSeeOther, res.StatusCode)
	})
}

// TestCSRFTokenBoundToSession: a token is good only in the session it was
// given to. Browser B, holding every cookie of browser A but A's session
// (as a site able to set cookies for Quarry's domain could arrange), still
// cannot use A's token.
func TestCSRFTokenBoundToSession(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	a, b := newClient(t), newClient(t)
	_, doc := w.get(t, a, "/name")
	tokenA := csrf(doc)
	w.signIn(t, b, "Bob")
	u, err := url.Parse(w.srv.URL)
	require.NoError(t, err)
	var carried []*http.Cookie
	for _, ck := range a.Jar.Cookies(u) {
		if ck.Name != "quarry" {
			carried = append(carried, ck)
		}
	}
	b.Jar.SetCookies(u, carried)

	res, doc := w.post(t, b, "/name", url.Values{"_csrf": {tokenA}, "name": {"Mallory"}, "next": {"/"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Equal(t, "Form expired", doc.Find(`[data-testid="error-title"]`).Text())

	// A's own session takes it.
	res, _ = w.post(t, a, "/name", url.Values{"_csrf": {tokenA}, "name": {"Ada"}, "next": {"/"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "/", res.Request.URL.Path)
}
