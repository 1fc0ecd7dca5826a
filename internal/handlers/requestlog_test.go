package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/handlers"
)

// accessLine is the request log's JSON line.
type accessLine struct {
	Level      string  `json:"level"`
	Msg        string  `json:"msg"`
	Method     string  `json:"method"`
	Route      string  `json:"route"`
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	RequestID  string  `json:"request_id"`
}

// accessLines returns the request log's lines among logs.
func accessLines(t *testing.T, logs string) []accessLine {
	t.Helper()
	var out []accessLine
	for line := range strings.Lines(logs) {
		var l accessLine
		require.NoError(t, json.Unmarshal([]byte(line), &l), line)
		if l.Msg == "request" {
			out = append(out, l)
		}
	}
	return out
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, target string
		want                 accessLine
	}{
		{"OK", http.MethodGet, "/healthz", accessLine{Level: "INFO", Method: "GET", Route: "/healthz", Status: 200}},
		{"Head", http.MethodHead, "/healthz", accessLine{Level: "INFO", Method: "HEAD", Route: "/healthz", Status: 200}},
		{"RoutePatternNotPath", http.MethodGet, "/static/app.css", accessLine{Level: "INFO", Method: "GET", Route: "/static/:file", Status: 200}},
		{"ClientError", http.MethodGet, "/fail?code=not_found", accessLine{Level: "INFO", Method: "GET", Route: "/fail", Status: 404}},
		{"ServerError", http.MethodGet, "/fail", accessLine{Level: "ERROR", Method: "GET", Route: "/fail", Status: 500}},
		{"Panic", http.MethodGet, "/fail?panic=1", accessLine{Level: "ERROR", Method: "GET", Route: "/fail", Status: 500}},
		{"Unmatched", http.MethodGet, "/no/such/page", accessLine{Level: "INFO", Method: "GET", Route: handlers.UnmatchedRoute, Status: 404}},
		{"MethodNotAllowed", http.MethodPost, "/healthz", accessLine{Level: "INFO", Method: "POST", Route: "/healthz", Status: 405}},
		// Nothing is sent to a client that went away; the log says so.
		{"ClientGone", http.MethodGet, "/fail?gone=1", accessLine{Level: "INFO", Method: "GET", Route: "/fail", Status: handlers.StatusClientClosed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			var mu sync.Mutex
			var seen []handlers.RequestInfo
			e := handlers.New(handlers.Deps{Logger: slog.New(slog.NewJSONHandler(logs, nil)), OnRequest: func(ri handlers.RequestInfo) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, ri)
			}})
			e.GET("/fail", func(c echo.Context) error {
				switch {
				case c.QueryParam("panic") != "":
					panic("boom")
				case c.QueryParam("gone") != "":
					return fmt.Errorf("reading the body: %w", context.Canceled)
				case c.QueryParam("code") != "":
					return fault.Errorf(c.QueryParam("code"), "nothing here")
				}
				return errors.New("disk on fire")
			})
			b := bundle{e: e, logs: logs}
			rec := b.do(t, tt.method, tt.target, nil)
			if tt.want.Status != handlers.StatusClientClosed {
				require.Equal(t, tt.want.Status, rec.Code)
			}

			lines := accessLines(t, logs.String())
			require.Len(t, lines, 1, "one line per request")
			got := lines[0]
			require.NotEmpty(t, got.RequestID)
			require.Equal(t, rec.Header().Get(echo.HeaderXRequestID), got.RequestID, "the line carries the ID the response sent")
			require.GreaterOrEqual(t, got.DurationMS, 0.0)
			got.RequestID, got.DurationMS = "", 0
			tt.want.Msg = "request"
			require.Equal(t, tt.want, got)

			mu.Lock()
			defer mu.Unlock()
			require.Len(t, seen, 1)
			require.Equal(t, handlers.RequestInfo{Method: tt.want.Method, Route: tt.want.Route, Status: tt.want.Status,
				RequestID: rec.Header().Get(echo.HeaderXRequestID)}, withoutMeasures(seen[0]))
		})
	}
}

func withoutMeasures(ri handlers.RequestInfo) handlers.RequestInfo {
	ri.Duration, ri.Bytes = 0, 0
	return ri
}
