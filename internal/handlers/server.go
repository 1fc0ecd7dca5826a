// Package handlers is Quarry's HTTP layer: the echo server, its middleware,
// the routes and the one error handler that turns engine error codes into
// statuses and pages. Handlers parse the request, make one call into the
// domain and render a view; they never write error responses by hand.
package handlers

import (
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"quarry/internal/access"
	"quarry/internal/biblio/codecs"
	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/report/wfgraph"
)

// Deps is everything the HTTP layer needs from the rest of the app. The
// integrator adds the store and the engine here; handlers get them through
// their own small structs, never through globals.
type Deps struct {
	// Logger receives request errors (5xx as errors, 4xx as warnings).
	// Nil discards logs, which keeps tests quiet.
	Logger *slog.Logger
	// RequestTimeout bounds each non-streaming request's context; zero
	// means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// BodyLimit caps request bodies (echo size syntax, e.g. "2M"); empty
	// means DefaultBodyLimit.
	BodyLimit string
	// Store is where run pages read runs, checkpoints and decisions.
	Store RunStore
	// Engine starts runs and records decisions; its registry lists the
	// workflows and its broker feeds the event streams.
	Engine *engine.Engine
	// SessionKey signs (first 32 bytes) and encrypts (next 32) the session
	// cookie; internal/app loads it from QUARRY_SESSION_KEY or the database.
	SessionKey []byte
	// PublicURL is the address people use (QUARRY_PUBLIC_URL, "" for
	// none); the cross-origin check trusts it as an origin, for a proxy
	// that does not pass on the Host browsers sent.
	PublicURL string
	// SecureCookies marks the session cookie Secure although
	// requests arrive over plain HTTP: a proxy in front terminates TLS, so
	// browsers use HTTPS. internal/app sets it when QUARRY_PUBLIC_URL is
	// https. Without it the session cookie is Secure only on a TLS request.
	SecureCookies bool
	// Done, when closed, ends long-lived event streams so a graceful
	// shutdown does not wait for browsers to go away.
	Done <-chan struct{}
	// Library is the local paper library the library page reads and
	// exports; Imports runs its uploads in the background. Both nil hides
	// the library routes (only error-handling tests do that).
	Library LibraryStore
	Imports *library.Jobs
	// Files keeps files attached to runs at the strategy checkpoint.
	Files RunFileStore
	// UploadLimit caps file uploads (library imports, files attached to a
	// run), which are spooled to disk rather than held in memory; empty
	// means DefaultUploadLimit.
	UploadLimit string
	// ReadLimits bound reading an uploaded or attached file (its Limits
	// and Gzip fields; zero: the defaults).
	ReadLimits codecs.Options
	// ExclusionReasons are the reasons the review offers for excluding a
	// paper (keys 1–9 choose the first nine); empty means
	// research.DefaultExclusionReasons.
	ExclusionReasons []string

	// StopWindow is k of the review's "no relevant paper in the last k
	// screened" suggestion; 0 means research.DefaultStopWindow.
	StopWindow int
	// WorkflowsDir is QUARRY_WORKFLOWS_DIR: /workflows lists its
	// definition files, checked with DefinitionOptions; "" lists none.
	WorkflowsDir      string
	DefinitionOptions def.Options
	// StartableFiles are the definition files registered when the server
	// started: content hash by workflow name. A listed file whose text
	// differs (edited since) cannot start runs until a restart.
	StartableFiles map[string]string
	// Templates are the built-in workflow templates the registry holds:
	// listed among the built-in workflows, each with its start form.
	Templates []*def.Definition
	// OnRequest, if set, is told of every answered request (metrics); the
	// request log gets the same line either way.
	OnRequest func(RequestInfo)
	// Ready answers /readyz; nil leaves the route out.
	Ready ReadyChecker
	// Metrics serves /metrics (Prometheus' text format); nil leaves the
	// route out.
	Metrics http.Handler
	// Triggers keeps workflow triggers' tokens and firings; nil leaves
	// the inbound trigger route out.
	Triggers TriggerStore
	// Embedding reports the library's background embedding; nil, or a nil
	// answer, when no embeddings provider is configured.
	Embedding func() *library.EmbeddingStatus
	// OpenMode (QUARRY_OPEN_MODE) runs without accounts: anyone who
	// reaches the server may do anything, decisions record the name a
	// browser gives and the API's decided_by is honoured. Otherwise
	// people sign in, and Accounts keeps them (nil Accounts means open
	// mode: there is nothing to check against).
	OpenMode bool
	Accounts AccountStore
	// Hasher hashes passwords (zero: access.DefaultHasher; tests pass a
	// cheap one).
	Hasher access.Hasher
	// OIDC is single sign-on through an OpenID Connect provider; nil
	// for none.
	OIDC *OIDCConfig
}

// Defaults for Deps, chosen for a single-user app: forms and imports are
// small, and a page that takes longer than the timeout is a bug to fix.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultBodyLimit      = "10M"
	DefaultUploadLimit    = "1G"
)

// New builds the echo server with its middleware, error handler and routes.
// It does not listen; internal/app owns the listener and shutdown.
func New(deps Deps) *echo.Echo {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if deps.RequestTimeout == 0 {
		deps.RequestTimeout = DefaultRequestTimeout
	}
	if deps.BodyLimit == "" {
		deps.BodyLimit = DefaultBodyLimit
	}
	if deps.UploadLimit == "" {
		deps.UploadLimit = DefaultUploadLimit
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = newErrorHandler(deps.Logger).handle

	e.Pre(middleware.RequestID())
	e.Use(requestLog(deps.Logger, deps.OnRequest))
	e.Use(removeMultipartFiles)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		// The stack goes into the returned error, which the error handler
		// logs once as a 5xx; the middleware itself logs nothing.
		LogErrorFunc: func(_ echo.Context, err error, stack []byte) error {
			return &panicError{err: err, stack: string(stack)}
		},
	}))
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection:         "0", // obsolete header; "0" disables the buggy legacy filter
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		ReferrerPolicy:        "same-origin",
		ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
	}))
	// Uploads get their own, larger limit. It must be chosen here, before
	// the CSRF middleware parses the form, or that parse would escape it.
	formLimit, uploadLimit := middleware.BodyLimit(deps.BodyLimit), middleware.BodyLimit(deps.UploadLimit)
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		form, upload := formLimit(next), uploadLimit(next)
		return func(c echo.Context) error {
			if isUpload(c) {
				return upload(c)
			}
			return form(c)
		}
	})
	e.Use(middleware.ContextTimeoutWithConfig(middleware.ContextTimeoutConfig{
		Timeout: deps.RequestTimeout,
		// Server-sent event streams live as long as a run is watched.
		Skipper: func(c echo.Context) bool {
			return strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/event-stream")
		},
	}))

	registerRoutes(e, deps)
	return e
}

// registerRoutes is the one place that lists every route, so the whole URL
// space can be read at a glance. Every GET route but the event stream also
// answers HEAD. Route names let views and tests build URLs
// with e.Reverse instead of hard-coding them.
func registerRoutes(e *echo.Echo, deps Deps) {
	e.GET("/healthz", Healthz).Name = "healthz"
	e.HEAD("/healthz", Healthz)
	if deps.Ready != nil {
		ready := &Ready{checker: deps.Ready}
		e.GET("/readyz", ready.Show).Name = "readyz"
		e.HEAD("/readyz", ready.Show)
	}
	if deps.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(deps.Metrics)).Name = "metrics"
		e.HEAD("/metrics", echo.WrapHandler(deps.Metrics))
	}
	if deps.Engine == nil || deps.Store == nil {
		// Only the error-handling tests build a server without a domain.
		noEngine := func(c echo.Context) error {
			return fault.Errorf(fault.EInternal, "the server has no engine")
		}
		e.GET("/", noEngine).Name = "home"
		e.HEAD("/", noEngine)
	} else {
		registerApp(e, deps)
	}

	assets := newAssets()
	e.GET("/static/:file", assets.Serve).Name = "static"
	e.HEAD("/static/:file", assets.Serve)
}

// Healthz handles GET and HEAD /healthz: it answers 200 "ok" while the
// process can serve requests (liveness), for process supervisors and the
// e2e harness. It checks nothing else; /readyz does.
func Healthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok")
}

// registerApp lists the pages, forms and API routes.
func registerApp(e *echo.Echo, deps Deps) {
	key := deps.SessionKey
	if len(key) == 0 {
		key = randomKey()
	}
	p := newPeople(key, deps.SecureCookies)
	auth := newAuthenticator(deps, p)
	settings := reviewSettings{reasons: deps.ExclusionReasons, stopWindow: deps.StopWindow}
	cache := newRunCache(settings, deps.Engine.Workflow)
	graphs := wfgraph.NewRenderer()
	runs := &Runs{people: p, auth: auth, runs: deps.Store, engine: deps.Engine, cache: cache, done: deps.Done, files: deps.Files, read: deps.ReadLimits, graphs: graphs,
		settings: settings}
	names := &Names{people: p}
	wfs := &Workflows{people: p, registry: deps.Engine.Registry(), dir: deps.WorkflowsDir, opts: deps.DefinitionOptions, graphs: graphs, startable: deps.StartableFiles,
		templates: templatesByName(deps.Templates), engine: deps.Engine, runs: deps.Store, done: deps.Done, triggers: deps.Triggers}
	api := &API{runs: deps.Store, engine: deps.Engine, cache: cache, files: deps.Files}
	// CSRF guards every app route (GETs get the session's token, unsafe
	// methods must come from this origin and echo it back); it is per
	// route rather than global so that routing misses still answer
	// 404/405 (see csrfRoutes).
	wfs.auth = auth
	home := &Home{people: p, runs: deps.Store, engine: deps.Engine, auth: auth}
	g := newCSRFRoutes(e, newCSRFCheck(p, csrfSkipper, deps.PublicURL).middleware, auth)
	view, decide, startRuns := onRun(access.View), onRun(access.Decide), onRun(access.Start)

	pages := &Auth{a: auth}
	g.GET("/setup", pages.ShowSetup, anyone).Name = "setup"
	g.POST("/setup", pages.Setup, anyone).Name = "setup-save"
	g.GET("/login", pages.ShowLogin, anyone).Name = "login"
	g.POST("/login", pages.Login, anyone).Name = "login-save"
	g.POST("/logout", pages.Logout, anyone).Name = "logout"
	sso := newOIDC(auth, deps.OIDC)
	g.GET("/login/oidc", sso.Start, anyone).Name = "login-oidc"
	g.GET("/login/oidc/callback", sso.Callback, anyone).Name = "login-oidc-callback"
	g.GET("/account", pages.ShowAccount, signedIn).Name = "account"
	g.POST("/account/tokens", pages.CreateToken, signedIn).Name = "account-token-create"
	g.POST("/account/tokens/:token/revoke", pages.RevokeToken, signedIn).Name = "account-token-revoke"
	g.POST("/account/sessions/revoke", pages.RevokeSessions, signedIn).Name = "account-sessions-revoke"

	teams := &Teams{a: auth}
	viewProject, manage := inProject(access.View), inProject(access.Manage)
	g.GET("/projects", teams.ListProjects, signedIn).Name = "projects"
	g.POST("/projects", teams.CreateProject, signedIn, teams.accountsOnly).Name = "project-create"
	g.GET("/projects/:project", teams.ShowProject, viewProject, teams.accountsOnly).Name = "project"
	g.POST("/projects/:project/members", teams.AddMember, manage, teams.accountsOnly).Name = "member-add"
	g.POST("/projects/:project/members/:account/role", teams.ChangeRole, manage, teams.accountsOnly).Name = "member-role"
	g.POST("/projects/:project/members/:account/remove", teams.RemoveMember, manage, teams.accountsOnly).Name = "member-remove"
	g.POST("/projects/:project/invitations", teams.CreateInvitation, manage, teams.accountsOnly).Name = "invitation-create"
	g.POST("/projects/:project/invitations/:invitation/revoke", teams.RevokeInvitation, manage, teams.accountsOnly).Name = "invitation-revoke"
	g.POST("/projects/:project/links", teams.CreateLink, manage, teams.accountsOnly).Name = "share-link-create"
	g.POST("/projects/:project/links/:link/revoke", teams.RevokeLink, manage, teams.accountsOnly).Name = "share-link-revoke"
	g.GET("/projects/:project/audit", teams.ProjectAudit, manage, teams.accountsOnly).Name = "project-audit"
	g.GET("/projects/:project/audit.csv", teams.ProjectAuditCSV, manage, teams.accountsOnly).Name = "project-audit-export"
	g.GET("/invite/:token", teams.ShowInvite, anyone, teams.accountsOnly).Name = "invite"
	g.POST("/invite/:token", teams.AcceptInvite, anyone, teams.accountsOnly).Name = "invite-accept"
	g.GET("/reset/:token", teams.ShowReset, anyone, teams.accountsOnly).Name = "reset"
	g.POST("/reset/:token", teams.Reset, anyone, teams.accountsOnly).Name = "reset-save"
	g.GET("/s/:token", teams.OpenLink, anyone, teams.accountsOnly).Name = "share-link-open"
	g.GET("/admin/accounts", teams.ShowAccounts, admins, teams.accountsOnly).Name = "admin-accounts"
	g.POST("/admin/invitations", teams.Invite, admins, teams.accountsOnly).Name = "admin-invitation-create"
	g.POST("/admin/invitations/:invitation/revoke", teams.RevokeInstallationInvitation, admins, teams.accountsOnly).Name = "admin-invitation-revoke"
	g.POST("/admin/accounts/:account/reset", teams.ResetLink, admins, teams.accountsOnly).Name = "admin-reset-link"
	g.POST("/admin/accounts/:account/disable", teams.Disable, admins, teams.accountsOnly).Name = "admin-account-disable"
	g.POST("/admin/accounts/:account/enable", teams.Enable, admins, teams.accountsOnly).Name = "admin-account-enable"
	g.POST("/admin/accounts/:account/admin", teams.SetAdmin, admins, teams.accountsOnly).Name = "admin-account-admin"
	g.GET("/admin/audit", teams.InstallationAudit, admins, teams.accountsOnly).Name = "admin-audit"
	g.GET("/admin/audit.csv", teams.InstallationAuditCSV, admins, teams.accountsOnly).Name = "admin-audit-export"

	g.GET("/", home.Show, signedIn, p.requireName).Name = "home"
	g.POSTOrRetry("/runs", home.Start, home.StartAgain, inProject(access.Start), p.requireName).Name = "run-start"
	g.GET("/name", names.Show, anyone).Name = "name"
	g.POST("/name", names.Save, anyone).Name = "name-save"
	g.GET("/inbox", (&Inbox{people: p, runs: deps.Store, auth: auth}).Show, signedIn, p.requireName).Name = "inbox"
	g.GET("/runs", (&RunIndex{people: p, runs: deps.Store, auth: auth}).Show, visitors, p.requireName).Name = "runs"
	g.GET("/runs/:id", runs.Show, view, p.requireName).Name = "run"
	g.GET("/runs/:id/status", runs.Status, view).Name = "run-status"
	g.Stream("/runs/:id/events", runs.Events, view).Name = "run-events"
	g.GET("/runs/:id/report.md", runs.ReportMarkdown, view).Name = "run-report-md"
	g.GET("/runs/:id/report.csv", runs.ReportCSV, view).Name = "run-report-csv"
	g.GET("/runs/:id/prisma.svg", runs.PrismaSVG, view).Name = "run-prisma-svg"
	g.GET("/runs/:id/progress.svg", runs.ProgressSVG, view).Name = "run-progress-svg"
	g.GET("/runs/:id/graph.svg", runs.GraphSVG, view).Name = "run-graph-svg"
	g.GET("/runs/:id/conflicts", runs.Conflicts, view, p.requireName).Name = "run-conflicts"
	g.GET("/runs/:id/agreement.csv", runs.AgreementCSV, view).Name = "run-agreement-csv"
	g.POST("/runs/:id/checkpoints/:cp/resolve", runs.Resolve, decide, p.requireName).Name = "review-resolve"
	g.POST("/runs/:id/checkpoints/:cp/strategy", runs.DecideStrategy, decide, p.requireName).Name = "decide-strategy"
	g.POST("/runs/:id/checkpoints/:cp/review", runs.DecideReview, decide, p.requireName).Name = "decide-review"
	g.POST("/runs/:id/checkpoints/:cp/clarify", runs.DecideClarify, decide, p.requireName).Name = "decide-clarify"
	g.POST("/runs/:id/checkpoints/:cp/escalation", runs.DecideEscalation, decide, p.requireName).Name = "decide-escalation"
	g.POST("/runs/:id/checkpoints/:cp/gate", runs.DecideGate, decide, p.requireName).Name = "decide-gate"
	g.POST("/runs/:id/fork", runs.Fork, startRuns, p.requireName).Name = "run-fork"
	g.GET("/runs/:id/checkpoints/:cp/votes", runs.GateVotes, view).Name = "gate-votes"
	g.POST("/runs/:id/checkpoints/:cp/marks", runs.SaveMarks, decide, p.requireName).Name = "review-marks"
	g.POST("/runs/:id/checkpoints/:cp/more", runs.ShowMore, decide, p.requireName).Name = "review-more"
	g.POST("/runs/:id/checkpoints/:cp/rest", runs.MarkRest, decide, p.requireName).Name = "review-mark-rest"
	g.POST("/runs/:id/checkpoints/:cp/rest/undo", runs.UndoRest, decide, p.requireName).Name = "review-mark-rest-undo"
	for _, kind := range []string{"strategy", "clarify", "review", "escalation", "gate", "more", "rest", "rest/undo"} {
		g.GET("/runs/:id/checkpoints/:cp/"+kind, runs.ToRunPage, view)
	}
	g.GET("/workflows", wfs.List, signedIn).Name = "workflows"
	g.POST("/workflows/:name/runs", wfs.Start, inProject(access.Start), p.requireName).Name = "workflow-start"
	if deps.Library != nil && deps.Imports != nil {
		lib := &Library{people: p, store: deps.Library, jobs: deps.Imports, read: deps.ReadLimits, embedding: deps.Embedding, auth: auth}
		g.GET("/library", lib.Show, signedIn, p.requireName).Name = "library"
		// The library is the installation's: its administrators import
		// into it, a project's owners into it and their project's
		// library selection (the handlers check which).
		g.POST("/library/imports", lib.Import, signedIn, p.requireName).Name = "library-import"
		g.GET("/library/imports/:id", lib.ImportStatus, signedIn, p.requireName).Name = "library-import-status"
		g.POST("/projects/:project/selection", lib.Select, inProject(access.Manage), p.requireName).Name = "library-selection"
		g.GET("/library/export", lib.Export, signedIn).Name = "library-export"
		g.GET("/library/embeddings", lib.Embeddings, signedIn, p.requireName).Name = "library-embeddings"
		g.GET("/library/papers/*", lib.Paper, signedIn, p.requireName).Name = "library-paper"
	}

	g.GET("/api/workflows", wfs.API, signedIn).Name = "api-workflows"
	g.GET("/api/workflows/:name", wfs.APIOne, signedIn).Name = "api-workflow"
	g.POST("/api/runs", api.CreateRun, inProject(access.Start)).Name = "api-run-create"
	g.POST("/api/workflows/:name/runs", api.StartWorkflow, inProject(access.Start)).Name = "api-workflow-start"
	g.GET("/api/runs/:id", api.GetRun, view).Name = "api-run"
	g.POST("/api/runs/:id/decisions", api.Decide, decide).Name = "api-decide"
	g.POST("/api/runs/:id/fork", api.Fork, startRuns).Name = "api-run-fork"
	g.GET("/api/runs/:id/marks", api.Marks, view).Name = "api-run-marks"
	g.PUT("/api/runs/:id/marks/*", api.PutMark, decide).Name = "api-run-mark"
	g.POST("/api/runs/:id/checkpoints/:cp/more", api.ShowMore, decide).Name = "api-run-more"
	g.GET("/api/runs/:id/export", (&Export{runs: deps.Store}).Run, view).Name = "api-run-export"
	if deps.Triggers != nil {
		// Not a csrfRoutes route: callers are other servers, and the
		// trigger's token authenticates them.
		trig := &Triggers{engine: deps.Engine, store: deps.Triggers}
		e.POST("/api/triggers/:workflow/:name", trig.Fire, middleware.BodyLimit(TriggerBodyLimit)).Name = "api-trigger"
	}
}

// isUpload reports whether the request is a file upload, which gets the
// upload limit instead of the form limit.
func isUpload(c echo.Context) bool {
	r := c.Request()
	return r.Method == http.MethodPost && (r.URL.Path == "/library/imports" || strategyPost.MatchString(r.URL.Path))
}

// strategyPost is the strategy form's action, which can carry a file.
var strategyPost = regexp.MustCompile(`^/runs/[^/]+/checkpoints/[^/]+/strategy$`)
