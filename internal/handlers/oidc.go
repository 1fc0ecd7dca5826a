package handlers

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// OIDCConfig is single sign-on through an OpenID Connect provider
// (internal/app builds it from the QUARRY_OIDC_* settings).
type OIDCConfig struct {
	// Issuer is the provider's issuer URL; its discovery document is read
	// on the first sign-in, not at start, so a provider that is down
	// then does not keep Quarry from starting.
	Issuer string
	// ClientID and ClientSecret are Quarry's registration at the
	// provider; RedirectURL is the callback registered with them.
	ClientID, ClientSecret, RedirectURL string
	// Label names the provider on the sign-in page ("Sign in with …").
	Label string
	// CreateAccounts creates an account for a person the provider signs
	// in (with an e-mail it verified) who has none; false refuses them.
	CreateAccounts bool
}

// Session keys of a single sign-on under way, from the redirect to the
// provider to its callback; the callback removes them, so each is used
// once.
const (
	keyOIDCState    = "oidc_state"
	keyOIDCNonce    = "oidc_nonce"
	keyOIDCVerifier = "oidc_verifier"
	keyOIDCNext     = "oidc_next"
)

// OIDC handles single sign-on: the redirect to the provider and its
// callback, which finds (or links, or creates) the person's account.
type OIDC struct {
	a   *authenticator
	cfg *OIDCConfig // nil: single sign-on is off and its routes are 404s

	mu       sync.Mutex
	provider *oidc.Provider // found on first use; nil until discovery succeeds
}

// newOIDC builds the single-sign-on handlers of cfg (nil for none).
func newOIDC(a *authenticator, cfg *OIDCConfig) *OIDC {
	if cfg != nil && cfg.Issuer == "" {
		cfg = nil
	}
	return &OIDC{a: a, cfg: cfg}
}

// enabled refuses a request when single sign-on is off (or in open mode,
// where there is nobody to sign in as).
func (h *OIDC) enabled() error {
	if h.cfg == nil || h.a.open {
		return fault.Errorf(fault.ENotFound, "this installation has no single sign-on")
	}
	return nil
}

// discover returns the provider, reading its discovery document on first
// use; a failure is not remembered, so the next sign-in tries again.
func (h *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.provider != nil {
		return h.provider, nil
	}
	p, err := oidc.NewProvider(ctx, h.cfg.Issuer)
	if err != nil {
		return nil, &fault.Error{Code: fault.EUnavailable, Err: err,
			Message: "the single-sign-on provider cannot be reached just now: try again shortly, or sign in with your password"}
	}
	h.provider = p
	return p, nil
}

// oauth is the authorization-code flow's configuration at provider p.
func (h *OIDC) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: h.cfg.ClientID, ClientSecret: h.cfg.ClientSecret, RedirectURL: h.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// Start handles GET /login/oidc: it sends the browser to the provider,
// keeping in the session what the callback checks: the state (that the
// answer is to this browser's request), the nonce (that the ID token was
// made for it) and the PKCE verifier (that only this browser can redeem
// the code), and where to go afterwards.
func (h *OIDC) Start(c echo.Context) error {
	if err := h.enabled(); err != nil {
		return err
	}
	p, err := h.discover(c.Request().Context())
	if err != nil {
		return err
	}
	state, nonce, verifier := rand.Text(), rand.Text(), oauth2.GenerateVerifier()
	s := h.a.people.session(c)
	s.Values[keyOIDCState], s.Values[keyOIDCNonce], s.Values[keyOIDCVerifier] = state, nonce, verifier
	s.Values[keyOIDCNext] = safeNext(c.QueryParam("next"))
	if err := h.a.people.save(c, s); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, h.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)))
}

// claims are the ID token's claims Quarry reads. EmailVerified is any:
// some providers send the string "true".
type claims struct {
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"`
	Name          string `json:"name"`
}

func (cl claims) verified() bool {
	switch v := cl.EmailVerified.(type) {
	case bool:
		return v
	case string:
		b, _ := strconv.ParseBool(v)
		return b
	}
	return false
}

// Callback handles GET /login/oidc/callback, where the provider sends the
// browser back: it checks the state, redeems the code with the PKCE
// verifier, verifies the ID token (signature, issuer, audience, expiry,
// nonce) and signs in the identity's account. Every outcome is audited.
func (h *OIDC) Callback(c echo.Context) error {
	if err := h.enabled(); err != nil {
		return err
	}
	s := h.a.people.session(c)
	state, _ := s.Values[keyOIDCState].(string)
	nonce, _ := s.Values[keyOIDCNonce].(string)
	verifier, _ := s.Values[keyOIDCVerifier].(string)
	next, _ := s.Values[keyOIDCNext].(string)
	for _, k := range []string{keyOIDCState, keyOIDCNonce, keyOIDCVerifier, keyOIDCNext} {
		delete(s.Values, k)
	}
	// A sign-in saves the session without the keys; a refusal must too,
	// so that a callback is never answered twice.
	err := h.complete(c, state, nonce, verifier, next)
	if err != nil {
		if serr := h.a.people.save(c, s); serr != nil {
			return serr
		}
	}
	return err
}

// complete is the callback once the session's keys are taken.
func (h *OIDC) complete(c echo.Context, state, nonce, verifier, next string) error {
	if state == "" || c.QueryParam("state") != state {
		h.failed(c, "", "the state does not match")
		return badRequest(fault.Errorf(fault.EInvalid, "this sign-in was not started in this browser, or was used already: sign in again"))
	}
	if e := c.QueryParam("error"); e != "" {
		why := e
		if d := c.QueryParam("error_description"); d != "" {
			why += ": " + truncate(d, 200)
		}
		h.failed(c, "", "the provider refused: "+why)
		return fault.Errorf(fault.EUnauthorized, "the single-sign-on provider did not sign you in (%s)", why)
	}
	ctx := c.Request().Context()
	p, err := h.discover(ctx)
	if err != nil {
		return err
	}
	tok, err := h.oauth(p).Exchange(ctx, c.QueryParam("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		h.failed(c, "", "the code exchange failed")
		if _, refused := errors.AsType[*oauth2.RetrieveError](err); refused {
			return badRequest(&fault.Error{Code: fault.EInvalid, Err: err, Message: "the single-sign-on provider did not accept this sign-in: sign in again"})
		}
		return &fault.Error{Code: fault.EUnavailable, Err: err, Message: "the single-sign-on provider cannot be reached just now: try again shortly"}
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		h.failed(c, "", "no ID token")
		return badRequest(fault.Errorf(fault.EInvalid, "the single-sign-on provider sent no ID token"))
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: h.cfg.ClientID}).Verify(ctx, raw)
	if err != nil {
		h.failed(c, "", "the ID token did not verify")
		return badRequest(&fault.Error{Code: fault.EInvalid, Err: err, Message: "the single-sign-on provider's answer did not verify: sign in again"})
	}
	if idt.Nonce != nonce {
		h.failed(c, idt.Subject, "the ID token's nonce does not match")
		return badRequest(fault.Errorf(fault.EInvalid, "the single-sign-on provider's answer was not made for this sign-in: sign in again"))
	}
	var cl claims
	if err := idt.Claims(&cl); err != nil {
		h.failed(c, idt.Subject, "unreadable claims")
		return badRequest(&fault.Error{Code: fault.EInvalid, Err: err, Message: "the single-sign-on provider's answer is unreadable"})
	}
	acct, err := h.account(c, idt.Issuer, idt.Subject, cl)
	if err != nil {
		return err
	}
	if err := h.a.signIn(c, acct); err != nil {
		return err
	}
	h.a.audit(c, "sign-in", "", acct.ID, "oidc")
	return c.Redirect(http.StatusSeeOther, safeNext(next))
}

// account finds the account of the identity (issuer, subject): the one
// linked to it; else the one with the e-mail the provider verified, if it
// has no identity yet (it is linked now); else a new one, when
// CreateAccounts allows. Disabled accounts and everyone else are refused
// (and audited).
func (h *OIDC) account(c echo.Context, issuer, subject string, cl claims) (store.Account, error) {
	ctx := c.Request().Context()
	acct, err := h.a.accounts.AccountByOIDC(ctx, issuer, subject)
	switch {
	case err == nil:
		return h.usable(c, acct)
	case fault.ErrorCode(err) != fault.ENotFound:
		return acct, err
	}
	email, emailErr := access.NormalizeEmail(cl.Email)
	if cl.Email == "" || emailErr != nil {
		h.failed(c, subject, "no usable e-mail address")
		return acct, fault.Errorf(fault.EUnauthorized, "the single-sign-on provider gave no e-mail address for you, so Quarry cannot tell which account is yours: ask the administrator")
	}
	if !cl.verified() {
		h.failed(c, email, "the provider has not verified the e-mail address")
		return acct, fault.Errorf(fault.EUnauthorized, "no account for %s: the single-sign-on provider has not verified this e-mail address, so it cannot be matched to an account; ask for an invitation", email)
	}
	acct, err = h.a.accounts.AccountByEmail(ctx, email)
	switch {
	case err == nil && acct.OIDCSubject != "":
		h.failed(c, email, "the account is linked to another single-sign-on identity")
		return acct, fault.Errorf(fault.EUnauthorized, "the account of %s signs in through another single-sign-on identity: ask the administrator", email)
	case err == nil:
		if acct.Disabled {
			return h.usable(c, acct)
		}
		if err := h.a.accounts.SetOIDC(ctx, acct.ID, issuer, subject); err != nil {
			return acct, err
		}
		acct.OIDCIssuer, acct.OIDCSubject = issuer, subject
		h.a.audit(c, "account-link-oidc", "", acct.ID, issuer)
		return acct, nil
	case fault.ErrorCode(err) != fault.ENotFound:
		return acct, err
	}
	if !h.cfg.CreateAccounts {
		h.failed(c, email, "no account")
		return acct, fault.Errorf(fault.EUnauthorized, "no account for %s: ask a project owner or the administrator for an invitation", email)
	}
	return h.create(c, issuer, subject, email, cl.Name)
}

// usable refuses a disabled account.
func (h *OIDC) usable(c echo.Context, acct store.Account) (store.Account, error) {
	if acct.Disabled {
		h.failed(c, acct.ID, "the account is disabled")
		return acct, fault.Errorf(fault.EUnauthorized, "your account is disabled: ask the administrator")
	}
	return acct, nil
}

// maxNameTries bounds the " (2)", " (3)"… suffixes tried for a new
// account whose name is taken.
const maxNameTries = 20

// create makes the account of a person the provider signed in: no
// password, no project, not an administrator. Its name is the token's
// (or else the e-mail), with " (2)" and so on when another account has
// it, since decisions record names and two people must not share one.
func (h *OIDC) create(c echo.Context, issuer, subject, email, name string) (store.Account, error) {
	base, err := access.CheckDisplayName(name)
	if err != nil {
		base = truncate(email, access.MaxNameRunes)
	}
	acct := store.Account{ID: engine.NewID(), Email: email, OIDCIssuer: issuer, OIDCSubject: subject, CreatedAt: h.a.now().UTC()}
	for i := 1; i <= maxNameTries; i++ {
		acct.Name = base
		if i > 1 {
			suffix := fmt.Sprintf(" (%d)", i)
			acct.Name = truncate(base, access.MaxNameRunes-len(suffix)) + suffix
		}
		err = h.a.accounts.CreateAccount(c.Request().Context(), acct)
		if _, nameTaken := fault.ErrorFields(err)["name"]; fault.ErrorCode(err) == fault.EConflict && nameTaken {
			continue
		}
		break
	}
	if err != nil {
		h.failed(c, email, "the account could not be created")
		return acct, err
	}
	h.a.audit(c, "account-create", "", acct.ID, "oidc")
	return acct, nil
}

// failed audits a refused single sign-on; who is what is known of the
// person (an e-mail, a subject, an account) and may be "".
func (h *OIDC) failed(c echo.Context, who, reason string) {
	h.a.audit(c, "sign-in-failed", "", who, "oidc: "+strings.TrimSpace(reason))
}
