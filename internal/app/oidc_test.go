package app_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/fault"
)

// TestLoadOIDC: the single-sign-on settings come from the environment and
// the file, the secret from the environment only, and the secret is never
// serialised.
func TestLoadOIDC(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	require.NoError(t, err)
	require.Equal(t, app.OIDC{}, cfg.OIDC, "off by default (the button says app.DefaultOIDCName when no name is given)")

	file := configFile(t, `{"oidc":{"issuer":"https://id.example.org/realms/lab","client_id":"quarry","create_accounts":true}}`)
	cfg, err = load(t, map[string]string{"QUARRY_CONFIG": file, "QUARRY_OIDC_CLIENT_SECRET": "oidc-secret-value", "QUARRY_OIDC_NAME": "Lab ID"})
	require.NoError(t, err)
	require.Equal(t, app.OIDC{Issuer: "https://id.example.org/realms/lab", ClientID: "quarry", ClientSecret: "oidc-secret-value",
		Name: "Lab ID", CreateAccounts: true}, cfg.OIDC)
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NotContains(t, string(b), "oidc-secret-value")

	secretInFile := configFile(t, `{"oidc":{"client_secret":"nope"}}`)
	_, err = load(t, map[string]string{"QUARRY_CONFIG": secretInFile})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "the secret is not a file key: %v", err)

	_, err = load(t, map[string]string{"QUARRY_OIDC_ISSUER": "https://id.example.org"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "oidc.client_id")
	require.Contains(t, fault.ErrorFields(err), "oidc.client_secret")
	require.Contains(t, err.Error(), "QUARRY_OIDC_CLIENT_SECRET", "the message names the setting to fix")
}

// TestOIDCValidate: an issuer needs an http(s) URL, a client ID and a
// secret, and accounts to sign in to.
func TestOIDCValidate(t *testing.T) {
	t.Parallel()
	full := app.OIDC{Issuer: "https://id.example.org", ClientID: "quarry", ClientSecret: "s"}
	tests := []struct {
		name       string
		oidc       app.OIDC
		open       bool
		wantFields []string
	}{
		{"Off", app.OIDC{}, false, nil},
		{"Full", full, false, nil},
		{"NoClientID", app.OIDC{Issuer: full.Issuer, ClientSecret: "s"}, false, []string{"oidc.client_id"}},
		{"NoSecret", app.OIDC{Issuer: full.Issuer, ClientID: "quarry"}, false, []string{"oidc.client_secret"}},
		{"NotAURL", app.OIDC{Issuer: "id.example.org", ClientID: "quarry", ClientSecret: "s"}, false, []string{"oidc.issuer"}},
		{"ClientWithoutIssuer", app.OIDC{ClientID: "quarry", ClientSecret: "s"}, false, []string{"oidc.issuer"}},
		{"OpenMode", full, true, []string{"oidc.issuer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := app.Config{Addr: "127.0.0.1:0", DB: "q.db", OIDC: tt.oidc, OpenMode: tt.open}.Validate()
			if tt.wantFields == nil {
				require.NoError(t, err)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			var got []string
			for f := range fault.ErrorFields(err) {
				got = append(got, f)
			}
			require.ElementsMatch(t, tt.wantFields, got)
		})
	}
}

// TestOIDCRedirectURL: the callback is on the public URL, else on the
// listening address.
func TestOIDCRedirectURL(t *testing.T) {
	t.Parallel()
	require.Equal(t, "https://quarry.example.org/login/oidc/callback",
		app.Config{Addr: "127.0.0.1:8080", PublicURL: "https://quarry.example.org/"}.OIDCRedirectURL())
	require.Equal(t, "http://127.0.0.1:8080/login/oidc/callback", app.Config{Addr: "127.0.0.1:8080"}.OIDCRedirectURL())
}
