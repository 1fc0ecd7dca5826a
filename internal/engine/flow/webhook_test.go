package flow_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/webhook"
)

// compileHook loads src with the server's host allowed and compiles it
// with a caller whose allowlist is hosts and whose secrets are secrets.
func compileHook(t *testing.T, src string, srv *httptest.Server, hosts []string, secrets map[string]string) *engine.Workflow {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	src = strings.ReplaceAll(src, "@URL@", srv.URL)
	d, err := def.Load("hook.yaml", []byte(src), def.Options{WebhookHosts: []string{u.Host}})
	require.NoError(t, err)
	caller := &webhook.Caller{Hosts: hosts, Secrets: secrets}
	wf, err := flow.CompileWith(d, flow.Options{Webhook: caller.Stage, Secrets: secrets})
	require.NoError(t, err)
	return wf
}

func hostOf(t *testing.T, srv *httptest.Server) []string {
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return []string{u.Host}
}

// TestWebhookStageCallsAndRecordsTheAnswer: the request's templates are
// filled (params, context, a secret in a header), the answer is recorded
// as outputs.<stage>.status and .json for later stages, and the secret is
// stored nowhere in the run.
func TestWebhookStageCallsAndRecordsTheAnswer(t *testing.T) {
	t.Parallel()
	var auth, body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		body.Store(b.String())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ticket": 42, "state": "open"}`))
	}))
	defer srv.Close()
	wf := compileHook(t, `apiVersion: quarry/v1
kind: Workflow
metadata: {name: notify}
params: [{name: who, type: string, default: "Ada"}]
context: {greeting: "Hello, {{ params.who }}"}
stages:
  - id: tell
    type: webhook
    request:
      url: "@URL@/hook"
      headers: {Authorization: "Bearer {{ secrets.TOKEN }}"}
      body: {text: "{{ context.greeting }}", n: 3}
    expect: {status: [200], json: {state: open}}
  - id: after
    type: set
    set: {ticket: "outputs.tell.json.ticket"}
`, srv, hostOf(t, srv), map[string]string{"TOKEN": "s3cret-token"})
	b := setup(t, "", nil, wf)
	r := b.run(t, "notify", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, "Bearer s3cret-token", auth.Load())
	require.JSONEq(t, `{"text": "Hello, Ada", "n": 3}`, body.Load().(string))
	require.JSONEq(t, `{"status": 200, "json": {"ticket": 42, "state": "open"}}`, jsonOf(t, outputsOf(t, r)["tell"]))
	require.Equal(t, float64(42), contextOf(t, r)["ticket"])
	require.NotContains(t, jsonOf(t, r.State), "s3cret-token", "the secret is not in the run's state")
	recs, err := b.store.StepRuns(context.Background(), r.ID)
	require.NoError(t, err)
	require.NotContains(t, jsonOf(t, recs), "s3cret-token", "nor in its audit trail")
}

// TestWebhookStageRetriesAServerError: a 500 fails the attempt; on_error
// retries it and the second call succeeds.
func TestWebhookStageRetriesAServerError(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	wf := compileHook(t, `apiVersion: quarry/v1
kind: Workflow
metadata: {name: retry}
stages:
  - id: tell
    type: webhook
    request: {url: "@URL@/hook"}
    on_error: {retry: 1, backoff: 1s, then: fail}
`, srv, hostOf(t, srv), nil)
	b := setup(t, "", nil, wf)
	r := b.run(t, "retry", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, int32(2), calls.Load())
	require.Equal(t, []string{"tell:error", "tell:ok"}, b.steps(t, r.ID))
}

// TestWebhookStageRefusesAHostOffTheAllowlist: a file loaded where its
// host was allowed still reaches nothing from a server whose allowlist
// lacks it: the attempt fails and, without on_error, so does the run.
func TestWebhookStageRefusesAHostOffTheAllowlist(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	wf := compileHook(t, `apiVersion: quarry/v1
kind: Workflow
metadata: {name: refused}
stages:
  - id: tell
    type: webhook
    request: {url: "@URL@/hook"}
`, srv, []string{"hooks.example.org"}, nil)
	b := setup(t, "", nil, wf)
	r := b.run(t, "refused", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, "not in the allowlist")
	require.Zero(t, calls.Load(), "nothing was sent")
}

// TestWebhookStageTimeout: a stage's timeout bounds its call.
func TestWebhookStageTimeout(t *testing.T) {
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
	wf := compileHook(t, `apiVersion: quarry/v1
kind: Workflow
metadata: {name: slow}
stages:
  - id: tell
    type: webhook
    request: {url: "@URL@/hook"}
    timeout: 100ms
`, srv, hostOf(t, srv), nil)
	b := setup(t, "", nil, wf)
	start := time.Now()
	r := b.run(t, "slow", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, "timed out after 100ms")
	require.Less(t, time.Since(start), 10*time.Second)
}

// TestWebhookStageNeedsACaller: without a webhook caller a definition
// with a webhook stage does not compile, and says where.
func TestWebhookStageNeedsACaller(t *testing.T) {
	t.Parallel()
	d, err := def.Load("hook.yaml", []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: nocaller}
stages:
  - id: tell
    type: webhook
    request: {url: "https://hooks.example.org/x"}
`), def.Options{WebhookHosts: []string{"hooks.example.org"}})
	require.NoError(t, err)
	_, err = flow.Compile(d, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "cannot run")
}
