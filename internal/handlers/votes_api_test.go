package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
)

const signoffYAML = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: signoff}
stages:
  - id: signoff
    type: gate
    options:
      - {label: Approve, next: done}
      - {label: Reject, next: complete}
    approval: {count: 2, of: 3, options: [Approve]}
  - id: done
    type: set
    set: {by: "outputs.signoff.decided_by"}
`

// votesApp serves a fresh app with the signoff workflow and a run of it
// waiting at its gate.
func votesApp(t *testing.T) (*web, handlers.RunJSON) {
	t.Helper()
	return votesAppWith(t, signoffYAML)
}

// votesAppWith is votesApp with the signoff workflow written as text.
func votesAppWith(t *testing.T, text string) (*web, handlers.RunJSON) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "signoff.yaml"), []byte(text), 0o644))
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir})
	require.NoError(t, err)
	w := serveApp(t, a)
	created := w.startAPIRun(t, map[string]any{"workflow": "signoff"})
	var run handlers.RunJSON
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "waiting" && run.Checkpoint != nil
	}, 10*time.Second, 20*time.Millisecond)
	return w, run
}

func vote(w *web, runID, cpID, who, option string) (int, string, error) {
	b, _ := json.Marshal(map[string]string{"checkpoint_id": cpID, "option": option, "decided_by": who})
	res, err := w.client.Post(w.srv.URL+"/api/runs/"+runID+"/decisions", "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(res.Body)
	return res.StatusCode, buf.String(), err
}

// TestVotesThroughDecisionsAPI: a vote that does not decide answers 202
// with the votes so far; GET /api/runs/:id lists them per gate with how
// many more are needed; the page's gate form shows them; the second
// Approve decides.
func TestVotesThroughDecisionsAPI(t *testing.T) {
	t.Parallel()
	w, run := votesApp(t)
	code, body, err := vote(w, run.ID, run.Checkpoint.ID, "ada", "Approve")
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	var v handlers.VoteJSON
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	require.Equal(t, "voted", v.Status)
	require.Equal(t, 1, v.Needed)
	require.Len(t, v.Votes, 1)

	code, body, err = vote(w, run.ID, run.Checkpoint.ID, "bob", "Reject")
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	got := w.getRun(t, run.ID)
	require.Equal(t, "waiting", got.Status)
	require.Len(t, got.Votes, 1)
	g := got.Votes[0]
	require.Equal(t, [5]any{"signoff", 2, 3, 1, 1}, [5]any{g.Stage, g.Count, g.Of, g.Needed, g.Waiting})
	require.False(t, g.Decided)
	// bob changes his mind: his Approve replaces his Reject and decides.
	code, body, err = vote(w, run.ID, run.Checkpoint.ID, "bob", "Approve")
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	require.JSONEq(t, `{"status":"accepted"}`, body)
	require.Eventually(t, func() bool {
		got = w.getRun(t, run.ID)
		return got.Status == "completed"
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, got.Votes, 1)
	g = got.Votes[0]
	require.True(t, g.Decided)
	require.Zero(t, g.Needed)
	require.Equal(t, []string{"ada:Approve:false", "bob:Reject:true", "bob:Approve:false"}, voteRows(g.Votes))
}

func voteRows(vs any) []string {
	b, _ := json.Marshal(vs)
	var rows []struct {
		Voter, Option string
		Replaced      bool
	}
	_ = json.Unmarshal(b, &rows)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%s:%s:%v", r.Voter, r.Option, r.Replaced)
	}
	return out
}

// TestGatePageShowsVotes: two people vote through the run page's gate
// form, each named by their session; after the first the form lists the
// vote and how many more are needed, and the second decides.
func TestGatePageShowsVotes(t *testing.T) {
	t.Parallel()
	w, run := votesApp(t)
	ada, bo := newClient(t), newClient(t)
	w.signIn(t, ada, "Ada")
	w.signIn(t, bo, "Bo")
	_, doc := w.get(t, ada, "/runs/"+run.ID)
	form := url.Values{"_csrf": {csrf(doc)}, "option": {"Approve"}}
	res, doc := w.post(t, ada, "/runs/"+run.ID+"/checkpoints/"+run.Checkpoint.ID+"/gate", form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "/runs/"+run.ID, res.Request.URL.Path)
	need := strings.Join(strings.Fields(doc.Find(`[data-testid="gate-votes-needed"]`).Text()), " ")
	require.Contains(t, need, "1 more vote needed")
	require.Contains(t, need, "(2 of 3 expected still to vote)")
	require.Equal(t, 1, doc.Find(`[data-testid="gate-vote"]`).Length())
	require.Contains(t, doc.Find(`[data-testid="gate-vote"]`).Text(), "Ada: Approve")

	// The fragment the form polls shows the same.
	_, frag := w.get(t, bo, "/runs/"+run.ID+"/checkpoints/"+run.Checkpoint.ID+"/votes")
	require.Contains(t, frag.Find(`[data-testid="gate-vote"]`).Text(), "Ada: Approve")

	_, doc = w.get(t, bo, "/runs/"+run.ID)
	form = url.Values{"_csrf": {csrf(doc)}, "option": {"Approve"}}
	res, _ = w.post(t, bo, "/runs/"+run.ID+"/checkpoints/"+run.Checkpoint.ID+"/gate", form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got handlers.RunJSON
	require.Eventually(t, func() bool {
		got = w.getRun(t, run.ID)
		return got.Status == "completed"
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, []string{"Ada:Approve:false", "Bo:Approve:false"}, voteRows(got.Votes[0].Votes))
}

// TestConcurrentVotesThroughAPI: 100 simultaneous votes through POST
// /api/runs/:id/decisions on the 2-of-3 gate: exactly one decides (the
// rest are 409 once it has), the run moves on once, and every vote is
// recorded.
func TestConcurrentVotesThroughAPI(t *testing.T) {
	t.Parallel()
	w, run := votesApp(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	decided := 0
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, err := vote(w, run.ID, run.Checkpoint.ID, fmt.Sprintf("voter%02d", i), "Approve")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[-1]++
				return
			}
			codes[code]++
			if code == http.StatusAccepted && strings.Contains(body, `"accepted"`) {
				decided++
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, decided, "codes %v", codes)
	require.Equal(t, map[int]int{http.StatusAccepted: 2, http.StatusConflict: 98}, codes)
	var got handlers.RunJSON
	require.Eventually(t, func() bool {
		got = w.getRun(t, run.ID)
		return got.Status == "completed"
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, got.Votes, 1)
	require.Len(t, got.Votes[0].Votes, 100)
	steps, err := w.app.Store().StepRuns(context.Background(), run.ID)
	require.NoError(t, err)
	var trail []string
	for _, s := range steps {
		trail = append(trail, s.Step+":"+s.Outcome)
	}
	require.Equal(t, []string{"signoff:checkpoint", "signoff:goto:done", "done:ok"}, trail)
}

// TestNamedVotersAPIAndPage: a gate that names its voters refuses anyone
// else's vote (403, nothing recorded) and lists, in the API and on the
// page, who has not voted yet.
func TestNamedVotersAPIAndPage(t *testing.T) {
	t.Parallel()
	w, run := votesAppWith(t, strings.Replace(signoffYAML, "{count: 2, of: 3, options: [Approve]}", "{count: 2, voters: [Ada, Bob, Cy], options: [Approve]}", 1))
	code, body, err := vote(w, run.ID, run.Checkpoint.ID, "Eve", "Approve")
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, "only Ada, Bob, Cy")
	code, body, err = vote(w, run.ID, run.Checkpoint.ID, "ada", "Approve")
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	got := w.getRun(t, run.ID)
	require.Len(t, got.Votes, 1)
	require.Equal(t, []string{"Bob", "Cy"}, got.Votes[0].Expected)
	require.Equal(t, []string{"ada:Approve:false"}, voteRows(got.Votes[0].Votes), "Eve's vote was not recorded")
	c := newClient(t)
	w.signIn(t, c, "Bob")
	_, doc := w.get(t, c, "/runs/"+run.ID)
	require.Equal(t, "Waiting for Bob, Cy.", strings.TrimSpace(doc.Find(`[data-testid="gate-votes-expected"]`).Text()))
}
