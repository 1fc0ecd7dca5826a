package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/access"
	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// Who may use a route (see the authorization matrix below).
const (
	public       = "public"         // anyone, signed in or not
	member       = "signed-in"      // any account
	adminOnly    = "admin"          // administrators
	runView      = "run:view"       // members of the run's project (any role)
	runDecide    = "run:decide"     // its owners and reviewers
	runStart     = "run:start"      // its owners and reviewers (forks)
	projectStart = "project:start"  // people with a project that lets them start runs
	projectView  = "project:view"   // members of project A (:project), any role
	projectOwner = "project:manage" // project A's owners
)

// routeAccess is the expected rule of every route; TestAuthorizationMatrix
// fails for a route missing here, so a new route cannot slip in unchecked.
var routeAccess = map[string]string{
	"GET /healthz": public, "GET /readyz": public, "GET /metrics": public, "GET /static/:file": public,
	"POST /api/triggers/:workflow/:name": public, // the trigger's own token authenticates
	"GET /setup":                         public, "POST /setup": public, "GET /login": public, "POST /login": public, "POST /logout": public,
	"GET /name": public, "POST /name": public,
	"GET /login/oidc": public, "GET /login/oidc/callback": public,

	"GET /account": member, "POST /account/tokens": member, "POST /account/tokens/:token/revoke": member,
	"POST /account/sessions/revoke": member,
	"GET /":                         member, "GET /runs": member, "GET /inbox": member, "GET /workflows": member,
	"GET /library": member, "GET /library/export": member, "GET /library/embeddings": member, "GET /library/papers/*": member,
	"GET /api/workflows": member, "GET /api/workflows/:name": member,
	// An import into the library alone is an administrator's (a project
	// owner's names the project: TestProjectLibrarySelection); an
	// import's progress is its project owners' and the administrators',
	// and "nope" is no import, so everyone signed in gets the same 404.
	"POST /library/imports": adminOnly, "GET /library/imports/:id": member,

	"POST /runs": projectStart, "POST /workflows/:name/runs": projectStart,
	"POST /api/runs": projectStart, "POST /api/workflows/:name/runs": projectStart,

	"GET /runs/:id": runView, "GET /runs/:id/conflicts": runView, "GET /runs/:id/agreement.csv": runView,
	"POST /runs/:id/checkpoints/:cp/resolve": runDecide, "GET /runs/:id/status": runView, "GET /runs/:id/events": runView,
	"GET /runs/:id/report.md": runView, "GET /runs/:id/report.csv": runView, "GET /runs/:id/prisma.svg": runView,
	"GET /runs/:id/progress.svg": runView, "GET /runs/:id/graph.svg": runView, "GET /runs/:id/checkpoints/:cp/votes": runView,
	"GET /runs/:id/checkpoints/:cp/strategy": runView, "GET /runs/:id/checkpoints/:cp/clarify": runView,
	"GET /runs/:id/checkpoints/:cp/review": runView, "GET /runs/:id/checkpoints/:cp/escalation": runView,
	"GET /runs/:id/checkpoints/:cp/gate": runView, "GET /runs/:id/checkpoints/:cp/more": runView,
	"GET /runs/:id/checkpoints/:cp/rest": runView, "GET /runs/:id/checkpoints/:cp/rest/undo": runView,
	"GET /api/runs/:id": runView, "GET /api/runs/:id/marks": runView, "GET /api/runs/:id/export": runView,

	"POST /runs/:id/checkpoints/:cp/strategy": runDecide, "POST /runs/:id/checkpoints/:cp/review": runDecide,
	"POST /runs/:id/checkpoints/:cp/clarify": runDecide, "POST /runs/:id/checkpoints/:cp/escalation": runDecide,
	"POST /runs/:id/checkpoints/:cp/gate": runDecide, "POST /runs/:id/checkpoints/:cp/marks": runDecide,
	"POST /runs/:id/checkpoints/:cp/more": runDecide, "POST /runs/:id/checkpoints/:cp/rest": runDecide,
	"POST /runs/:id/checkpoints/:cp/rest/undo": runDecide,
	"POST /api/runs/:id/decisions":             runDecide, "PUT /api/runs/:id/marks/*": runDecide, "POST /api/runs/:id/checkpoints/:cp/more": runDecide,
	"POST /runs/:id/fork": runStart, "POST /api/runs/:id/fork": runStart,

	"GET /invite/:token": public, "POST /invite/:token": public, "GET /reset/:token": public, "POST /reset/:token": public,
	"GET /s/:token": public,
	"GET /projects": member, "POST /projects": member,
	"GET /admin/accounts": adminOnly, "POST /admin/invitations": adminOnly, "POST /admin/invitations/:invitation/revoke": adminOnly, "POST /admin/accounts/:account/reset": adminOnly,
	"POST /admin/accounts/:account/disable": adminOnly, "POST /admin/accounts/:account/enable": adminOnly,
	"POST /admin/accounts/:account/admin": adminOnly, "GET /admin/audit": adminOnly, "GET /admin/audit.csv": adminOnly,
	"GET /projects/:project":          projectView,
	"POST /projects/:project/members": projectOwner, "POST /projects/:project/members/:account/role": projectOwner,
	"POST /projects/:project/members/:account/remove": projectOwner, "POST /projects/:project/invitations": projectOwner,
	"POST /projects/:project/invitations/:invitation/revoke": projectOwner, "POST /projects/:project/links": projectOwner,
	"POST /projects/:project/links/:link/revoke": projectOwner, "GET /projects/:project/audit": projectOwner,
	"GET /projects/:project/audit.csv": projectOwner, "POST /projects/:project/selection": projectOwner,
}

// team is an installation with accounts: project A (the run's) with an
// owner, a reviewer and a viewer besides the administrator (its first
// owner), and project B whose owner is an outsider to A.
type team struct {
	w       *web
	st      *store.Store
	runID   string
	cp      string
	clients map[string]*http.Client // by identity; "nobody" is signed in as no one
}

const teamPassword = "correct horse battery"

func setupTeam(t *testing.T) *team {
	t.Helper()
	return setupTeamWith(t, app.Config{})
}

// setupTeamWith is setupTeam with more of the configuration (workflow
// files, a mail server); its address and database are the test's.
func setupTeamWith(t *testing.T, cfg app.Config) *team {
	t.Helper()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	cfg.Addr, cfg.DB = "127.0.0.1:0", filepath.Join(t.TempDir(), "q.db")
	a, err := newApp(t, context.Background(), cfg, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	st := a.Store()
	ctx := context.Background()
	hash, err := access.DefaultHasher().Hash(teamPassword)
	require.NoError(t, err)
	now := time.Now().UTC()
	account := func(id string) store.Account {
		return store.Account{ID: id, Email: id + "@example.org", Name: strings.ToUpper(id[:1]) + id[1:], PasswordHash: hash, CreatedAt: now}
	}
	require.NoError(t, st.CreateFirstAdmin(ctx, account("admin"), store.Project{ID: "pa", Name: "Project A", CreatedAt: now}))
	for _, id := range []string{"owner", "reviewer", "viewer", "outsider"} {
		require.NoError(t, st.CreateAccount(ctx, account(id)))
	}
	require.NoError(t, st.SetMember(ctx, "pa", "owner", "owner"))
	require.NoError(t, st.SetMember(ctx, "pa", "reviewer", "reviewer"))
	require.NoError(t, st.SetMember(ctx, "pa", "viewer", "viewer"))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "pb", Name: "Project B", CreatedAt: now}, "outsider"))

	run, err := a.Engine().StartAs(ctx, engine.Starter{Project: "pa", By: "Owner"}, "search", map[string]any{"question": "sleep and memory consolidation", "sources": testapp.Sources})
	require.NoError(t, err)
	tm := &team{w: w, st: st, runID: run.ID, clients: map[string]*http.Client{}}
	require.Eventually(t, func() bool {
		r, err := st.Run(ctx, run.ID)
		tm.cp = r.CheckpointID
		return err == nil && r.Status == engine.StatusWaiting
	}, 10*time.Second, 20*time.Millisecond)
	for _, id := range []string{"nobody", "admin", "owner", "reviewer", "viewer", "outsider"} {
		c := noRedirectClient(t)
		if id != "nobody" {
			tm.login(t, c, id+"@example.org", teamPassword)
		}
		tm.clients[id] = c
	}
	return tm
}

// noRedirectClient keeps its cookies and shows redirects as they come.
func noRedirectClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login signs c in through the form and checks it was let in.
func (tm *team) login(t *testing.T, c *http.Client, email, password string) *http.Response {
	t.Helper()
	res, doc := tm.w.get(t, c, "/login")
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, err := c.PostForm(tm.w.srv.URL+"/login", url.Values{"_csrf": {csrf(doc)}, "email": {email}, "password": {password}, "next": {"/"}})
	require.NoError(t, err)
	res.Body.Close()
	return res
}

// token is a fresh CSRF token of c's session.
func (tm *team) token(t *testing.T, c *http.Client) string {
	t.Helper()
	_, doc := tm.w.get(t, c, "/login")
	return csrf(doc)
}

// TestAuthorizationMatrix requests every route as every kind of person and
// checks the answer against the route's rule: a person the rule lets in
// gets what the administrator gets; one it does not is refused with 401
// (nobody: a page sends them to sign in), 403 (a member whose role does
// not allow it) or 404 (another project's member, who must not learn what
// exists). Forms are sent empty with a valid CSRF token, so they are
// refused as invalid after the rule passed and change nothing.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	e := tm.w.app.Handler().(*echo.Echo)
	type route struct{ method, path string }
	var routes []route
	seen := map[route]bool{}
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound || r.Method == http.MethodHead {
			continue
		}
		rt := route{r.Method, r.Path}
		if seen[rt] {
			continue
		}
		seen[rt] = true
		routes = append(routes, rt)
	}
	// Signing out ends sessions the rest of the matrix needs (signing out
	// everywhere ends all of an account's): those routes come last, each
	// asked by a session of its own.
	endsSession := map[string]bool{"/logout": true, "/account/sessions/revoke": true}
	sort.Slice(routes, func(i, j int) bool {
		if endsSession[routes[i].path] != endsSession[routes[j].path] {
			return endsSession[routes[j].path]
		}
		return routes[i].path+routes[i].method < routes[j].path+routes[j].method
	})
	var missing []string
	for _, r := range routes {
		if _, ok := routeAccess[r.method+" "+r.path]; !ok {
			missing = append(missing, r.method+" "+r.path)
		}
	}
	require.Empty(t, missing, "routes without an entry in routeAccess: add each with who may use it")

	// :account, :invitation and :link name nothing, so the changes they
	// would make are refused (404) after the rule let the request in.
	fill := strings.NewReplacer(":id", tm.runID, ":cp", tm.cp, ":name", "search", ":workflow", "search", ":file", "app.css", ":token", "nope", "*", "nope",
		":project", "pa", ":account", "nope", ":invitation", "nope", ":link", "nope")
	do := func(who string, r route) int {
		c := tm.clients[who]
		if endsSession[r.path] {
			c = noRedirectClient(t)
			if who != "nobody" {
				tm.login(t, c, who+"@example.org", teamPassword)
			}
		}
		path := fill.Replace(r.path)
		var body io.Reader
		var ctype string
		switch {
		case r.method == http.MethodGet:
		case strings.HasPrefix(path, "/api/"):
			body, ctype = strings.NewReader(`{}`), echo.MIMEApplicationJSON
		default:
			body, ctype = strings.NewReader(url.Values{"_csrf": {tm.token(t, c)}}.Encode()), echo.MIMEApplicationForm
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, r.method, tm.w.srv.URL+path, body)
		require.NoError(t, err)
		if ctype != "" {
			req.Header.Set(echo.HeaderContentType, ctype)
		}
		res, err := c.Do(req) // returns at the headers: an event stream's status is known then
		require.NoError(t, err, "%s %s as %s", r.method, path, who)
		res.Body.Close()
		if routeAccess[r.method+" "+r.path] != public && res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/login") {
			return http.StatusUnauthorized // a page's way of saying "sign in first"
		}
		return res.StatusCode
	}
	refused := map[int]bool{http.StatusUnauthorized: true, http.StatusForbidden: true, http.StatusNotFound: true}
	for _, r := range routes {
		rule := routeAccess[r.method+" "+r.path]
		want := func(who string) int {
			switch {
			case rule == public:
				return 0
			case who == "nobody":
				return http.StatusUnauthorized
			case who == "admin" || rule == member:
				return -1 // what the administrator gets
			case rule == adminOnly:
				return http.StatusForbidden
			case rule == projectStart:
				if who == "viewer" {
					return http.StatusForbidden
				}
				return -1
			case who == "outsider": // a member of project B asking for A's run or pages
				return http.StatusNotFound
			case rule == projectView:
				return -1
			case rule == projectOwner:
				if who == "owner" {
					return -1
				}
				return http.StatusForbidden
			}
			switch {
			case who == "viewer" && rule != runView:
				return http.StatusForbidden
			}
			return -1
		}
		adminGot := do("admin", r)
		require.False(t, refused[adminGot] && rule != public && adminGot != http.StatusNotFound, "%s %s: the administrator got %d", r.method, r.path, adminGot)
		for _, who := range []string{"nobody", "owner", "reviewer", "viewer", "outsider"} {
			got := do(who, r)
			switch w := want(who); w {
			case 0: // public: a sign-in may fail, a trigger may not exist, but nothing breaks
				require.Less(t, got, 500, "%s %s as %s", r.method, r.path, who)
			case -1:
				require.Equal(t, adminGot, got, "%s %s as %s gets what the administrator gets", r.method, r.path, who)
			default:
				require.Equal(t, w, got, "%s %s as %s", r.method, r.path, who)
			}
		}
	}
}
