package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
)

// TestServerKeepsTriggers: a server starting with a workflow file that
// has a schedule and a webhook trigger stores the schedule's next due
// time (its scheduler ticked at start, without firing) and the webhook's
// token; a second start keeps both.
func TestServerKeepsTriggers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "weekly.yaml"), []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: weekly}
trigger:
  - {schedule: "0 6 * * MON"}
  - {webhook: hook}
stages:
  - {id: a, type: set, set: {x: "1"}}
`), 0o644))
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir}
	states := func() (time.Time, string) {
		a, err := newApp(t, context.Background(), cfg, app.WithoutDemoLibrary())
		require.NoError(t, err)
		defer func() { require.NoError(t, a.Close()) }()
		var next time.Time
		require.Eventually(t, func() bool {
			s, err := a.Store().TriggerStates(context.Background(), "weekly")
			require.NoError(t, err)
			if n := s["schedule"].NextDue; n != nil {
				next = *n
				return true
			}
			return false
		}, 10*time.Second, 10*time.Millisecond)
		tok, err := a.Store().StoredTriggerToken(context.Background(), "weekly", "hook")
		require.NoError(t, err)
		return next, tok
	}
	next, tok := states()
	require.Equal(t, time.Monday, next.Weekday())
	require.Equal(t, 6, next.Hour())
	require.True(t, next.After(time.Now()))
	firings, err := func() (int, error) {
		a, err := newApp(t, context.Background(), cfg, app.WithoutDemoLibrary())
		require.NoError(t, err)
		defer a.Close()
		f, err := a.Store().Firings(context.Background(), "weekly", 10)
		return len(f), err
	}()
	require.NoError(t, err)
	require.Zero(t, firings, "first sight does not fire")
	next2, tok2 := states()
	require.Equal(t, next, next2)
	require.Equal(t, tok, tok2, "the token is made once")
}
