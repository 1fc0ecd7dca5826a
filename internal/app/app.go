// Package app wires Quarry together: configuration, the HTTP server and
// (soon) the SQLite store and the workflow engine. It is the only package
// that knows every other one; cmd/web and the e2e tests both start the app
// through it, so they run exactly the same wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/handlers"
)

// ShutdownTimeout bounds how long Serve waits for in-flight requests after
// its context is cancelled before closing the remaining connections.
const ShutdownTimeout = 10 * time.Second

// App is a configured Quarry instance. Create it with New, serve it with
// Serve and release it with Close.
type App struct {
	cfg    Config
	logger *slog.Logger
	echo   *echo.Echo

	// Integration point: the SQLite store (internal/store) and the
	// workflow engine (internal/engine) are opened in New, handed to
	// handlers.Deps, started in Serve if they run background work, and
	// closed in Close, in reverse order of opening.
}

// Option adjusts an App at construction; it exists so tests and commands
// can inject a logger without growing New's signature.
type Option func(*App)

// WithLogger sends the app's logs to l instead of discarding them.
func WithLogger(l *slog.Logger) Option {
	return func(a *App) { a.logger = l }
}

// New validates cfg and builds the app. ctx bounds start-up work (opening
// and migrating the database, once there is one); it is not kept.
func New(ctx context.Context, cfg Config, opts ...Option) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("app: start: %w", err)
	}
	a := &App{cfg: cfg, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(a)
	}
	a.echo = handlers.New(handlers.Deps{Logger: a.logger})
	return a, nil
}

// Config returns the configuration the app was built with.
func (a *App) Config() Config { return a.cfg }

// Handler returns the app's HTTP handler, for httptest servers and tests
// that do not need a real listener.
func (a *App) Handler() http.Handler { return a.echo }

// Serve answers HTTP requests on ln until ctx is cancelled, then shuts down
// gracefully: it stops accepting, lets in-flight requests finish for up to
// ShutdownTimeout, and returns nil. It closes ln. Any other failure of the
// server is returned.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           a.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
		// Requests inherit ctx's values but not its cancellation, so a
		// shutdown lets them finish instead of failing them mid-way.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return fmt.Errorf("app: serve: %w", err)
	case <-ctx.Done():
	}

	a.logger.Info("shutting down", "addr", ln.Addr().String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Long-lived requests (event streams) outlived the grace period.
		_ = srv.Close()
		a.logger.Warn("shutdown timed out; closed remaining connections", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("app: serve: %w", err)
	}
	return nil
}

// Close releases what New opened. It is safe to call more than once.
func (a *App) Close() error {
	// Integration point: close the engine, then the store.
	return nil
}
