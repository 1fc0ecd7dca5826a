package app

import (
	"io"
	"log/slog"
)

// NewLogger is the one place a server's logger is built: in the format
// and from the level the configuration says, writing to w. The app passes
// it down to the store, the engine and the handlers.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
