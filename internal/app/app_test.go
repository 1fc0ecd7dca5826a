package app_test

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/store"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want app.Config
	}{
		{"Defaults", nil, nil, app.Config{Addr: "127.0.0.1:8080", DB: "./quarry.db"}},
		{"Env", map[string]string{"QUARRY_ADDR": "0.0.0.0:9000", "QUARRY_DB": "/var/q.db"}, nil,
			app.Config{Addr: "0.0.0.0:9000", DB: "/var/q.db"}},
		{"BlankEnvIgnored", map[string]string{"QUARRY_ADDR": "  ", "QUARRY_DB": ""}, nil,
			app.Config{Addr: "127.0.0.1:8080", DB: "./quarry.db"}},
		{"FlagsOverrideEnv", map[string]string{"QUARRY_ADDR": "0.0.0.0:9000", "QUARRY_DB": "/var/q.db"},
			[]string{"--addr", "127.0.0.1:0", "--db=/tmp/x.db"}, app.Config{Addr: "127.0.0.1:0", DB: "/tmp/x.db"}},
		{"FlagOverridesOnlyItsField", map[string]string{"QUARRY_DB": "/var/q.db"},
			[]string{"-addr", ":7000"}, app.Config{Addr: ":7000", DB: "/var/q.db"}},
		{"PublicURLEnv", map[string]string{"QUARRY_PUBLIC_URL": " https://quarry.example.org "}, nil,
			app.Config{Addr: "127.0.0.1:8080", DB: "./quarry.db", PublicURL: "https://quarry.example.org"}},
		{"WebhookHosts", map[string]string{"QUARRY_WEBHOOK_HOSTS": " hooks.example.org, Chat.example.org:8443 ,hooks.example.org,"}, nil,
			app.Config{Addr: "127.0.0.1:8080", DB: "./quarry.db", WebhookHosts: []string{"hooks.example.org", "chat.example.org:8443"}}},
		{"PublicURLFlag", map[string]string{"QUARRY_PUBLIC_URL": "http://old.example.org"}, []string{"--public-url", "https://q.example.org/"},
			app.Config{Addr: "127.0.0.1:8080", DB: "./quarry.db", PublicURL: "https://q.example.org/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := load(t, tt.env, tt.args...)
			require.NoError(t, err)
			tt.want.LogFormat, tt.want.Search, tt.want.Import = app.LogText, defaultSearch(), defaultImport() // the settings this table does not set
			tt.want.Database.ImportReserve, tt.want.Database.BackupKeep = store.DefaultImportReserve, store.DefaultBackupKeep
			tt.want.Database.LibraryRanking = store.RankMemory
			tt.want.ExclusionReasons = research.DefaultExclusionReasons()
			tt.want.StopWindow = research.DefaultStopWindow
			tt.want.BranchWorkers = store.DefaultBranchWorkers
			require.Equal(t, tt.want, cfg)
			require.NoError(t, cfg.Validate())
		})
	}
}

// load parses args as serve does and loads the configuration from them and
// env.
func load(t *testing.T, env map[string]string, args ...string) (app.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := app.Flags{}
	flags.Bind(fs)
	require.NoError(t, fs.Parse(args))
	return app.Load(flags, func(k string) string { return env[k] })
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cfg        app.Config
		wantFields []string
	}{
		{"OK", app.Config{Addr: "127.0.0.1:0", DB: "q.db"}, nil},
		{"NoPort", app.Config{Addr: "localhost", DB: "q.db"}, []string{"addr"}},
		{"EmptyPort", app.Config{Addr: "localhost:", DB: "q.db"}, []string{"addr"}},
		{"Empty", app.Config{}, []string{"addr", "db"}},
		{"PublicURLHTTPS", app.Config{Addr: "127.0.0.1:0", DB: "q.db", PublicURL: "https://quarry.example.org"}, nil},
		{"PublicURLHTTP", app.Config{Addr: "127.0.0.1:0", DB: "q.db", PublicURL: "http://10.0.0.5:8080"}, nil},
		{"PublicURLNoScheme", app.Config{Addr: "127.0.0.1:0", DB: "q.db", PublicURL: "quarry.example.org"}, []string{"public_url"}},
		{"PublicURLOtherScheme", app.Config{Addr: "127.0.0.1:0", DB: "q.db", PublicURL: "ftp://quarry.example.org"}, []string{"public_url"}},
		{"PublicURLNoHost", app.Config{Addr: "127.0.0.1:0", DB: "q.db", PublicURL: "https://"}, []string{"public_url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
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

func TestSecureCookies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		publicURL  string
		wantSecure bool
	}{
		{"", false},
		{"http://10.0.0.5:8080", false},
		{"https://quarry.example.org", true},
		{"HTTPS://quarry.example.org", true},
	}
	for _, tt := range tests {
		t.Run(tt.publicURL, func(t *testing.T) {
			t.Parallel()
			cfg := app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), PublicURL: tt.publicURL}
			require.Equal(t, tt.wantSecure, cfg.SecureCookies())
			a, err := newApp(t, t.Context(), cfg)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, a.Close()) })

			// The request arrives over plain HTTP, as from a TLS-terminating proxy.
			rec := httptest.NewRecorder()
			a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/name", nil))
			require.Equal(t, http.StatusOK, rec.Code)
			// The CSRF token lives in the session cookie, which the first
			// page sets.
			first := cookieNamed(t, rec.Result().Cookies(), "quarry")
			require.Equal(t, tt.wantSecure, first.Secure, "session cookie carrying the CSRF token")
			token := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindStringSubmatch(rec.Body.String())
			require.Len(t, token, 2, "the form carries the token")

			form := url.Values{"_csrf": {token[1]}, "name": {"Ada"}, "next": {"/"}}
			req := httptest.NewRequest(http.MethodPost, "/name", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(first)
			rec = httptest.NewRecorder()
			a.Handler().ServeHTTP(rec, req)
			require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
			session := cookieNamed(t, rec.Result().Cookies(), "quarry")
			require.Equal(t, tt.wantSecure, session.Secure, "session cookie")
			require.True(t, session.HttpOnly)
		})
	}
}

func cookieNamed(t *testing.T, cookies []*http.Cookie, name string) *http.Cookie {
	t.Helper()
	for _, c := range cookies {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", name, cookies)
	return nil
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	a, err := app.New(t.Context(), app.Config{Addr: "nope", DB: "q.db"})
	require.Nil(t, a)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

func TestHandler(t *testing.T) {
	t.Parallel()
	a, err := newApp(t, t.Context(), app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	res, err := srv.Client().Get(srv.URL + "/healthz")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "ok", string(body))
}

func TestServeShutsDownGracefully(t *testing.T) {
	t.Parallel()
	a, err := newApp(t, t.Context(), app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()

	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get("http://" + ln.Addr().String() + "/")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(app.ShutdownTimeout + 5*time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
	_, err = client.Get("http://" + ln.Addr().String() + "/healthz")
	require.Error(t, err, "the listener is closed after shutdown")
}
