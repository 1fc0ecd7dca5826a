package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
	"quarry/static"
)

func TestHealthz(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rec := b.do(t, http.MethodGet, "/healthz", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "ok", rec.Body.String())
}

func TestMiddlewareHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rec := b.do(t, http.MethodGet, "/healthz", nil)
	h := rec.Header()
	require.NotEmpty(t, h.Get(echo.HeaderXRequestID))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, "DENY", h.Get("X-Frame-Options"))
	require.Contains(t, h.Get("Content-Security-Policy"), "default-src 'self'")

	// A request ID sent by a proxy is kept, so logs can be correlated.
	rec = b.do(t, http.MethodGet, "/healthz", http.Header{"X-Request-Id": {"abc123"}})
	require.Equal(t, "abc123", rec.Header().Get(echo.HeaderXRequestID))
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.e.POST("/echo", func(c echo.Context) error {
		_, err := io.Copy(io.Discard, c.Request().Body)
		if err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	})
	req, err := http.NewRequest(http.MethodPost, "/echo", strings.NewReader(strings.Repeat("x", 11<<20)))
	require.NoError(t, err)
	req.RequestURI = "/echo"
	rec := newRecorder(b, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
}

// TestBodyTooLargeHasItsOwnCode: a body over the limit is not malformed
// input (invalid) but too_large, so a script can tell it to send less.
func TestBodyTooLargeHasItsOwnCode(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	h := func(c echo.Context) error {
		if _, err := io.Copy(io.Discard, c.Request().Body); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
	b.e.POST("/api/echo", h)
	b.e.POST("/echo", h)
	for _, path := range []string{"/api/echo", "/echo"} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(strings.Repeat("x", 11<<20)))
		req.Header.Set("Content-Type", "application/json")
		rec := newRecorder(b, req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, path)
		if path == "/api/echo" {
			var eb handlers.ErrorBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb))
			require.Equal(t, "too_large", eb.Error.Code)
			continue
		}
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		require.NoError(t, err)
		require.Equal(t, "too_large", doc.Find(`[data-testid="error"]`).AttrOr("data-code", ""))
	}
}

func TestStatic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		wantType string
	}{
		{"htmx.min.js", "javascript"},
		{"sse.min.js", "javascript"},
		{"app.css", "text/css"},
		{"favicon.svg", "image/svg+xml"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			want, err := static.FS.ReadFile(tt.file)
			require.NoError(t, err)
			b := setup(t, nil)

			rec := b.do(t, http.MethodGet, "/static/"+tt.file, nil)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Contains(t, rec.Header().Get("Content-Type"), tt.wantType)
			require.Equal(t, "public, max-age=3600", rec.Header().Get("Cache-Control"))
			etag := rec.Header().Get("ETag")
			require.NotEmpty(t, etag)
			require.Equal(t, want, rec.Body.Bytes())

			rec = b.do(t, http.MethodGet, "/static/"+tt.file, http.Header{"If-None-Match": {etag}})
			require.Equal(t, http.StatusNotModified, rec.Code)
			require.Zero(t, rec.Body.Len())
		})
	}
}

func TestStaticVendoredVersions(t *testing.T) {
	t.Parallel()
	htmx, err := static.FS.ReadFile("htmx.min.js")
	require.NoError(t, err)
	require.Contains(t, string(htmx), `version:"2.0.11"`)
	sse, err := static.FS.ReadFile("sse.min.js")
	require.NoError(t, err)
	require.Contains(t, string(sse), `defineExtension("sse"`)
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	e := handlers.New(handlers.Deps{RequestTimeout: 20 * time.Millisecond})
	slow := func(c echo.Context) error {
		<-c.Request().Context().Done() // a handler that honours its context
		return c.Request().Context().Err()
	}
	e.GET("/slow", slow)
	e.GET("/api/slow", slow)

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/slow", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.JSONEq(t, `{"error":{"code":"internal","message":"Service Unavailable"}}`, rec.Body.String())

	// Event streams are long-lived and must not be cut by the timeout.
	e.GET("/events", func(c echo.Context) error {
		_, hasDeadline := c.Request().Context().Deadline()
		require.False(t, hasDeadline)
		return c.NoContent(http.StatusNoContent)
	})
	req := httptest.NewRequest(http.MethodGet, "/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNoContent, rec.Code)
}
