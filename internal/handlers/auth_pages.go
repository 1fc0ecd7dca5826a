package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// Auth handles the first visit, signing in and out, and the account page.
type Auth struct {
	a *authenticator
}

// defaultProjectName names the first project when the form leaves it empty.
const defaultProjectName = "My review"

// ShowSetup handles GET /setup: the form that creates the administrator,
// only while the installation has no account.
func (h *Auth) ShowSetup(c echo.Context) error {
	if done, err := h.installed(c); err != nil || done {
		return err
	}
	return render(c, http.StatusOK, views.SetupPage(views.SetupData{Page: h.a.people.page(c), Project: defaultProjectName}))
}

// installed answers a setup request on an installation that has accounts:
// there is nothing to set up, so it sends the browser to sign in.
func (h *Auth) installed(c echo.Context) (bool, error) {
	if h.a.open {
		return true, c.Redirect(http.StatusSeeOther, "/")
	}
	n, err := h.a.accounts.AccountCount(c.Request().Context())
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil
	}
	h.a.installed.Store(true)
	return true, c.Redirect(http.StatusSeeOther, "/login")
}

// Setup handles POST /setup: it creates the administrator and the first
// project (which takes the runs made before accounts), and signs them in.
// Two first visitors racing get one administrator: the other is sent to
// sign in.
func (h *Auth) Setup(c echo.Context) error {
	if done, err := h.installed(c); err != nil || done {
		return err
	}
	d := views.SetupData{Page: h.a.people.page(c), Email: strings.TrimSpace(c.FormValue("email")),
		Name: strings.TrimSpace(c.FormValue("name")), Project: strings.TrimSpace(c.FormValue("project"))}
	fe := fault.FieldErrors{}
	email, err := access.NormalizeEmail(d.Email)
	addFieldErrors(fe, err)
	name, err := access.CheckDisplayName(d.Name)
	addFieldErrors(fe, err)
	password := c.FormValue("password")
	addFieldErrors(fe, access.CheckPassword(password))
	if d.Project == "" {
		d.Project = defaultProjectName
	}
	if len([]rune(d.Project)) > 120 {
		fe.Add("project", "a project's name is at most 120 characters")
	}
	if len(fe) > 0 {
		d.Errors = fe
		return render(c, http.StatusUnprocessableEntity, views.SetupPage(d))
	}
	hash, err := h.a.hasher.Hash(password)
	if err != nil {
		return err
	}
	now := h.a.now().UTC()
	acct := store.Account{ID: engine.NewID(), Email: email, Name: name, PasswordHash: hash, Admin: true, CreatedAt: now}
	project := store.Project{ID: engine.NewID(), Name: d.Project, CreatedBy: acct.ID, CreatedAt: now}
	if err := h.a.accounts.CreateFirstAdmin(c.Request().Context(), acct, project); err != nil {
		if fault.ErrorCode(err) == fault.EConflict {
			return c.Redirect(http.StatusSeeOther, "/login")
		}
		return err
	}
	h.a.installed.Store(true)
	if err := h.a.signIn(c, acct); err != nil {
		return err
	}
	h.a.audit(c, "account-create-admin", project.ID, acct.ID, acct.Email)
	return c.Redirect(http.StatusSeeOther, "/")
}

// addFieldErrors adds an error's per-field messages to fe.
func addFieldErrors(fe fault.FieldErrors, err error) {
	if err == nil {
		return
	}
	fields := fault.ErrorFields(err)
	if len(fields) == 0 {
		fe.Add("form", fault.ErrorMessage(err))
	}
	for k, v := range fields {
		fe.Add(k, v)
	}
}

// ShowLogin handles GET /login.
func (h *Auth) ShowLogin(c echo.Context) error {
	if h.a.open {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	if err := h.a.firstVisit(c); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.LoginPage(views.LoginData{Page: h.a.people.page(c), Next: safeNext(c.QueryParam("next")), SSO: h.a.sso}))
}

// loginFailed is the one message of every failed sign-in, so the form
// does not tell which e-mail addresses have accounts.
const loginFailed = "Wrong e-mail or password."

// Login handles POST /login. Attempts are throttled per account and per
// address (access.Throttle); a locked sign-in answers 429 with
// Retry-After, whether or not the password was right.
func (h *Auth) Login(c echo.Context) error {
	if h.a.open {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	ctx := c.Request().Context()
	d := views.LoginData{Page: h.a.people.page(c), Email: strings.TrimSpace(c.FormValue("email")), Next: safeNext(c.FormValue("next")), SSO: h.a.sso}
	email, emailErr := access.NormalizeEmail(d.Email)
	if emailErr != nil {
		email = strings.ToLower(d.Email)
	}
	now := h.a.now()
	acctKey, addrKey := "account:"+email, "address:"+address(c)
	failures, err := h.a.accounts.LoginFailures(ctx, []string{acctKey, addrKey}, now.Add(-h.a.throttle.Window))
	if err != nil {
		return err
	}
	if locked, wait := h.a.throttle.Check(failures[acctKey], failures[addrKey], now); locked {
		h.a.audit(c, "sign-in-locked", "", email, "")
		secs := int(wait.Round(time.Second) / time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		d.Error = "Too many failed attempts. Try again in " + plural(max(1, (secs+59)/60), "minute") + "."
		return render(c, http.StatusTooManyRequests, views.LoginPage(d))
	}
	password := c.FormValue("password")
	acct, err := h.a.accounts.AccountByEmail(ctx, email)
	ok := false
	switch {
	case err == nil && acct.PasswordHash != "" && !acct.Disabled:
		ok, err = access.VerifyPassword(acct.PasswordHash, password)
		if err != nil {
			return err
		}
	case err == nil || fault.ErrorCode(err) == fault.ENotFound:
		h.a.hasher.Waste(password) // as long as a real check: no account enumeration by timing
	default:
		return err
	}
	if !ok {
		if err := h.a.accounts.RecordLoginFailure(ctx, []string{acctKey, addrKey}, now); err != nil {
			return err
		}
		h.a.audit(c, "sign-in-failed", "", email, "")
		d.Error = loginFailed
		return render(c, http.StatusUnauthorized, views.LoginPage(d))
	}
	if err := h.a.accounts.ClearLoginFailures(ctx, acctKey); err != nil {
		return err
	}
	if err := h.a.signIn(c, acct); err != nil {
		return err
	}
	h.a.audit(c, "sign-in", "", acct.ID, acct.Email)
	return c.Redirect(http.StatusSeeOther, d.Next)
}

// plural writes n and noun, with an s when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// signIn starts a new session for acct. The session token is always new
// (a session is never carried over from before signing in, so nobody can
// fix one in advance), and the CSRF token, the guest link and the typed
// name of the anonymous session go with the old one.
func (a *authenticator) signIn(c echo.Context, acct store.Account) error {
	s := a.people.session(c)
	if old, _ := s.Values[keySID].(string); old != "" {
		if err := a.accounts.DeleteSession(c.Request().Context(), access.HashToken(old)); err != nil {
			return err
		}
	}
	sid, err := access.NewToken("qs_")
	if err != nil {
		return err
	}
	now := a.now().UTC()
	sess := store.Session{AccountID: acct.ID, Address: address(c), Agent: truncate(c.Request().UserAgent(), 200),
		CreatedAt: now, SeenAt: now, ExpiresAt: now.Add(sessionTTL)}
	if err := a.accounts.CreateSession(c.Request().Context(), access.HashToken(sid), sess); err != nil {
		return err
	}
	for _, k := range []string{keyCSRF, keyCSRFUsed, keyGuest, keyName, keyRuns} {
		delete(s.Values, k)
	}
	s.Values[keySID] = sid
	c.Set(identityKey, identity{account: &acct, name: acct.Name})
	return a.people.save(c, s)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Logout handles POST /logout: the session ends here and in the database.
func (h *Auth) Logout(c echo.Context) error {
	s := h.a.people.session(c)
	if sid, _ := s.Values[keySID].(string); sid != "" {
		if err := h.a.accounts.DeleteSession(c.Request().Context(), access.HashToken(sid)); err != nil {
			return err
		}
		h.a.audit(c, "sign-out", "", "", "")
	}
	for k := range s.Values {
		delete(s.Values, k)
	}
	if err := h.a.people.save(c, s); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/") // which asks to sign in again
}

// ShowAccount handles GET /account.
func (h *Auth) ShowAccount(c echo.Context) error {
	return h.renderAccount(c, http.StatusOK, "", nil)
}

func (h *Auth) renderAccount(c echo.Context, status int, newToken string, errs map[string]string) error {
	id := identityOf(c)
	d := views.AccountData{Page: h.a.people.page(c), Open: id.open, NewToken: newToken, Errors: errs}
	if id.account != nil {
		ctx := c.Request().Context()
		d.Email, d.Name, d.Admin = id.account.Email, id.account.Name, id.account.Admin
		tokens, err := h.a.accounts.APITokens(ctx, id.account.ID)
		if err != nil {
			return err
		}
		for _, t := range tokens {
			d.Tokens = append(d.Tokens, views.TokenRow{ID: t.ID, Name: t.Name, Prefix: t.Prefix, Created: stamp(t.CreatedAt),
				LastUsed: stamp(t.LastUsedAt), Revoked: !t.RevokedAt.IsZero()})
		}
		sessions, err := h.a.accounts.Sessions(ctx, id.account.ID)
		if err != nil {
			return err
		}
		current := ""
		if sid, _ := h.a.people.session(c).Values[keySID].(string); sid != "" {
			current = access.HashToken(sid)
		}
		for _, s := range sessions {
			d.Sessions = append(d.Sessions, views.SessionRow{ID: s.IDHashPrefix, Address: s.Address, Agent: s.Agent,
				Created: stamp(s.CreatedAt), Seen: stamp(s.SeenAt), Current: current != "" && strings.HasPrefix(current, s.IDHashPrefix)})
		}
	}
	return render(c, status, views.AccountPage(d))
}

// stamp shows a time to the minute, "" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// CreateToken handles POST /account/tokens: a new API token, shown once.
func (h *Auth) CreateToken(c echo.Context) error {
	id := identityOf(c)
	if id.account == nil {
		return fault.Errorf(fault.EUnauthorized, "open mode has no accounts, so no tokens")
	}
	name, err := access.CheckDisplayName(c.FormValue("name"))
	if err != nil {
		return h.renderAccount(c, http.StatusUnprocessableEntity, "", fault.ErrorFields(err))
	}
	token, err := access.NewToken("qk_")
	if err != nil {
		return err
	}
	t := store.APIToken{ID: engine.NewID(), AccountID: id.account.ID, Name: name, Prefix: access.TokenPrefix(token), CreatedAt: h.a.now().UTC()}
	if err := h.a.accounts.CreateAPIToken(c.Request().Context(), t, access.HashToken(token)); err != nil {
		return err
	}
	return h.renderAccount(c, http.StatusOK, token, nil)
}

// RevokeToken handles POST /account/tokens/:token/revoke.
func (h *Auth) RevokeToken(c echo.Context) error {
	id := identityOf(c)
	if id.account == nil {
		return fault.Errorf(fault.EUnauthorized, "open mode has no accounts, so no tokens")
	}
	if err := h.a.accounts.RevokeAPIToken(c.Request().Context(), id.account.ID, c.Param("token")); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/account")
}

// RevokeSessions handles POST /account/sessions/revoke: every session of
// the account ends, this one too.
func (h *Auth) RevokeSessions(c echo.Context) error {
	id := identityOf(c)
	if id.account == nil {
		return fault.Errorf(fault.EUnauthorized, "open mode has no accounts, so no sessions")
	}
	if _, err := h.a.accounts.DeleteSessions(c.Request().Context(), id.account.ID); err != nil {
		return err
	}
	h.a.audit(c, "sign-out-everywhere", "", id.account.ID, "")
	return c.Redirect(http.StatusSeeOther, "/") // which asks to sign in again
}
