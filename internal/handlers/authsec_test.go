package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
)

// TestCSRFOnEveryForm: every form route refuses a token minted for
// another session (403), signed in or not, and the refused request
// changes nothing.
func TestCSRFOnEveryForm(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	e := tm.w.app.Handler().(*echo.Echo)
	foreign := tm.token(t, tm.clients["owner"])
	fill := strings.NewReplacer(":id", tm.runID, ":cp", tm.cp, ":name", "search", ":token", "nope", "*", "nope")
	checked := 0
	for _, r := range e.Routes() {
		if (r.Method != http.MethodPost && r.Method != http.MethodPut) || strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		for _, who := range []string{"nobody", "reviewer"} {
			res, err := tm.clients[who].PostForm(tm.w.srv.URL+fill.Replace(r.Path), url.Values{"_csrf": {foreign}})
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusForbidden, res.StatusCode, "%s %s as %s with another session's token", r.Method, r.Path, who)
		}
		checked++
	}
	require.GreaterOrEqual(t, checked, 20, "every form route was tried")
	marks, err := tm.st.Marks(t.Context(), tm.runID)
	require.NoError(t, err)
	require.Empty(t, marks)
}

// TestSessionFixation: signing in always starts a new session. A cookie
// someone obtained (or planted) before the sign-in does not become
// signed in, and the CSRF token changes with the session.
func TestSessionFixation(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	c := noRedirectClient(t)
	_, doc := tm.w.get(t, c, "/login")
	before := csrf(doc)
	u, err := url.Parse(tm.w.srv.URL)
	require.NoError(t, err)
	planted := c.Jar.Cookies(u)
	require.NotEmpty(t, planted)

	res := tm.login(t, c, "reviewer@example.org", teamPassword)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/", res.Header.Get("Location"))
	res, err = c.Get(tm.w.srv.URL + "/account")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "signed in")
	require.NotEqual(t, before, tm.token(t, c), "a new CSRF token with the new session")

	attacker := noRedirectClient(t)
	attacker.Jar.SetCookies(u, planted)
	res, err = attacker.Get(tm.w.srv.URL + "/account")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "the cookie from before the sign-in is not signed in")
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/login"))
}

// TestLoginLockout: after five wrong passwords an account is locked for a
// while, even against the right password (429 with Retry-After); another
// account signing in from the same address is not.
func TestLoginLockout(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	c := noRedirectClient(t)
	for range 5 {
		res := tm.login(t, c, "viewer@example.org", "not the password")
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	}
	res := tm.login(t, c, "viewer@example.org", teamPassword)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	res = tm.login(t, noRedirectClient(t), "owner@example.org", teamPassword)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "another account from the same address signs in")
	// An unknown address fails the same way as a wrong password.
	res = tm.login(t, noRedirectClient(t), "nobody@example.org", teamPassword)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// TestIDOR: a member of another project cannot read or change project A's
// run, its marks, its reports or its export by knowing the run's ID; the
// answer is the same 404 as for a run that does not exist.
func TestIDOR(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	c := tm.clients["outsider"]
	for _, path := range []string{"/runs/" + tm.runID, "/api/runs/" + tm.runID, "/api/runs/" + tm.runID + "/marks",
		"/api/runs/" + tm.runID + "/export", "/runs/" + tm.runID + "/report.csv", "/runs/" + tm.runID + "/report.md"} {
		res, err := c.Get(tm.w.srv.URL + path)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
		res, err = c.Get(tm.w.srv.URL + strings.Replace(path, tm.runID, "no-such-run", 1))
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
	req, err := http.NewRequest(http.MethodPut, tm.w.srv.URL+"/api/runs/"+tm.runID+"/marks/x", strings.NewReader(`{"mark":"relevant"}`))
	require.NoError(t, err)
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	res, err := c.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	// The home page and the run list do not show it either.
	for _, path := range []string{"/", "/runs"} {
		_, doc := tm.w.get(t, c, path)
		require.Zero(t, doc.Find(`[data-run-id="`+tm.runID+`"]`).Length(), path)
	}
	_, doc := tm.w.get(t, tm.clients["viewer"], "/runs")
	require.Equal(t, 1, doc.Find(`[data-run-id="`+tm.runID+`"]`).Length(), "a member sees it")
}

// TestAPITokenRevocation: a token created on the account page opens the
// API as its owner, and stops working the moment it is revoked.
func TestAPITokenRevocation(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	c := tm.clients["reviewer"]
	res, err := c.PostForm(tm.w.srv.URL+"/account/tokens", url.Values{"_csrf": {tm.token(t, c)}, "name": {"my script"}})
	require.NoError(t, err)
	doc, err := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	token := doc.Find(`[data-testid="new-token"] code`).Text()
	require.True(t, strings.HasPrefix(token, "qk_"), token)
	id := doc.Find(`[data-testid="token"]`).AttrOr("data-token-id", "")
	require.NotEmpty(t, id)

	api := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, tm.w.srv.URL+"/api/runs/"+tm.runID, nil)
		require.NoError(t, err)
		req.Header.Set(echo.HeaderAuthorization, "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		if res.StatusCode == http.StatusUnauthorized {
			require.Contains(t, res.Header.Get(echo.HeaderWWWAuthenticate), "Bearer")
		}
		return res.StatusCode
	}
	require.Equal(t, http.StatusOK, api(token))
	require.Equal(t, http.StatusUnauthorized, api(token+"x"))

	// The API acts as the token's owner: decided_by naming someone else is refused.
	req, err := http.NewRequest(http.MethodPost, tm.w.srv.URL+"/api/runs/"+tm.runID+"/decisions",
		strings.NewReader(`{"checkpoint_id":"`+tm.cp+`","action":"approve","decided_by":"Owner"}`))
	require.NoError(t, err)
	req.Header.Set(echo.HeaderAuthorization, "Bearer "+token)
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)

	res, err = c.PostForm(tm.w.srv.URL+"/account/tokens/"+id+"/revoke", url.Values{"_csrf": {tm.token(t, c)}})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, http.StatusUnauthorized, api(token))
}
