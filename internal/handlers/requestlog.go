package handlers

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
)

// RequestInfo is what the request log records of one answered request.
// Deps.OnRequest receives it too, for metrics.
type RequestInfo struct {
	Method string
	// Route is the echo route pattern ("/runs/:id"), never the raw path:
	// run IDs are share links, and patterns keep metrics' labels few.
	// A request no route matched has UnmatchedRoute.
	Route     string
	Status    int
	Duration  time.Duration
	Bytes     int64
	RequestID string
}

// UnmatchedRoute is RequestInfo.Route for a request no route matched.
const UnmatchedRoute = "unmatched"

// StatusClientClosed is the status logged for a request whose client went
// away before it was answered (nginx's 499); nothing is sent.
const StatusClientClosed = 499

// requestLog writes one line per request (info below 500, error from 500)
// and tells onRequest. It must run outside every other middleware but the
// request ID, so it sees the final status: it answers an error itself,
// through the error handler (which logs the error's cause on a line of its
// own), instead of leaving that to echo after the chain has returned.
func requestLog(logger *slog.Logger, onRequest func(RequestInfo)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			res := c.Response()
			info := RequestInfo{
				Method:    c.Request().Method,
				Route:     c.Path(),
				Status:    res.Status,
				Duration:  time.Since(start),
				Bytes:     res.Size,
				RequestID: res.Header().Get(echo.HeaderXRequestID),
			}
			if info.Route == "" {
				info.Route = UnmatchedRoute
			}
			if errors.Is(err, context.Canceled) && !res.Committed {
				info.Status = StatusClientClosed
			}
			level := slog.LevelInfo
			if info.Status >= 500 {
				level = slog.LevelError
			}
			logger.LogAttrs(context.WithoutCancel(c.Request().Context()), level, "request",
				slog.String("method", info.Method),
				slog.String("route", info.Route),
				slog.Int("status", info.Status),
				slog.Float64("duration_ms", float64(info.Duration.Microseconds())/1000),
				slog.Int64("bytes", info.Bytes),
				slog.String("request_id", info.RequestID),
			)
			if onRequest != nil {
				onRequest(info)
			}
			return nil
		}
	}
}
