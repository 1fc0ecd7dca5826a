package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/webhook"
)

// allow is the allowlist entry for an httptest server: host:port.
func allow(srv *httptest.Server) []string {
	u, _ := url.Parse(srv.URL)
	return []string{u.Host}
}

func TestSuccessSendsTheCallAndChecksTheAnswer(t *testing.T) {
	t.Parallel()
	var got struct {
		method, auth, ctype string
		body                map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.auth, got.ctype = r.Method, r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		_ = json.NewDecoder(r.Body).Decode(&got.body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true, "id": 7, "tags": ["a", "b", "c"], "extra": {"x": 1}}`))
	}))
	defer srv.Close()
	c := &webhook.Caller{Hosts: allow(srv)}
	a, err := c.Do(t.Context(), webhook.Call{URL: srv.URL + "/hook", Headers: map[string]string{"Authorization": "Bearer t"},
		Body: map[string]any{"run": "r1", "n": 3}},
		webhook.Expect{JSON: map[string]any{"ok": true, "id": int64(7), "tags": []any{"c", "a"}}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, a.Status)
	require.Equal(t, "POST", got.method, "POST by default")
	require.Equal(t, "Bearer t", got.auth)
	require.Equal(t, "application/json", got.ctype)
	require.Equal(t, map[string]any{"run": "r1", "n": float64(3)}, got.body)
	require.Equal(t, true, a.JSON.(map[string]any)["ok"])
}

func TestServerErrorThenSuccess(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	c := &webhook.Caller{Hosts: allow(srv)}
	_, err := c.Do(t.Context(), webhook.Call{URL: srv.URL}, webhook.Expect{})
	require.Error(t, err)
	require.Equal(t, fault.EUnavailable, fault.ErrorCode(err), "a 5xx may pass: the stage's on_error retries it")
	require.Contains(t, err.Error(), "answered 500")
	a, err := c.Do(t.Context(), webhook.Call{URL: srv.URL}, webhook.Expect{})
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, a.Status)
	require.Equal(t, int32(2), calls.Load())
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &webhook.Caller{Hosts: allow(srv)}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Do(ctx, webhook.Call{URL: srv.URL}, webhook.Expect{})
	require.Error(t, err)
	require.Equal(t, fault.EUnavailable, fault.ErrorCode(err))
	require.Less(t, time.Since(start), 10*time.Second, "the stage's deadline ends the call")

	short := &webhook.Caller{Hosts: allow(srv), Client: &http.Client{Timeout: 50 * time.Millisecond}}
	_, err = short.Do(t.Context(), webhook.Call{URL: srv.URL}, webhook.Expect{})
	require.Equal(t, fault.EUnavailable, fault.ErrorCode(err), "the client's own timeout too")
}

func TestHostOffTheAllowlistIsRefusedUnsent(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	for _, hosts := range [][]string{nil, {"example.org"}, {u.Hostname() + ":1"}, {"localhost"}} {
		c := &webhook.Caller{Hosts: hosts}
		_, err := c.Do(t.Context(), webhook.Call{URL: srv.URL + "/x"}, webhook.Expect{})
		require.Error(t, err, "hosts %v", hosts)
		require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err), "hosts %v", hosts)
		require.Contains(t, err.Error(), "allowlist")
	}
	require.Zero(t, calls.Load(), "nothing was sent")
	// A bare host allows it on any port.
	c := &webhook.Caller{Hosts: []string{u.Hostname()}}
	_, err := c.Do(t.Context(), webhook.Call{URL: srv.URL + "/x"}, webhook.Expect{})
	require.NoError(t, err)
	require.Equal(t, int32(1), calls.Load())
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusFound)
	}))
	defer srv.Close()
	c := &webhook.Caller{Hosts: allow(srv)}
	_, err := c.Do(t.Context(), webhook.Call{URL: srv.URL}, webhook.Expect{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "answered 302")
	require.Zero(t, elsewhere.Load(), "a redirect off the allowlist is never followed")
}

func TestExpectationsAndLimits(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/big":
			_, _ = w.Write([]byte(`"` + strings.Repeat("x", 2048) + `"`))
		case "/limited":
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			_, _ = w.Write([]byte(`{"state": "queued"}`))
		}
	}))
	defer srv.Close()
	c := &webhook.Caller{Hosts: allow(srv), MaxAnswer: 1024}
	for _, tt := range []struct {
		path string
		want webhook.Expect
		code string
	}{
		{"/missing", webhook.Expect{}, fault.EInvalid},
		{"/missing", webhook.Expect{Status: []int{404}}, ""},
		{"/limited", webhook.Expect{}, fault.EUnavailable},
		{"/big", webhook.Expect{}, fault.ETooLarge},
		{"/", webhook.Expect{JSON: map[string]any{"state": "done"}}, fault.EInvalid},
		{"/", webhook.Expect{JSON: map[string]any{"state": "queued"}}, ""},
	} {
		_, err := c.Do(t.Context(), webhook.Call{URL: srv.URL + tt.path, Method: "get"}, tt.want)
		require.Equal(t, tt.code, fault.ErrorCode(err), "%s %+v: %v", tt.path, tt.want, err)
	}
	_, err := c.Do(t.Context(), webhook.Call{URL: "ftp://x/y"}, webhook.Expect{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

func TestSecretsNeverInErrors(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-t0ken"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	c := &webhook.Caller{Hosts: allow(srv), Secrets: map[string]string{"TOKEN": token}}
	_, err := c.Do(t.Context(), webhook.Call{URL: srv.URL + "/hook?key=" + token}, webhook.Expect{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), token)
	require.Contains(t, err.Error(), "[secret TOKEN]")
	require.Equal(t, fault.EUnavailable, fault.ErrorCode(err), "redaction keeps the code")

	// A connection error prints the whole URL: redacted too.
	srv.Close()
	_, err = c.Do(t.Context(), webhook.Call{URL: srv.URL + "/hook?key=" + token}, webhook.Expect{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), token)
}

func TestContains(t *testing.T) {
	t.Parallel()
	got := map[string]any{"a": float64(1), "b": []any{"x", map[string]any{"k": "v", "n": float64(2)}}, "c": nil, "s": "text"}
	for _, tt := range []struct {
		want any
		ok   bool
	}{
		{map[string]any{}, true},
		{map[string]any{"a": int64(1)}, true},
		{map[string]any{"a": 1.5}, false},
		{map[string]any{"b": []any{map[string]any{"k": "v"}}}, true},
		{map[string]any{"b": []any{"y"}}, false},
		{map[string]any{"c": nil}, true},
		{map[string]any{"d": nil}, false},
		{map[string]any{"s": "text"}, true},
		{map[string]any{"s": map[string]any{}}, false},
		{[]any{}, false},
	} {
		require.Equal(t, tt.ok, webhook.Contains(got, tt.want), "%v", tt.want)
	}
}
