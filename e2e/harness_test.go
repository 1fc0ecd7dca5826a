// Package e2e drives the real Quarry server with a real Chromium through
// playwright-go. Run scripts/setup-e2e.sh (make e2e does) first: it installs
// Chromium from Debian and the Playwright 1.52.0 driver from npm. A missing
// browser or driver makes every test FAIL with a clear message; these tests
// never skip, so CI cannot pass without them. The one exception is
// TestScreenshots, which writes docs/screenshots/ and so runs only under
// make screenshots.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// Timeouts keep a broken setup from hanging the suite: each failure mode
// (driver, browser launch, page action, assertion) has its own bound.
const (
	driverTimeout = 30 * time.Second
	launchTimeout = 30 * time.Second
	actionTimeout = 10 * time.Second // clicks, fills, navigation
	expectTimeout = 5 * time.Second  // auto-waiting assertions
	serverTimeout = 15 * time.Second // graceful shutdown of the per-test server
	// workTimeout bounds an assertion that waits for background work (a
	// library import, a pipeline iteration) and then for the page's
	// polling to show it: under -race on a loaded machine that alone can
	// take longer than expectTimeout.
	workTimeout = 20 * time.Second
)

// defaultChromium is where Debian's chromium package puts the browser;
// QUARRY_CHROMIUM overrides it (the setup script honours it too).
const defaultChromium = "/usr/bin/chromium"

// chromiumArgs run Chromium headless in a container and stop it from
// calling home: without the background-networking flags it floods a closed
// network with requests that slow every page down.
var chromiumArgs = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
}

// shared is the one browser all tests in the package use, started on first
// use (so `go test -list` and filtered runs that match nothing never launch
// it) and stopped by TestMain. Each test gets its own browser context, so
// tests stay isolated and can run in parallel.
var shared browserOnce

type browserOnce struct {
	once    sync.Once
	pw      *playwright.Playwright
	browser playwright.Browser
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// get launches the browser once and returns it, or the launch error.
func (b *browserOnce) get() (playwright.Browser, error) {
	b.once.Do(func() { b.pw, b.browser, b.err = launch() })
	return b.browser, b.err
}

func (b *browserOnce) stop() {
	if b.browser != nil {
		_ = b.browser.Close()
	}
	if b.pw != nil {
		_ = b.pw.Stop()
	}
}

// launch starts the Playwright driver and Chromium, each under a timeout.
func launch() (*playwright.Playwright, playwright.Browser, error) {
	const hint = "run scripts/setup-e2e.sh (or make e2e) to install Chromium and the Playwright driver"
	exe := os.Getenv("QUARRY_CHROMIUM")
	if exe == "" {
		exe = defaultChromium
	}
	if _, err := os.Stat(exe); err != nil {
		return nil, nil, fmt.Errorf("chromium not found at %s (%v); %s", exe, err, hint)
	}

	type result struct {
		pw  *playwright.Playwright
		err error
	}
	started := make(chan result, 1)
	go func() {
		pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true, Verbose: false})
		started <- result{pw, err}
	}()
	var pw *playwright.Playwright
	select {
	case r := <-started:
		if r.err != nil {
			return nil, nil, fmt.Errorf("starting the Playwright driver: %w; %s", r.err, hint)
		}
		pw = r.pw
	case <-time.After(driverTimeout):
		return nil, nil, fmt.Errorf("the Playwright driver did not start within %s; %s", driverTimeout, hint)
	}

	browser, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(exe),
		Args:           chromiumArgs,
		Headless:       playwright.Bool(true),
		Timeout:        playwright.Float(float64(launchTimeout.Milliseconds())),
	})
	if err != nil {
		_ = pw.Stop()
		return nil, nil, fmt.Errorf("launching %s: %w", exe, err)
	}
	return pw, browser, nil
}

// server is one run of the real app on a free loopback port. Stop ends it
// the way a process exit would (the whole App: listener, job workers and
// database), so a test can start a new server on the same database file
// and check what survived.
type server struct {
	t   *testing.T
	db  string
	url string

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
	app      *app.App
}

// startServer runs the real app in-process on a free loopback port with a
// fresh database in t.TempDir(). The server is shut down gracefully when
// the test ends, unless the test stopped it first.
func startServer(t *testing.T) *server {
	t.Helper()
	return startServerOn(t, filepath.Join(t.TempDir(), "quarry.db"))
}

// startServerOn runs the real app on the database file db, which may hold
// an earlier server's data: that is how the restart test resumes.
func startServerOn(t *testing.T, db string) *server {
	t.Helper()
	// The registry is built over the app's own store, as cmd/web builds
	// it, so runs can read files attached at the strategy checkpoint.
	return startServerWith(t, db, func(st *store.Store) (*engine.Registry, error) {
		return testapp.RegistryWithFiles(st)
	})
}

// startDemoApp runs the real app as cmd/web's serve does: the search
// workflow of app.Workflows over the default source (local) and the demo
// library seeded into a fresh database, for tests that need its papers.
func startDemoApp(t *testing.T) *server {
	t.Helper()
	return startServerWith(t, filepath.Join(t.TempDir(), "quarry.db"), func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(app.Search{}, st, slog.New(slog.DiscardHandler))
	})
}

// startServerWith runs the real app on the database file db with the
// workflows workflows builds over its store.
func startServerWith(t *testing.T, db string, workflows func(*store.Store) (*engine.Registry, error)) *server {
	t.Helper()
	return startServerConfig(t, app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: db}, workflows)
}

// startServerConfig is startServerWith with the app's whole configuration.
func startServerConfig(t *testing.T, cfg app.Config, workflows func(*store.Store) (*engine.Registry, error)) *server {
	t.Helper()
	db := cfg.DB
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.WithWorkflowsFrom(workflows))
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		cancel()
		require.NoError(t, errors.Join(err, a.Close()))
	}
	s := &server{t: t, db: db, url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1), app: a}
	go func() { s.done <- a.Serve(ctx, ln) }()
	t.Cleanup(s.Stop)
	return s
}

// Stop shuts the server down gracefully and closes the app. It is safe to
// call more than once; only the first call does anything.
func (s *server) Stop() {
	s.t.Helper()
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case err := <-s.done:
			assert.NoError(s.t, err, "serve")
		case <-time.After(serverTimeout):
			s.t.Errorf("server did not shut down within %s", serverTimeout)
		}
		assert.NoError(s.t, s.app.Close(), "close")
	})
}

// newPage starts a server for this test and opens a page on it with
// openPage. It returns the page and auto-waiting assertions.
func newPage(t *testing.T) (playwright.Page, playwright.PlaywrightAssertions) {
	t.Helper()
	return openPage(t, startServer(t).url)
}

// openPage opens a page in a new browser context whose base URL is base,
// so tests navigate with paths ("/"). It returns the page and auto-waiting
// assertions. JavaScript errors and console errors on the page (a CSP
// violation, a failed asset) fail the test.
func openPage(t *testing.T, base string) (playwright.Page, playwright.PlaywrightAssertions) {
	t.Helper()
	browser, err := shared.get()
	if err != nil {
		t.Fatalf("e2e: no browser: %v", err)
	}
	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(base)})
	require.NoError(t, err)
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	bctx.SetDefaultNavigationTimeout(float64(actionTimeout.Milliseconds()))
	page, err := bctx.NewPage()
	require.NoError(t, err)
	// Cleanups run last-in first-out: check the page, then close the
	// context, then (registered earlier) stop the server.
	t.Cleanup(func() { require.NoError(t, bctx.Close()) })
	watch(t, page)
	return page, playwright.NewPlaywrightAssertions(float64(expectTimeout.Milliseconds()))
}

// watch fails the test, when it ends, if page reported a failed asset or
// API call, a console error or an uncaught exception. Tests call it for
// every extra page they open.
func watch(t *testing.T, page playwright.Page) {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	report := func(p string) {
		mu.Lock()
		problems = append(problems, p)
		mu.Unlock()
	}
	// A failed asset or API call is a bug; a failed document load may be
	// what the test wants (a 404 page, a form's 422), so tests check those
	// themselves. A boosted form's request (HX-Boosted) loads a page too.
	page.OnResponse(func(res playwright.Response) {
		req := res.Request()
		if res.Status() >= 400 && req.ResourceType() != "document" && req.Headers()["hx-boosted"] != "true" {
			report(fmt.Sprintf("%s %s: %d", res.Request().Method(), res.URL(), res.Status()))
		}
	})
	page.OnConsole(func(msg playwright.ConsoleMessage) {
		// The browser also logs every failed response as a console error;
		// OnResponse above has already judged those.
		if msg.Type() == "error" && !strings.HasPrefix(msg.Text(), "Failed to load resource") {
			report("console: " + msg.Text())
		}
	})
	page.OnPageError(func(err error) { report("page error: " + err.Error()) })
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) > 0 {
			t.Errorf("the page reported errors:\n%s", strings.Join(problems, "\n"))
		}
	})
}

// afterWork waits up to workTimeout for an element that appears only once
// background work is done (an import, a search iteration).
func afterWork() playwright.LocatorAssertionsToBeVisibleOptions {
	return playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(float64(workTimeout.Milliseconds()))}
}

// roleName selects an element by its accessible name, exactly.
func roleName(name string) playwright.PageGetByRoleOptions {
	return playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)}
}

// unrouteOnCleanup removes page's routes when the test ends, after the
// page has left for about:blank. playwright-go v0.5200.1 reads a page's
// route list without its lock while it dispatches a request to a route
// handler (pageImpl.onRoute) and writes it without the lock in
// UnrouteAll, and closing the context while a handler runs races too;
// a page that polls (the status line, the event stream) keeps sending
// matching requests, so the page first leaves, which ends its polling,
// and only then are the routes removed (waiting for running handlers)
// before the context closes.
func unrouteOnCleanup(t *testing.T, page playwright.Page) {
	t.Helper()
	t.Cleanup(func() {
		_, _ = page.Goto("about:blank")
		_ = page.UnrouteAll(playwright.PageUnrouteAllOptions{Behavior: playwright.UnrouteBehaviorWait})
	})
}
