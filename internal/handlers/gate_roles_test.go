package handlers_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/notify"
	"quarry/internal/notify/notifytest"
)

// peersFile is a sign-off by two of the project's reviewers, never by the
// person who started the run.
const peersFile = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: peers, version: 1}
stages:
  - id: signoff
    type: gate
    options:
      - {label: Approve, next: complete}
      - {label: Reject, next: complete}
    approval: {count: 2, from: reviewers, self_approval: false, options: [Approve]}
`

// api sends a JSON request as c and returns the status and the decoded
// answer.
func (tm *team) api(t *testing.T, c *http.Client, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, tm.w.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestGateNamedReviewers: a gate asking for two of the project's
// reviewers, not the run's starter, e-mails and waits in the inbox of
// exactly the people who may vote; the starter's and a viewer's votes are
// refused, and two reviewers' votes pass it.
func TestGateNamedReviewers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "peers.yaml"), []byte(peersFile), 0o644))
	smtp, mails := notifytest.SMTP(t)
	tm := setupTeamWith(t, app.Config{WorkflowsDir: dir, SMTP: notify.SMTP{Addr: smtp, From: "quarry@example.org"}})

	status, out := tm.api(t, tm.clients["owner"], http.MethodPost, "/api/workflows/peers/runs?project=pa", `{}`)
	require.Equal(t, http.StatusCreated, status, out)
	runID := out["id"].(string)
	var run engine.Run
	require.Eventually(t, func() bool {
		r, err := tm.st.Run(t.Context(), runID)
		run = r
		return err == nil && r.Status == engine.StatusWaiting
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "pa", run.Project)
	require.Equal(t, "Owner", run.StartedBy)

	// The people the gate asks for are e-mailed: the project's reviewers
	// and owners, but the run's starter.
	select {
	case m := <-mails:
		require.ElementsMatch(t, []string{"<admin@example.org>", "<reviewer@example.org>"}, m.To)
		require.Contains(t, m.Data, "Your vote is asked at gate \"signoff\" of run "+runID)
	case <-time.After(10 * time.Second):
		t.Fatal("nobody was e-mailed")
	}

	inbox := func(who string) bool {
		_, doc := tm.w.get(t, tm.clients[who], "/inbox")
		return doc.Find(`[data-testid="inbox-item"][data-run-id="`+runID+`"]`).Length() == 1
	}
	for who, want := range map[string]bool{"reviewer": true, "admin": true, "owner": false, "viewer": false, "outsider": false} {
		require.Equal(t, want, inbox(who), "%s's inbox", who)
	}

	vote := func(who string) (int, map[string]any) {
		return tm.api(t, tm.clients[who], http.MethodPost, "/api/runs/"+runID+"/decisions",
			`{"checkpoint_id":"`+run.CheckpointID+`","option":"Approve"}`)
	}
	status, out = vote("owner")
	require.Equal(t, http.StatusForbidden, status, out)
	require.Contains(t, out["error"].(map[string]any)["message"], "no self-approval")
	status, _ = vote("viewer")
	require.Equal(t, http.StatusForbidden, status)
	status, out = vote("reviewer")
	require.Equal(t, http.StatusAccepted, status, out)
	require.Equal(t, "voted", out["status"])
	require.False(t, inbox("reviewer"), "voted: no longer waiting for the reviewer")
	require.True(t, inbox("admin"))
	status, out = vote("admin")
	require.Equal(t, http.StatusAccepted, status, out)
	require.Equal(t, "accepted", out["status"], "the second reviewer's vote decided the gate")
	require.Eventually(t, func() bool {
		r, err := tm.st.Run(t.Context(), runID)
		return err == nil && r.Status == engine.StatusCompleted
	}, 10*time.Second, 20*time.Millisecond)
	votes, err := tm.st.Votes(t.Context(), runID)
	require.NoError(t, err)
	require.Len(t, votes, 2, "the refused votes were not recorded")
	for _, v := range votes {
		require.Contains(t, []string{"Reviewer", "Admin"}, v.Voter)
	}
}
