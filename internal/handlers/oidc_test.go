package handlers_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/fault"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// fakeIdP is an OpenID Connect provider in its documented formats
// (discovery, JWKS, authorization endpoint, token endpoint with PKCE S256),
// signing RS256 ID tokens with a key of its own. Its next sign-in is as
// the person in claims; tamper, when set, changes the ID token's claims
// (a wrong nonce, audience or issuer).
type fakeIdP struct {
	srv      *httptest.Server
	key      *rsa.PrivateKey
	clientID string
	secret   string

	mu     sync.Mutex
	down   bool           // discovery answers 503
	claims map[string]any // sub, email, email_verified, name of the next sign-in
	tamper func(map[string]any)
	grants map[string]grant // by code
}

// grant is what /authorize was asked, for /token to check.
type grant struct{ nonce, challenge, redirectURI string }

func newFakeIdP(t *testing.T) *fakeIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	p := &fakeIdP{key: key, clientID: "quarry", secret: "s3cret-of-quarry", grants: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// next sets who the next sign-in is, and how its ID token is spoiled.
func (p *fakeIdP) next(claims map[string]any, tamper func(map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims, p.tamper = claims, tamper
}

func (p *fakeIdP) discovery(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, map[string]any{"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize",
		"token_endpoint": p.srv.URL + "/token", "jwks_uri": p.srv.URL + "/jwks", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported": []string{"S256"}})
}

func (p *fakeIdP) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

func (p *fakeIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || !strings.Contains(q.Get("scope"), "openid") {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.grants[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
	p.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *fakeIdP) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	p.mu.Lock()
	g, found := p.grants[r.PostForm.Get("code")]
	delete(p.grants, r.PostForm.Get("code"))
	claims, tamper := maps.Clone(p.claims), p.tamper
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case id != p.clientID || secret != p.secret:
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]string{"error": "invalid_client"})
		return
	case r.PostForm.Get("grant_type") != "authorization_code" || !found || r.PostForm.Get("redirect_uri") != g.redirectURI,
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims["iss"], claims["aud"], claims["nonce"] = p.srv.URL, p.clientID, g.nonce
	claims["iat"], claims["exp"] = now.Unix(), now.Add(5*time.Minute).Unix()
	if tamper != nil {
		tamper(claims)
	}
	payload, _ := json.Marshal(claims)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: p.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	idToken, _ := jws.CompactSerialize()
	writeJSON(w, map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 3600, "id_token": idToken})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ssoBundle is an installation with single sign-on through idp: an
// administrator, Ada (no identity yet, e-mail ada@example.org), Lin
// (linked to idp's subject "sub-lin") and Dee (linked, disabled).
type ssoBundle struct {
	idp *fakeIdP
	srv *httptest.Server
	st  *store.Store
}

func setupSSO(t *testing.T, createAccounts bool) *ssoBundle {
	t.Helper()
	idp := newFakeIdP(t)
	srv := httptest.NewUnstartedServer(nil)
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		PublicURL: "http://" + srv.Listener.Addr().String(),
		OIDC:      app.OIDC{Issuer: idp.srv.URL, ClientID: idp.clientID, ClientSecret: idp.secret, Name: "Example ID", CreateAccounts: createAccounts},
	}, app.WithWorkflows(reg))
	require.NoError(t, err)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(func() { srv.Close(); require.NoError(t, a.Close()) })
	st := a.Store()
	ctx := context.Background()
	require.NoError(t, st.CreateFirstAdmin(ctx, store.Account{ID: "admin", Email: "admin@example.org", Name: "Admin", PasswordHash: "x"},
		store.Project{ID: "pa", Name: "Project A"}))
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "ada", Email: "ada@example.org", Name: "Ada", PasswordHash: "x"}))
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "lin", Email: "lin@example.org", Name: "Lin", OIDCIssuer: idp.srv.URL, OIDCSubject: "sub-lin"}))
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "dee", Email: "dee@example.org", Name: "Dee", OIDCIssuer: idp.srv.URL, OIDCSubject: "sub-dee", Disabled: true}))
	return &ssoBundle{idp: idp, srv: srv, st: st}
}

// browser follows redirects across Quarry and the provider, keeping the
// cookies of both.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// page fetches url with c, following redirects, and parses where it ends.
func page(t *testing.T, c *http.Client, u string) (*http.Response, *goquery.Document) {
	t.Helper()
	res, err := c.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// signIn signs c in through the provider as claims (spoiled by tamper),
// from the sign-in page's link, and returns the page it ends on.
func (b *ssoBundle) signIn(t *testing.T, c *http.Client, claims map[string]any, tamper func(map[string]any)) (*http.Response, *goquery.Document) {
	t.Helper()
	b.idp.next(claims, tamper)
	_, login := page(t, c, b.srv.URL+"/login?next=/runs")
	link, ok := login.Find(`[data-testid="sso-link"]`).Attr("href")
	require.True(t, ok, "the sign-in page offers single sign-on")
	require.Equal(t, "Sign in with Example ID", strings.TrimSpace(login.Find(`[data-testid="sso-link"]`).Text()))
	return page(t, c, b.srv.URL+link)
}

// who is the name c is signed in as on Quarry, "" for nobody.
func (b *ssoBundle) who(t *testing.T, c *http.Client) string {
	t.Helper()
	res, doc := page(t, c, b.srv.URL+"/account")
	if res.Request.URL.Path != "/account" {
		return ""
	}
	return doc.Find(`[data-testid="account-who"] strong`).Text()
}

// audited returns the audit log's installation entries of action, oldest
// first, as "target detail".
func (b *ssoBundle) audited(t *testing.T, action string) []string {
	t.Helper()
	log, err := b.st.AuditLog(context.Background(), store.AuditFilter{Limit: 100})
	require.NoError(t, err)
	var out []string
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Action == action {
			out = append(out, log[i].Target+" "+log[i].Detail)
		}
	}
	return out
}

func person(sub, email string, verified bool, name string) map[string]any {
	return map[string]any{"sub": sub, "email": email, "email_verified": verified, "name": name}
}

// TestOIDCLinkedAccountSignsIn: an identity linked to an account signs it
// in, with a new session, and goes where the sign-in page was asked to.
func TestOIDCLinkedAccountSignsIn(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	c := browser(t)
	res, _ := b.signIn(t, c, person("sub-lin", "lin@elsewhere.example", true, "Lin Elsewhere"), nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "/runs", res.Request.URL.Path, "back to next")
	require.Equal(t, "Lin", b.who(t, c))
	require.Equal(t, []string{"lin oidc"}, b.audited(t, "sign-in"))
}

// TestOIDCLinksVerifiedEmail: a verified e-mail of an account without an
// identity links the identity to it, so the next sign-in finds it by the
// identity alone.
func TestOIDCLinksVerifiedEmail(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	c := browser(t)
	res, _ := b.signIn(t, c, person("sub-ada", "Ada@Example.org", true, "Ada L."), nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "Ada", b.who(t, c))
	acct, err := b.st.AccountByOIDC(context.Background(), b.idp.srv.URL, "sub-ada")
	require.NoError(t, err)
	require.Equal(t, "ada", acct.ID)
	require.Equal(t, "x", acct.PasswordHash, "linking keeps the password")
	require.Equal(t, []string{"ada " + b.idp.srv.URL}, b.audited(t, "account-link-oidc"))

	c2 := browser(t)
	b.signIn(t, c2, person("sub-ada", "ada.new@example.org", true, ""), nil)
	require.Equal(t, "Ada", b.who(t, c2), "found by the identity, whatever the e-mail now says")
}

// TestOIDCUnknownEmailRefused: a person with no account is refused with a
// page naming their e-mail, nothing is created, and the refusal audited.
func TestOIDCUnknownEmailRefused(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	c := browser(t)
	res, doc := b.signIn(t, c, person("sub-new", "new@example.org", true, "Newcomer"), nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	msg := doc.Find(`[data-testid="error-message"]`).Text()
	require.Contains(t, msg, "no account for new@example.org")
	require.Contains(t, msg, "invitation")
	require.Empty(t, b.who(t, c))
	_, err := b.st.AccountByEmail(context.Background(), "new@example.org")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	require.Equal(t, []string{"new@example.org oidc: no account"}, b.audited(t, "sign-in-failed"))
}

// TestOIDCCreatesAccounts: with QUARRY_OIDC_CREATE_ACCOUNTS a person with
// no account gets one, named from the token ("Ada (2)": Ada is taken),
// without a password, a project or administration.
func TestOIDCCreatesAccounts(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, true)
	c := browser(t)
	res, _ := b.signIn(t, c, person("sub-new", "ada@other.example", true, "Ada"), nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "Ada (2)", b.who(t, c))
	ctx := context.Background()
	acct, err := b.st.AccountByOIDC(ctx, b.idp.srv.URL, "sub-new")
	require.NoError(t, err)
	require.Equal(t, "ada@other.example", acct.Email)
	require.Empty(t, acct.PasswordHash)
	require.False(t, acct.Admin)
	projects, err := b.st.AccountProjects(ctx, acct.ID)
	require.NoError(t, err)
	require.Empty(t, projects)
	require.Equal(t, []string{acct.ID + " oidc"}, b.audited(t, "account-create"))

	c2 := browser(t)
	b.signIn(t, c2, person("sub-nameless", "nameless@example.org", true, ""), nil)
	require.Equal(t, "nameless@example.org", b.who(t, c2), "no name: the e-mail")

	c3 := browser(t)
	res, _ = b.signIn(t, c3, person("sub-unverified", "unverified@example.org", false, "Un"), nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "no account is made for an e-mail the provider has not verified")
	require.Empty(t, b.who(t, c3))
}

// TestOIDCUnverifiedEmailNotLinked: an e-mail the provider has not
// verified does not reach the account that has it.
func TestOIDCUnverifiedEmailNotLinked(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	c := browser(t)
	res, _ := b.signIn(t, c, map[string]any{"sub": "sub-mallory", "email": "ada@example.org", "email_verified": false}, nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Empty(t, b.who(t, c))
	res, _ = b.signIn(t, c, map[string]any{"sub": "sub-mallory", "email": "ada@example.org"}, nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "no email_verified claim is not verified")
	acct, err := b.st.Account(context.Background(), "ada")
	require.NoError(t, err)
	require.Empty(t, acct.OIDCSubject, "not linked")
}

// TestOIDCWrongStateRefused: a callback whose state is not the one this
// browser started with (or with none started) signs nobody in.
func TestOIDCWrongStateRefused(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	b.idp.next(person("sub-lin", "lin@example.org", true, "Lin"), nil)
	c := browser(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(b.srv.URL + "/login/oidc")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, err = c.Get(res.Header.Get("Location")) // the provider answers at once
	require.NoError(t, err)
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	q := back.Query()
	q.Set("state", "forged")
	back.RawQuery = q.Encode()
	res, err = c.Get(back.String())
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)

	c.CheckRedirect = nil
	require.Empty(t, b.who(t, c))
	stranger := browser(t)
	res, _ = page(t, stranger, back.String())
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "a callback this browser never started")
	require.Empty(t, b.who(t, stranger))
	require.Len(t, b.audited(t, "sign-in-failed"), 2)
	require.Empty(t, b.audited(t, "sign-in"))
}

// TestOIDCBadTokenRefused: an ID token with another nonce, audience or
// issuer, or already expired, signs nobody in.
func TestOIDCBadTokenRefused(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	for name, tamper := range map[string]func(map[string]any){
		"nonce":    func(cl map[string]any) { cl["nonce"] = "another" },
		"audience": func(cl map[string]any) { cl["aud"] = "someone-else" },
		"issuer":   func(cl map[string]any) { cl["iss"] = "https://impostor.example" },
		"expired":  func(cl map[string]any) { cl["exp"] = time.Now().Add(-time.Hour).Unix() },
	} {
		c := browser(t)
		res, _ := b.signIn(t, c, person("sub-lin", "lin@example.org", true, "Lin"), tamper)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, name)
		require.Empty(t, b.who(t, c), name)
	}
	require.Empty(t, b.audited(t, "sign-in"))
	require.Len(t, b.audited(t, "sign-in-failed"), 4)
}

// TestOIDCDisabledAccountRefused: a disabled account does not sign in,
// by its identity or by its e-mail.
func TestOIDCDisabledAccountRefused(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	c := browser(t)
	res, doc := b.signIn(t, c, person("sub-dee", "dee@example.org", true, "Dee"), nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="error-message"]`).Text(), "disabled")
	require.Empty(t, b.who(t, c))

	ctx := context.Background()
	require.NoError(t, b.st.SetAccountDisabled(ctx, "ada", true))
	res, _ = b.signIn(t, c, person("sub-ada", "ada@example.org", true, "Ada"), nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Empty(t, b.who(t, c))
	acct, err := b.st.Account(ctx, "ada")
	require.NoError(t, err)
	require.Empty(t, acct.OIDCSubject, "a disabled account is not linked either")
}

// TestOIDCProviderDownAtFirst: a provider that cannot be reached answers
// 503 and is asked again on the next sign-in.
func TestOIDCProviderDownAtFirst(t *testing.T) {
	t.Parallel()
	b := setupSSO(t, false)
	b.idp.mu.Lock()
	b.idp.down = true
	b.idp.mu.Unlock()
	c := browser(t)
	res, _ := b.signIn(t, c, person("sub-lin", "lin@example.org", true, "Lin"), nil)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	b.idp.mu.Lock()
	b.idp.down = false
	b.idp.mu.Unlock()
	res, _ = b.signIn(t, c, person("sub-lin", "lin@example.org", true, "Lin"), nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "Lin", b.who(t, c))
}

// TestOIDCOff: without an issuer the sign-in page offers no single
// sign-on and its routes are not found.
func TestOIDCOff(t *testing.T) {
	t.Parallel()
	a, err := newApp(t, context.Background(), app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")})
	require.NoError(t, err)
	w := serveApp(t, a)
	require.NoError(t, a.Store().CreateFirstAdmin(context.Background(), store.Account{ID: "admin", Email: "admin@example.org", Name: "Admin", PasswordHash: "x"},
		store.Project{ID: "pa", Name: "Project A"}))
	c := browser(t)
	res, doc := page(t, c, w.srv.URL+"/login")
	require.Equal(t, "/login", res.Request.URL.Path)
	require.Equal(t, 1, doc.Find(`[data-testid="login-form"]`).Length())
	require.Zero(t, doc.Find(`[data-testid="sso-link"]`).Length())
	for _, path := range []string{"/login/oidc", "/login/oidc/callback?state=x&code=y"} {
		res, _ := page(t, c, w.srv.URL+path)
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
}
