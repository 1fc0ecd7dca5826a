package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"quarry/internal/fault"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	db := filepath.Join(t.TempDir(), "quarry.db")
	env := map[string]string{"QUARRY_ADDR": "127.0.0.1:1", "QUARRY_DB": db} // flag must win over env
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, nil, pw, io.Discard)
		_ = pw.Close()
	}()

	// Read stdout until the listening line; keep draining afterwards so
	// the server's log lines never block on the pipe.
	lines := bufio.NewScanner(pr)
	var base string
	for base == "" && lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "quarry: listening on "); ok {
			base = u
		}
	}
	require.NotEmpty(t, base, "serve never printed its address")
	require.NotContains(t, base, ":0", "the real port is printed, not the requested one")
	go func() {
		for lines.Scan() {
		}
	}()

	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get(base + "/")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	// The first visit to a new installation (accounts, the default)
	// creates its administrator; the client followed the redirect to it.
	require.Equal(t, "/setup", res.Request.URL.Path)
	require.Contains(t, string(body), `data-testid="setup-form"`)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestRunDispatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode string
		wantOut  string
	}{
		{"Help", []string{"help"}, "", "Subcommands:"},
		{"ServeHelp", []string{"serve", "-h"}, "", "-addr"},
		{"ServeHelpListsTheDatabase", []string{"serve", "-h"}, "", "-db"},
		{"DashHIsHelp", []string{"-h"}, "", "Subcommands:"},
		{"Unknown", []string{"frobnicate"}, fault.EInvalid, ""},
		{"BadFlag", []string{"serve", "--nope"}, fault.EInvalid, ""},
		{"StrayArgument", []string{"serve", "extra"}, fault.EInvalid, ""},
		{"BadAddr", []string{"serve", "--addr", "no-port"}, fault.EInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			err := run(t.Context(), tt.args, func(string) string { return "" }, nil, &out, io.Discard)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "err: %v", err)
			require.Contains(t, out.String(), tt.wantOut)
		})
	}
}

func TestRunUnknownListsSubcommands(t *testing.T) {
	t.Parallel()
	err := run(t.Context(), []string{"frobnicate"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	require.ErrorContains(t, err, `"frobnicate"`)
	for _, sub := range []string{"serve", "eval", "help"} {
		require.ErrorContains(t, err, sub)
	}
}

func TestEvalArguments(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"NoArgs", []string{"eval"}, "want a kind"},
		{"UnknownKind", []string{"eval", "speed", t.TempDir()}, `unknown kind "speed"`},
	}
	for _, tt := range tests {
		err := run(t.Context(), tt.args, getenv, nil, io.Discard, io.Discard)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), tt.name)
		require.ErrorContains(t, err, tt.want, tt.name)
	}
	// An empty directory is an error that says what was expected, not a pass.
	err := run(t.Context(), []string{"eval", "dedup", t.TempDir()}, getenv, nil, io.Discard, io.Discard)
	require.Error(t, err)
}
