package handlers

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// AccountStore keeps accounts, sessions, projects and what they may do;
// *store.Store implements it.
type AccountStore interface {
	AccountCount(ctx context.Context) (int, error)
	CreateFirstAdmin(ctx context.Context, a store.Account, p store.Project) error
	Account(ctx context.Context, id string) (store.Account, error)
	AccountByEmail(ctx context.Context, email string) (store.Account, error)
	// AccountByOIDC, SetOIDC and CreateAccount serve single sign-on.
	AccountByOIDC(ctx context.Context, issuer, subject string) (store.Account, error)
	SetOIDC(ctx context.Context, accountID, issuer, subject string) error
	CreateAccount(ctx context.Context, a store.Account) error
	CreateSession(ctx context.Context, idHash string, sess store.Session) error
	SessionAccount(ctx context.Context, idHash string, now time.Time) (store.Account, error)
	DeleteSession(ctx context.Context, idHash string) error
	DeleteSessions(ctx context.Context, accountID string) (int, error)
	Sessions(ctx context.Context, accountID string) ([]store.SessionInfo, error)
	LoginFailures(ctx context.Context, keys []string, since time.Time) (map[string][]time.Time, error)
	RecordLoginFailure(ctx context.Context, keys []string, at time.Time) error
	ClearLoginFailures(ctx context.Context, key string) error
	AccountProjects(ctx context.Context, accountID string) ([]store.ProjectRole, error)
	Projects(ctx context.Context) ([]store.Project, error)
	Role(ctx context.Context, projectID, accountID string) (string, error)
	RunProject(ctx context.Context, runID string) (string, error)
	CreateAPIToken(ctx context.Context, t store.APIToken, tokenHash string) error
	APITokens(ctx context.Context, accountID string) ([]store.APIToken, error)
	RevokeAPIToken(ctx context.Context, accountID, id string) error
	APITokenAccount(ctx context.Context, tokenHash string, now time.Time) (store.Account, error)
	ShareLink(ctx context.Context, id string) (store.ShareLink, error)
	Audit(ctx context.Context, e store.AuditEntry) error

	// Projects, members, invitations, share links, administration and the
	// audit log (projects.go, invitations.go, sharelinks.go, admin.go,
	// audit.go).
	Accounts(ctx context.Context) ([]store.Account, error)
	SetAccountDisabled(ctx context.Context, accountID string, disabled bool) error
	SetAdmin(ctx context.Context, accountID string, admin bool) error
	CreateProject(ctx context.Context, p store.Project, ownerID string) error
	Project(ctx context.Context, id string) (store.Project, error)
	Members(ctx context.Context, projectID string) ([]store.Member, error)
	SetMember(ctx context.Context, projectID, accountID, role string) error
	RemoveMember(ctx context.Context, projectID, accountID string) error
	CreateInvitation(ctx context.Context, inv store.Invitation) error
	Invitation(ctx context.Context, tokenHash string, now time.Time) (store.Invitation, error)
	Invitations(ctx context.Context, projectID string) ([]store.Invitation, error)
	RevokeInvitation(ctx context.Context, tokenHash string) error
	AcceptInvite(ctx context.Context, tokenHash string, a store.Account, now time.Time) error
	AcceptReset(ctx context.Context, tokenHash, passwordHash string, now time.Time) (store.Account, error)
	CreateShareLink(ctx context.Context, l store.ShareLink, tokenHash string) error
	ShareLinks(ctx context.Context, projectID string) ([]store.ShareLink, error)
	RevokeShareLink(ctx context.Context, projectID, id string) error
	ShareLinkByToken(ctx context.Context, tokenHash string) (store.ShareLink, error)
	AuditLog(ctx context.Context, f store.AuditFilter) ([]store.AuditEntry, error)
}

// identity is who makes a request, as the authenticate middleware found
// them: in open mode a browser with a typed name; otherwise a signed-in
// account (by session cookie or API token), a share link's guest, or
// nobody.
type identity struct {
	open     bool
	account  *store.Account
	viaToken bool
	guest    *store.ShareLink
	// name is what decisions, marks and votes record as their author.
	name string
}

// signedIn reports whether the request comes from an account.
func (id identity) signedIn() bool { return id.account != nil }

// identityKey is where authenticate leaves the request's identity.
const identityKey = "identity"

// projectKey is where a project rule leaves the project it checked.
const projectKey = "project"

// Session keys of the accounts mode.
const (
	// keySID is the session's token; the database keeps only its hash.
	keySID = "sid"
	// keyGuest is the share link a guest opened (its ID).
	keyGuest = "guest"
)

// sessionTTL is how long a sign-in lasts without being used.
const sessionTTL = 30 * 24 * time.Hour

// authenticator finds who makes each request and checks each route's rule.
type authenticator struct {
	open     bool
	people   *people
	accounts AccountStore
	hasher   access.Hasher
	throttle access.Throttle
	now      func() time.Time
	// sso labels the sign-in page's single-sign-on link ("" for none).
	sso string
	// installed turns true once the installation has an account, so
	// requests stop asking the database whether the first visit is due.
	installed atomic.Bool
	// names are the routes' names by method and path (routeName).
	namesOnce sync.Once
	names     map[string]string
}

// newAuthenticator builds the authenticator deps describe.
func newAuthenticator(deps Deps, p *people) *authenticator {
	h := deps.Hasher
	if h == (access.Hasher{}) {
		h = access.DefaultHasher()
	}
	a := &authenticator{open: deps.OpenMode || deps.Accounts == nil, people: p, accounts: deps.Accounts,
		hasher: h, throttle: access.DefaultThrottle(), now: time.Now}
	if deps.OIDC != nil && deps.OIDC.Issuer != "" {
		a.sso = deps.OIDC.Label
	}
	return a
}

// identityOf returns the request's identity (set by authenticate).
func identityOf(c echo.Context) identity {
	id, _ := c.Get(identityKey).(identity)
	return id
}

// projectOf returns the project the route's rule checked ("" for none).
func projectOf(c echo.Context) string {
	p, _ := c.Get(projectKey).(string)
	return p
}

// authenticate is the middleware on every app route that finds who is
// asking; it refuses nothing by itself (the route's rule does) except an
// API token that is not a live one, which is a 401 rather than "nobody".
func (a *authenticator) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := a.identify(c)
		if err != nil {
			return err
		}
		c.Set(identityKey, id)
		return next(c)
	}
}

func (a *authenticator) identify(c echo.Context) (identity, error) {
	if a.open {
		return identity{open: true, name: a.people.typedName(c)}, nil
	}
	ctx := c.Request().Context()
	if h := c.Request().Header.Get(echo.HeaderAuthorization); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			return identity{}, fault.Errorf(fault.EUnauthenticated, "the Authorization header must be \"Bearer\" and an API token")
		}
		acct, err := a.accounts.APITokenAccount(ctx, access.HashToken(strings.TrimSpace(token)), a.now())
		if err != nil {
			return identity{}, err
		}
		return identity{account: &acct, viaToken: true, name: acct.Name}, nil
	}
	s := a.people.session(c)
	if sid, _ := s.Values[keySID].(string); sid != "" {
		acct, err := a.accounts.SessionAccount(ctx, access.HashToken(sid), a.now())
		switch {
		case err == nil:
			return identity{account: &acct, name: acct.Name}, nil
		case fault.ErrorCode(err) != fault.EUnauthenticated:
			return identity{}, err
		}
	}
	if linkID, _ := s.Values[keyGuest].(string); linkID != "" {
		link, err := a.accounts.ShareLink(ctx, linkID)
		if err == nil && link.RevokedAt.IsZero() {
			return identity{guest: &link, name: guestName(cmp.Or(link.GuestName, a.people.typedName(c)))}, nil
		}
	}
	return identity{}, nil
}

// guestName is what a share link's guest's decisions and marks record:
// the name they (or the link) give, marked as a guest's, so that no guest
// can pass for a member of the same name (a gate asking for reviewers
// looks members up by name).
func guestName(name string) string {
	if name = strings.TrimSpace(name); name == "" {
		return ""
	}
	return name + access.GuestSuffix
}

// ruleKind is what a route asks of the person requesting it.
type ruleKind int

const (
	rulePublic   ruleKind = iota // anyone, signed in or not
	ruleSignedIn                 // any account (or anyone in open mode)
	ruleAdmin                    // an administrator
	ruleRun                      // a permission on the run named by :id
	ruleProject                  // a permission on the request's project
	ruleVisitor                  // any account, or a share link's guest
)

// rule is a route's access rule; every app route has one (csrfRoutes
// takes it), so none is reachable by forgetting.
type rule struct {
	kind ruleKind
	perm access.Permission
}

var (
	anyone   = rule{kind: rulePublic}
	signedIn = rule{kind: ruleSignedIn}
	admins   = rule{kind: ruleAdmin}
	// visitors are accounts and guests: pages that list only what the
	// person may see (the run list shows a guest their link's runs).
	visitors = rule{kind: ruleVisitor}
)

// onRun is the rule of a route about one run: a member of the run's
// project whose role grants perm (a guest's link must cover the run).
func onRun(perm access.Permission) rule { return rule{kind: ruleRun, perm: perm} }

// inProject is the rule of a route acting in a project (named by the
// :project parameter, the "project" form or query value, or else the
// person's first project that grants perm).
func inProject(perm access.Permission) rule { return rule{kind: ruleProject, perm: perm} }

// require is the middleware enforcing r.
func (a *authenticator) require(r rule) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := a.check(c, r); err != nil {
				return err
			}
			return next(c)
		}
	}
}

func (a *authenticator) check(c echo.Context, r rule) error {
	id := identityOf(c)
	if r.kind == rulePublic || id.open {
		return nil
	}
	ctx := c.Request().Context()
	if id.account == nil && id.guest == nil {
		if err := a.firstVisit(c); err != nil {
			return err
		}
		return fault.Errorf(fault.EUnauthenticated, "sign in first")
	}
	switch r.kind {
	case ruleSignedIn:
		if id.account == nil {
			return fault.Errorf(fault.EUnauthorized, "this page is for signed-in members; a share link opens only what it shares")
		}
		return nil
	case ruleVisitor:
		return nil
	case ruleAdmin:
		if id.account == nil || !id.account.Admin {
			return fault.Errorf(fault.EUnauthorized, "only an administrator may do this")
		}
		return nil
	case ruleRun:
		runID := c.Param("id")
		project, err := a.accounts.RunProject(ctx, runID)
		if err != nil {
			return err
		}
		if err := a.allowed(ctx, id, project, runID, r.perm); err != nil {
			if fault.ErrorCode(err) == fault.ENotFound {
				return fault.Errorf(fault.ENotFound, "no run %q", runID)
			}
			return err
		}
		c.Set(projectKey, project)
		return nil
	case ruleProject:
		project, err := a.requestProject(c, id, r.perm)
		if err != nil {
			return err
		}
		if err := a.allowed(ctx, id, project, "", r.perm); err != nil {
			return err
		}
		c.Set(projectKey, project)
		return nil
	}
	return fault.Errorf(fault.EInternal, "route has an unknown access rule")
}

// allowed says whether id may use perm on project (and on run, when not
// ""): not a member (or a link that does not cover it) is ENotFound, so
// nobody learns what exists by guessing IDs; a member whose role does not
// grant perm is EUnauthorized.
func (a *authenticator) allowed(ctx context.Context, id identity, project, run string, perm access.Permission) error {
	if id.guest != nil {
		l := id.guest
		if project == "" || l.ProjectID != project || (l.RunID != "" && l.RunID != run) {
			return fault.Errorf(fault.ENotFound, "not found")
		}
		if perm == access.View || (perm == access.Decide && l.Capability == string(access.Decide)) {
			return nil
		}
		return fault.Errorf(fault.EUnauthorized, "this share link lets you %s, not %s", l.Capability, perm)
	}
	if id.account.Admin {
		return nil
	}
	if project == "" {
		return fault.Errorf(fault.ENotFound, "not found")
	}
	role, err := a.accounts.Role(ctx, project, id.account.ID)
	if err != nil {
		return err
	}
	if role == "" {
		return fault.Errorf(fault.ENotFound, "not found")
	}
	if !access.Role(role).Can(perm) {
		return fault.Errorf(fault.EUnauthorized, "as a %s of this project you may not %s", role, perm)
	}
	return nil
}

// may checks, inside a handler, that the request's person has perm in
// project (anyone may in open mode): for routes whose project is known
// only once the handler has read what it acts on (an import job's).
func (a *authenticator) may(c echo.Context, project string, perm access.Permission) error {
	id := identityOf(c)
	switch {
	case id.open:
		return nil
	case id.account == nil && id.guest == nil:
		return fault.Errorf(fault.EUnauthenticated, "sign in first")
	}
	return a.allowed(c.Request().Context(), id, project, "", perm)
}

// isAdmin reports whether the request's person administers the
// installation (everyone does in open mode).
func isAdmin(c echo.Context) bool {
	id := identityOf(c)
	return id.open || (id.account != nil && id.account.Admin)
}

// requestProject is the project a project route acts in.
func (a *authenticator) requestProject(c echo.Context, id identity, perm access.Permission) (string, error) {
	if p := c.Param("project"); p != "" {
		return p, nil
	}
	if p := strings.TrimSpace(c.FormValue("project")); p != "" {
		return p, nil
	}
	if id.guest != nil {
		return id.guest.ProjectID, nil
	}
	projects, err := a.accounts.AccountProjects(c.Request().Context(), id.account.ID)
	if err != nil {
		return "", err
	}
	for _, p := range projects {
		if access.Role(p.Role).Can(perm) {
			return p.ID, nil
		}
	}
	if id.account.Admin {
		all, err := a.accounts.Projects(c.Request().Context())
		if err != nil {
			return "", err
		}
		if len(all) > 0 {
			return all[0].ID, nil
		}
	}
	return "", fault.Errorf(fault.EUnauthorized, "you are in no project that lets you %s; ask a project owner to invite you", perm)
}

// firstVisit sends the first visitor of an installation without accounts
// to the form that creates its administrator.
func (a *authenticator) firstVisit(c echo.Context) error {
	if a.installed.Load() {
		return nil
	}
	n, err := a.accounts.AccountCount(c.Request().Context())
	if err != nil {
		return err
	}
	if n > 0 {
		a.installed.Store(true)
		return nil
	}
	return &redirectError{to: "/setup"}
}

// redirectError is a refusal answered by sending a browser elsewhere (a
// page) or by its status (an API call).
type redirectError struct{ to string }

func (e *redirectError) Error() string { return "redirect to " + e.to }

// Unwrap is what an API call gets instead of the redirect.
func (e *redirectError) Unwrap() error {
	return fault.Errorf(fault.EUnauthenticated, "this installation has no account yet: open it in a browser to create its administrator")
}

// address is where a request came from, for the audit log and throttling.
func address(c echo.Context) string { return c.RealIP() }

// audit records an event, best effort: a failure to record is logged by
// the caller's error path only when the action itself failed.
func (a *authenticator) audit(c echo.Context, action, project, target, detail string) {
	id := identityOf(c)
	e := store.AuditEntry{Action: action, ProjectID: project, Target: target, Address: address(c), Detail: detail, Actor: id.name}
	if id.account != nil {
		e.ActorID = id.account.ID
	}
	if id.guest != nil {
		e.ActorID = "link:" + id.guest.ID
	}
	_ = a.accounts.Audit(context.WithoutCancel(c.Request().Context()), e)
	c.Set(auditedKey, true)
}

// auditedKey marks a request whose handler wrote its own, more telling
// audit entry, so auditWrites does not add a second one.
const auditedKey = "audited"

// auditWrites records every successful state-changing request (and every
// export) with its route's name as the action, so decisions, votes, marks,
// run starts, role changes and exports are all in the log by construction.
func (a *authenticator) auditWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if a.open || err != nil || c.Response().Status >= http.StatusBadRequest {
			return err
		}
		if done, _ := c.Get(auditedKey).(bool); done {
			return nil
		}
		m := c.Request().Method
		if (m == http.MethodGet || m == http.MethodHead) && !exportPath(c.Path()) {
			return nil // reading is not audited, but for exports
		}
		name := a.routeName(c)
		target := c.Param("id")
		if cp := c.Param("cp"); cp != "" {
			target += "/" + cp
		}
		a.audit(c, name, projectOf(c), target, "")
		return nil
	}
}

// exportPath says whether a route's path is an export (a report, a
// CSV, an export of records), the reads the audit log records.
func exportPath(path string) bool {
	return strings.Contains(path, "export") || strings.HasSuffix(path, ".csv") || strings.Contains(path, "report")
}

// routeName is the name of the route the request matched, or its method
// and path; the names are read from echo once, after every route is
// registered (requests come after that).
func (a *authenticator) routeName(c echo.Context) string {
	a.namesOnce.Do(func() {
		a.names = map[string]string{}
		for _, r := range c.Echo().Routes() {
			if r.Name != "" && !strings.Contains(r.Name, "(") { // unnamed routes carry their handler's name
				a.names[r.Method+" "+r.Path] = r.Name
			}
		}
	})
	key := c.Request().Method + " " + c.Path()
	if n, ok := a.names[key]; ok {
		return n
	}
	return key
}

// visibleProjects are the projects whose runs the request may list: nil
// for every project (open mode, administrators), else the person's (a
// guest's: the link's project).
func (a *authenticator) visibleProjects(c echo.Context) ([]string, error) {
	id := identityOf(c)
	switch {
	case id.open || (id.account != nil && id.account.Admin):
		return nil, nil
	case id.guest != nil:
		return []string{id.guest.ProjectID}, nil
	case id.account == nil:
		return []string{}, nil
	}
	projects, err := a.accounts.AccountProjects(c.Request().Context(), id.account.ID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(projects))
	for _, p := range projects {
		ids = append(ids, p.ID)
	}
	return ids, nil
}

// author is who an API call acts as, given what its body names (field is
// the body's field: decided_by, marked_by, started_by). In open mode the
// body says, "api" when it does not; otherwise it is the authenticated
// person, never the body: a body naming someone else is refused.
func author(c echo.Context, field, given string) (string, error) {
	given = strings.TrimSpace(given)
	id := identityOf(c)
	if id.open || (id.account == nil && id.guest == nil) {
		if given == "" {
			return "api", nil
		}
		return given, nil
	}
	if given != "" && given != id.name {
		return "", &fault.Error{Code: fault.EInvalid, Message: "invalid request", Fields: map[string]string{
			field: "is the signed-in person (" + id.name + ") on this installation; leave it out"}}
	}
	return id.name, nil
}
