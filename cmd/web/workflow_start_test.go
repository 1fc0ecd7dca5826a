package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/access"
	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

const tallyWorkflow = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: tally}
stages:
  - id: count
    type: set
    set: {n: "3"}
  - id: pick
    type: gate
    options:
      - {label: Go, next: double}
  - id: double
    type: set
    set: {twice: "context.n * 2", how: "outputs.pick.option"}
  - id: ask
    type: gate
    context: [twice, how]
    options:
      - {label: Done, next: complete}
`

// TestWorkflowStartCommand: quarry workflow start NAME --from STAGE
// starts a run at that stage on a running server with the context and
// outputs given by flags and files; a missing value is named on standard
// error (exit status 1).
func TestWorkflowStartCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tally.yaml"), []byte(tallyWorkflow), 0o644))
	db := filepath.Join(t.TempDir(), "q.db")
	a, err := app.New(ctx, app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: db, DatabaseURL: storetest.DatabaseURL(t, &pg, db), WorkflowsDir: dir}, app.WithoutDemoLibrary())
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); require.NoError(t, a.Close()) })
	none := func(string) string { return "" }

	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"workflow", "start", "tally", "--from", "double", "--context", "n=21", "--server", srv.URL}, none, nil, &stdout, &stderr)
	require.Error(t, err)
	require.Equal(t, 1, exitCode(err, &bytes.Buffer{}))
	require.Contains(t, stderr.String(), `outputs.pick.option: is needed: stage "double" reads it`)
	require.Empty(t, stdout.String())

	outs := filepath.Join(t.TempDir(), "outs.json")
	require.NoError(t, os.WriteFile(outs, []byte(`{"pick": {"option": "Go"}}`), 0o644))
	stdout.Reset()
	stderr.Reset()
	require.NoError(t, run(ctx, []string{"workflow", "start", "tally", "--from", "double", "--context", "n=21", "--outputs-file", outs, "--by", "ada", "--server", srv.URL}, none, nil, &stdout, &stderr), stderr.String())
	line := strings.TrimSpace(stdout.String())
	require.True(t, strings.HasPrefix(line, "started run "), line)
	id := strings.TrimSuffix(strings.Fields(line)[2], ":")
	require.Eventually(t, func() bool {
		r, err := a.Store().Run(ctx, id)
		return err == nil && r.Status == engine.StatusWaiting
	}, 10*time.Second, 20*time.Millisecond)
	from, err := a.Store().StartOf(ctx, id)
	require.NoError(t, err)
	require.Equal(t, &engine.StartOrigin{Stage: "double", Given: []string{"context.n", "outputs.pick"}, By: "ada"}, from)

	err = run(ctx, []string{"workflow", "start", "--server", srv.URL}, none, nil, &stdout, &stderr)
	require.Equal(t, 2, exitCode(err, &bytes.Buffer{}), "a name is needed")
}

// TestWorkflowStartWithAToken: on a server with accounts, quarry workflow
// start sends QUARRY_API_TOKEN and the run is started as its account, in
// that account's project; without a token the server answers 401.
func TestWorkflowStartWithAToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tally.yaml"), []byte(tallyWorkflow), 0o644))
	db := filepath.Join(t.TempDir(), "q.db")
	a, err := app.New(ctx, app.Config{Addr: "127.0.0.1:0", DB: db, DatabaseURL: storetest.DatabaseURL(t, &pg, db), WorkflowsDir: dir}, app.WithoutDemoLibrary())
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); require.NoError(t, a.Close()) })
	st := a.Store()
	require.NoError(t, st.CreateFirstAdmin(ctx, store.Account{ID: "a1", Email: "ada@example.org", Name: "Ada"}, store.Project{ID: "p1", Name: "Review"}))
	token, err := access.NewToken("qk_")
	require.NoError(t, err)
	require.NoError(t, st.CreateAPIToken(ctx, store.APIToken{ID: "t1", AccountID: "a1", Name: "cli", Prefix: access.TokenPrefix(token)}, access.HashToken(token)))

	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"workflow", "start", "tally", "--server", srv.URL}, func(string) string { return "" }, nil, &stdout, &stderr)
	require.Error(t, err, "no token, no run")
	stdout.Reset()
	stderr.Reset()
	env := func(k string) string {
		if k == "QUARRY_API_TOKEN" {
			return token
		}
		return ""
	}
	require.NoError(t, run(ctx, []string{"workflow", "start", "tally", "--server", srv.URL}, env, nil, &stdout, &stderr), stderr.String())
	id := strings.TrimSuffix(strings.Fields(strings.TrimSpace(stdout.String()))[2], ":")
	r, err := st.Run(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "Ada", r.StartedBy)
	require.Equal(t, "p1", r.Project)
}
