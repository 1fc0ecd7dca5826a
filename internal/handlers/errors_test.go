package handlers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/handlers"
)

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// bundle is what each test gets from setup: the server and its log output.
type bundle struct {
	e    *echo.Echo
	logs *syncBuffer
}

// setup builds the real server with a logger writing JSON lines to a buffer,
// plus a route /fail (and /api/fail) that returns the error the test names.
func setup(t *testing.T, failWith func() error) bundle {
	t.Helper()
	logs := &syncBuffer{}
	e := handlers.New(handlers.Deps{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if failWith != nil {
		h := func(echo.Context) error { return failWith() }
		e.GET("/fail", h)
		e.GET("/api/fail", h)
	}
	return bundle{e: e, logs: logs}
}

func (b bundle) do(t *testing.T, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	b.e.ServeHTTP(rec, req)
	return rec
}

// logLevels returns the level of each JSON log line but the request log's
// (one per request, see TestRequestLog).
func logLevels(t *testing.T, logs string) []string {
	t.Helper()
	var levels []string
	for line := range strings.Lines(logs) {
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec.Msg != "request" {
			levels = append(levels, rec.Level)
		}
	}
	return levels
}

func TestErrorHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        func() error
		wantStatus int
		wantCode   string
		wantMsg    string
		wantFields map[string]string
		wantLevel  string
	}{
		{
			name: "Invalid",
			err: func() error {
				return fault.FieldErrors{"topic": "topic is required", "year_range.from": "year must be between 1000 and 3000"}.Err("invalid intent")
			},
			wantStatus: http.StatusUnprocessableEntity, wantCode: fault.EInvalid, wantMsg: "invalid intent",
			wantFields: map[string]string{"topic": "topic is required", "year_range.from": "year must be between 1000 and 3000"},
			wantLevel:  "WARN",
		},
		{
			name:       "NotFound",
			err:        func() error { return fault.Errorf(fault.ENotFound, "run %q not found", "r1") },
			wantStatus: http.StatusNotFound, wantCode: fault.ENotFound, wantMsg: `run "r1" not found`, wantLevel: "WARN",
		},
		{
			name:       "Conflict",
			err:        func() error { return fault.Errorf(fault.EConflict, "checkpoint already decided") },
			wantStatus: http.StatusConflict, wantCode: fault.EConflict, wantMsg: "checkpoint already decided", wantLevel: "WARN",
		},
		{
			name:       "Unauthorized",
			err:        func() error { return fault.Errorf(fault.EUnauthorized, "not yours") },
			wantStatus: http.StatusForbidden, wantCode: fault.EUnauthorized, wantMsg: "not yours", wantLevel: "WARN",
		},
		{
			name:       "InternalHidesDetails",
			err:        func() error { return &fault.Error{Code: fault.EInternal, Message: "db password is hunter2"} },
			wantStatus: http.StatusInternalServerError, wantCode: fault.EInternal, wantMsg: "internal error", wantLevel: "ERROR",
		},
		{
			name:       "PlainErrorIsInternal",
			err:        func() error { return errors.New("disk on fire") },
			wantStatus: http.StatusInternalServerError, wantCode: fault.EInternal, wantMsg: "internal error", wantLevel: "ERROR",
		},
		{
			name:       "UnknownCodeIsInternal",
			err:        func() error { return fault.Errorf("weird", "something") },
			wantStatus: http.StatusInternalServerError, wantCode: fault.EInternal, wantMsg: "something", wantLevel: "ERROR",
		},
		{
			name:       "WrappedEngineError",
			err:        func() error { return fmt.Errorf("loading run: %w", fault.Errorf(fault.ENotFound, "no such run")) },
			wantStatus: http.StatusNotFound, wantCode: fault.ENotFound, wantMsg: "no such run", wantLevel: "WARN",
		},
		{
			name:       "EchoHTTPErrorKeepsStatus",
			err:        func() error { return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "too big") },
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: fault.ETooLarge, wantMsg: "too big", wantLevel: "WARN",
		},
		{
			name:       "TooLarge",
			err:        func() error { return fault.Errorf(fault.ETooLarge, "over the limit of 5 files") },
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: fault.ETooLarge, wantMsg: "over the limit of 5 files", wantLevel: "WARN",
		},
		{
			name: "EchoHTTPErrorWinsOverWrappedEngineError",
			err: func() error {
				return echo.NewHTTPError(http.StatusTooManyRequests).SetInternal(fault.Errorf(fault.ENotFound, "x"))
			},
			wantStatus: http.StatusTooManyRequests, wantCode: fault.ERateLimited, wantMsg: "Too Many Requests", wantLevel: "WARN",
		},
		{
			name:       "EchoServerErrorHidesMessage",
			err:        func() error { return echo.NewHTTPError(http.StatusServiceUnavailable, "pool exhausted at 10.0.0.3") },
			wantStatus: http.StatusServiceUnavailable, wantCode: fault.EInternal, wantMsg: "Service Unavailable", wantLevel: "ERROR",
		},
		{
			name:       "Panic",
			err:        func() error { panic("boom") },
			wantStatus: http.StatusInternalServerError, wantCode: fault.EInternal, wantMsg: "internal error", wantLevel: "ERROR",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			t.Run("Page", func(t *testing.T) {
				t.Parallel()
				b := setup(t, tt.err)
				rec := b.do(t, http.MethodGet, "/fail", http.Header{"Accept": {"text/html,application/xhtml+xml,*/*;q=0.8"}})
				require.Equal(t, tt.wantStatus, rec.Code)
				require.Contains(t, rec.Header().Get("Content-Type"), "text/html")
				doc, err := goquery.NewDocumentFromReader(rec.Body)
				require.NoError(t, err)
				require.Equal(t, 1, doc.Find("html > head > title").Length(), "a page has the layout")
				requireErrorSection(t, doc, tt.wantStatus, tt.wantCode, tt.wantMsg, tt.wantFields)
				require.NotEmpty(t, doc.Find(`[data-testid="error-request-id"]`).Text())
				require.Equal(t, []string{tt.wantLevel}, logLevels(t, b.logs.String()))
			})

			t.Run("Fragment", func(t *testing.T) {
				t.Parallel()
				b := setup(t, tt.err)
				rec := b.do(t, http.MethodGet, "/fail", http.Header{"Hx-Request": {"true"}})
				require.Equal(t, tt.wantStatus, rec.Code)
				require.Equal(t, "#flash", rec.Header().Get("HX-Retarget"))
				require.Equal(t, "innerHTML", rec.Header().Get("HX-Reswap"))
				body := rec.Body.String()
				require.NotContains(t, body, "<html", "a fragment has no layout")
				doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
				require.NoError(t, err)
				require.Equal(t, 0, doc.Find("title").Length())
				requireErrorSection(t, doc, tt.wantStatus, tt.wantCode, tt.wantMsg, tt.wantFields)
			})

			for _, api := range []struct {
				name   string
				target string
				accept string
			}{
				{"JSONByPath", "/api/fail", ""},
				{"JSONByAccept", "/fail", "application/json"},
			} {
				t.Run(api.name, func(t *testing.T) {
					t.Parallel()
					b := setup(t, tt.err)
					rec := b.do(t, http.MethodGet, api.target, http.Header{"Accept": {api.accept}})
					require.Equal(t, tt.wantStatus, rec.Code)
					require.Contains(t, rec.Header().Get("Content-Type"), "application/json")
					var got handlers.ErrorBody
					require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
					require.Equal(t, handlers.ErrorBody{Error: handlers.ErrorJSON{
						Code: tt.wantCode, Message: tt.wantMsg, Fields: tt.wantFields,
					}}, got)
				})
			}
		})
	}
}

// requireErrorSection checks the error component wherever it was rendered.
func requireErrorSection(t *testing.T, doc *goquery.Document, status int, code, msg string, fields map[string]string) {
	t.Helper()
	sec := doc.Find(`[data-testid="error"]`)
	require.Equal(t, 1, sec.Length())
	require.Equal(t, "alert", sec.AttrOr("role", ""))
	require.Equal(t, strconv.Itoa(status), sec.AttrOr("data-status", ""))
	require.Equal(t, code, sec.AttrOr("data-code", ""))
	require.Equal(t, http.StatusText(status), doc.Find(`[data-testid="error-title"]`).Text())
	require.Equal(t, msg, doc.Find(`[data-testid="error-message"]`).Text())
	got := map[string]string{}
	var order []string
	doc.Find(`[data-testid="error-field"]`).Each(func(_ int, s *goquery.Selection) {
		f := s.AttrOr("data-field", "")
		order = append(order, f)
		got[f] = strings.TrimPrefix(s.Text(), f+": ")
	})
	if len(fields) == 0 {
		require.Empty(t, got)
		return
	}
	require.Equal(t, fields, got)
	require.IsNonDecreasing(t, order, "fields are listed in a stable, sorted order")
}

func TestErrorHandlerRoutingMiss(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		method     string
		target     string
		wantStatus int
		wantCode   string
	}{
		{"UnknownPage", http.MethodGet, "/nowhere", http.StatusNotFound, fault.ENotFound},
		{"UnknownAPI", http.MethodGet, "/api/nowhere", http.StatusNotFound, fault.ENotFound},
		{"WrongMethod", http.MethodDelete, "/healthz", http.StatusMethodNotAllowed, fault.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			rec := b.do(t, tt.method, tt.target, nil)
			require.Equal(t, tt.wantStatus, rec.Code)
			if strings.HasPrefix(tt.target, "/api/") {
				var got handlers.ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
				require.Equal(t, tt.wantCode, got.Error.Code)
				return
			}
			doc, err := goquery.NewDocumentFromReader(rec.Body)
			require.NoError(t, err)
			require.Equal(t, tt.wantCode, doc.Find(`[data-testid="error"]`).AttrOr("data-code", ""))
		})
	}
}

func TestErrorHandlerHeadHasNoBody(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rec := b.do(t, http.MethodHead, "/static/missing.js", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Zero(t, rec.Body.Len())
}

func TestPanicIsLoggedWithStack(t *testing.T) {
	t.Parallel()
	b := setup(t, func() error { panic("kaboom") })
	rec := b.do(t, http.MethodGet, "/fail", nil)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.NotContains(t, rec.Body.String(), "kaboom", "panic details stay in the logs")
	var line struct {
		Level string `json:"level"`
		Err   string `json:"err"`
		Stack string `json:"stack"`
	}
	first, _, _ := strings.Cut(b.logs.String(), "\n") // the request log's line follows
	require.NoError(t, json.Unmarshal([]byte(first), &line))
	require.Equal(t, "ERROR", line.Level)
	require.Contains(t, line.Err, "kaboom")
	require.Contains(t, line.Stack, "errors_test.go")
}

func newRecorder(b bundle, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	b.e.ServeHTTP(rec, req)
	return rec
}
