// Package app wires Quarry together: configuration, the HTTP server and
// (soon) the SQLite store and the workflow engine. It is the only package
// that knows every other one; cmd/web and the e2e tests both start the app
// through it, so they run exactly the same wiring.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/handlers"
	"quarry/internal/library"
	"quarry/internal/metrics"
	"quarry/internal/store"
	"quarry/internal/store/pgrelay"
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

	registry *engine.Registry
	// startable are the workflow files registered at start, their content
	// hash by workflow name (withDefinitions).
	startable     map[string]string
	buildRegistry func(st *store.Store) (*engine.Registry, error)
	noDemo        bool
	version       string
	handler       engine.CheckpointHandler
	store         *store.Store
	engine        *engine.Engine
	// stopWorkers ends the job workers' context; Close calls it.
	stopWorkers context.CancelFunc
	// streamsDone is closed when Serve starts shutting down, so event
	// streams end instead of holding the graceful shutdown open.
	streamsDone chan struct{}
	// imports runs web uploads into the library.
	imports *library.Jobs
	// metrics observes the engine, the queue, imports and requests, and
	// serves /metrics.
	metrics   *metrics.Metrics
	closeOnce sync.Once
	// loops are background loops on the workers' context (the trigger
	// scheduler); Close waits for them before closing the store.
	loops sync.WaitGroup
	// workerCtx is the workers' context, which background jobs run on.
	workerCtx context.Context
	// embedding embeds the library in the background; nil without an
	// embeddings provider.
	embedding *library.Embedding
}

// Option adjusts an App at construction; it exists so tests and commands
// can inject a logger without growing New's signature.
type Option func(*App)

// WithLogger sends the app's logs to l instead of discarding them.
func WithLogger(l *slog.Logger) Option {
	return func(a *App) { a.logger = l }
}

// WithVersion names the running release (main.version, stamped by make
// release) for quarry_build_info; without it the build reads as "dev".
func WithVersion(v string) Option {
	return func(a *App) { a.version = v }
}

// WithWorkflows sets the workflows the engine runs. main builds the
// registry explicitly, so what can run is visible in one place.
func WithWorkflows(r *engine.Registry) Option {
	return func(a *App) { a.registry = r }
}

// WithWorkflowsFrom builds the registry once the database is open, for
// workflows that need it (the search pipeline searches the local library).
func WithWorkflowsFrom(build func(st *store.Store) (*engine.Registry, error)) Option {
	return func(a *App) { a.buildRegistry = build }
}

// WithoutDemoLibrary leaves an empty library empty (tests that bring their
// own papers); by default the embedded demo library seeds it.
func WithoutDemoLibrary() Option {
	return func(a *App) { a.noDemo = true }
}

// WithCheckpointHandler replaces the default handler, which leaves every
// checkpoint pending for a person to decide on the run page.
func WithCheckpointHandler(h engine.CheckpointHandler) Option {
	return func(a *App) { a.handler = h }
}

// New validates cfg and builds the app: it opens (and migrates) the
// database, builds the engine, starts the job workers and resumes runs a
// crash left mid-flight. ctx bounds start-up work; it is not kept.
func New(ctx context.Context, cfg Config, opts ...Option) (_ *App, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("app: start: %w", err)
	}
	a := &App{cfg: cfg, logger: slog.New(slog.DiscardHandler), handler: engine.Pending()}
	for _, opt := range opts {
		opt(a)
	}
	if a.store, err = store.Open(ctx, cfg.DSN(), cfg.StoreOptions(a.logger)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()
	if !a.noDemo {
		if err := seedDemoLibrary(ctx, a.store, a.logger); err != nil {
			return nil, err
		}
	}
	if a.buildRegistry != nil {
		if a.registry, err = a.buildRegistry(a.store); err != nil {
			return nil, err
		}
	}
	if a.registry == nil {
		if a.registry, err = engine.NewRegistry(); err != nil {
			return nil, err
		}
	}
	skills, err := namedSkills(cfg.Search, a.store, a.logger)
	if err != nil {
		return nil, err
	}
	tpls, err := builtinTemplates(cfg)
	if err != nil {
		return nil, err
	}
	if a.registry, tpls, err = withTemplates(a.registry, tpls, skills, a.logger); err != nil {
		return nil, err
	}
	acts := actionRunner(cfg, a.store)
	if a.registry, a.startable, err = withDefinitions(cfg, a.registry, skills, acts, a.logger); err != nil {
		return nil, err
	}
	if a.metrics, err = metrics.New(a.store, metrics.Options{Logger: a.logger, Version: a.version}); err != nil {
		return nil, err
	}
	pin := newPinned(a.registry, a.startable, a.store, DefinitionOptions(cfg), compileOptions(cfg, skills, acts))
	if a.engine, err = engine.New(engine.Config{Store: a.store, Registry: a.registry, Handler: a.handler, Logger: a.logger,
		Observer: a.metrics, Resolve: pin.resolve, Roles: a.roles}); err != nil {
		return nil, err
	}
	workerCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a.stopWorkers, a.workerCtx = cancel, workerCtx
	a.relayEvents(workerCtx)
	if err := a.store.StartWorkers(workerCtx, a.engine, store.QueueOptions{OnJobStart: a.metrics.JobStarted, BranchWorkers: cfg.BranchWorkers,
		RescueAfter: cfg.JobRescueAfter, Limits: runLimits(cfg, a.registry)}); err != nil {
		return nil, err
	}
	n, err := a.engine.Recover(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		a.logger.Info("resuming runs interrupted by a stop", "runs", n)
	}
	if err := a.startTriggers(ctx, workerCtx); err != nil {
		return nil, err
	}
	a.notifyAssigned(workerCtx, cfg)
	key, err := sessionKey(ctx, cfg, a.store)
	if err != nil {
		return nil, err
	}
	a.streamsDone = make(chan struct{})
	// Library imports run in the background on the workers' context, so
	// Close stops them (leaving the library as it was) before the store goes.
	if err := a.startEmbedding(); err != nil {
		return nil, err
	}
	a.imports = library.NewJobs(workerCtx, a.store, a.metrics.ImportDone, a.importDone)
	// Uploads are spooled beside the database (quarry.db-uploads, like
	// SQLite's -wal file), emptied here of what a killed import left; an
	// in-memory database has no beside, its uploads go to the system's
	// temporary directory.
	if !strings.Contains(cfg.DB, ":memory:") {
		removed, err := a.imports.UseSpoolDir(cfg.DB + "-uploads")
		if err != nil {
			return nil, err
		}
		if removed > 0 {
			a.logger.Info("removed uploads left by an interrupted import", "files", removed)
		}
	}
	a.echo = handlers.New(handlers.Deps{
		Logger: a.logger, Store: a.store, Engine: a.engine, SessionKey: key, Done: a.streamsDone,
		Library: a.store, Imports: a.imports, Files: a.store, SecureCookies: cfg.SecureCookies(), PublicURL: cfg.PublicURL,
		OpenMode: cfg.OpenMode, Accounts: a.store, ReadLimits: cfg.Import,
		Ready: a.store, Metrics: a.metrics.Handler(), OnRequest: a.observeRequest, ExclusionReasons: cfg.ExclusionReasons, StopWindow: cfg.StopWindow,
		WorkflowsDir: cfg.WorkflowsDir, DefinitionOptions: DefinitionOptions(cfg), StartableFiles: a.startable, Templates: tpls,
		Triggers: a.store, Embedding: a.embeddingStatus, OIDC: oidcConfig(cfg),
	})
	return a, nil
}

// importDone wakes the embedding job after an import: new papers, or
// corrected ones whose vectors were dropped, are embedded at once.
func (a *App) importDone(library.ImportStats, time.Duration, error) {
	if a.embedding != nil {
		a.embedding.Kick()
	}
}

// embeddingStatus is how embedding the library is going, for the library
// page; nil without an embeddings provider.
func (a *App) embeddingStatus() *library.EmbeddingStatus {
	if a.embedding == nil {
		return nil
	}
	s := a.embedding.Status()
	return &s
}

// observeRequest counts an answered request in the metrics.
func (a *App) observeRequest(ri handlers.RequestInfo) {
	a.metrics.ObserveRequest(ri.Method, ri.Route, ri.Status, ri.Duration)
}

// oidcConfig is the single sign-on the handlers offer, nil for none.
func oidcConfig(cfg Config) *handlers.OIDCConfig {
	if cfg.OIDC.Issuer == "" {
		return nil
	}
	return &handlers.OIDCConfig{Issuer: cfg.OIDC.Issuer, ClientID: cfg.OIDC.ClientID, ClientSecret: cfg.OIDC.ClientSecret,
		RedirectURL: cfg.OIDCRedirectURL(), Label: cmp.Or(cfg.OIDC.Name, DefaultOIDCName), CreateAccounts: cfg.OIDC.CreateAccounts}
}

// sessionKeySetting is where a generated session key is kept, so sessions
// survive restarts without configuration.
const sessionKeySetting = "session_key"

// sessionKey returns 64 bytes (32 to sign, 32 to encrypt cookies): derived
// from QUARRY_SESSION_KEY when set, else generated once and stored.
func sessionKey(ctx context.Context, cfg Config, st *store.Store) ([]byte, error) {
	if cfg.SessionKey != "" {
		sum := sha512.Sum512([]byte(cfg.SessionKey))
		return sum[:], nil
	}
	fresh := make([]byte, 64)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("app: session key: %w", err)
	}
	return st.SettingOrInit(ctx, sessionKeySetting, fresh)
}

// roles is engine.Config.Roles: whether person (a display name) holds
// role or a higher one in project.
func (a *App) roles(ctx context.Context, project, person, role string) (bool, error) {
	r, err := a.store.RoleByName(ctx, project, person)
	if err != nil {
		return false, err
	}
	return access.Role(r).AtLeast(access.Role(role)), nil
}

// Engine returns the workflow engine (tests and commands use it).
func (a *App) Engine() *engine.Engine { return a.engine }

// Store returns the database (tests and commands use it).
func (a *App) Store() *store.Store { return a.store }

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
	// The library's full-text index lives in memory: build it now, on the
	// side, so the first search does not wait for it.
	go func() {
		began := time.Now()
		if err := a.store.WarmLibraryIndex(ctx); err != nil && ctx.Err() == nil {
			a.logger.Warn("library index: build failed; searches will retry it", "err", err)
			return
		}
		a.logger.Info("library index ready", "took", time.Since(began).Round(time.Millisecond))
	}()

	select {
	case err := <-errc:
		return fmt.Errorf("app: serve: %w", err)
	case <-ctx.Done():
	}

	a.logger.Info("shutting down", "addr", ln.Addr().String())
	a.closeOnce.Do(func() { close(a.streamsDone) })
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
	if a.stopWorkers != nil {
		a.stopWorkers()
		a.stopWorkers = nil
	}
	a.loops.Wait()
	if a.embedding != nil {
		a.embedding.Wait()
	}
	if a.imports != nil {
		a.imports.Wait()
	}
	if a.store == nil {
		return nil
	}
	err := a.store.Close()
	a.store = nil
	return err
}

// relayEvents passes the engine's live events to the other replicas of a
// PostgreSQL installation and theirs to this one's pages (pgrelay), until
// ctx ends; on SQLite, one process, there is nothing to relay.
func (a *App) relayEvents(ctx context.Context) {
	pool := a.store.PgxPool()
	if pool == nil {
		return
	}
	host, _ := os.Hostname()
	tag := make([]byte, 4)
	_, _ = rand.Read(tag)
	r := pgrelay.New(pool, a.engine.Events(), fmt.Sprintf("%s/%d/%x", host, os.Getpid(), tag), a.logger)
	a.engine.Events().RelayTo(r.Forward)
	a.loops.Add(1)
	go func() {
		defer a.loops.Done()
		_ = r.Run(ctx)
	}()
}
