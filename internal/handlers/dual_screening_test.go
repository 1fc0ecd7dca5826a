package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
)

// dualRun starts a blind dual-screened run of project A (two people a
// paper, a third resolving) and waits for its review; it returns the run,
// its review checkpoint and the papers under review.
func (tm *team) dualRun(t *testing.T) (string, string, []string) {
	t.Helper()
	run, err := tm.w.app.Engine().StartAs(context.Background(), engine.Starter{Project: "pa", By: "Owner"}, "search", map[string]any{
		"question": "sleep and memory consolidation", "max_iterations": 1, "strategy_checkpoint": false, "sources": testapp.Sources,
		"screeners": 2, "conflicts": "third"})
	require.NoError(t, err)
	var cp string
	require.Eventually(t, func() bool {
		r, err := tm.st.Run(context.Background(), run.ID)
		cp = r.CheckpointID
		return err == nil && r.Status == engine.StatusWaiting
	}, 10*time.Second, 20*time.Millisecond)
	_, doc := tm.fetch(t, tm.clients["admin"], "/runs/"+run.ID)
	var papers []string
	doc.Find(`[data-testid="paper"]`).Each(func(_ int, s *goquery.Selection) { papers = append(papers, s.AttrOr("data-paper-id", "")) })
	require.GreaterOrEqual(t, len(papers), 3)
	require.Equal(t, 1, doc.Find(`[data-testid="dual-screening-notice"]`).Length())
	return run.ID, cp, papers
}

// markAs PUTs mark on paper as who, through the API with their session.
func (tm *team) markAs(t *testing.T, who, runID, paper, mark string) {
	t.Helper()
	status, out := tm.api(t, tm.clients[who], http.MethodPut, markPath(runID, paper), `{"mark":"`+mark+`"}`)
	require.Equal(t, http.StatusOK, status, "%s marks %s: %v", who, paper, out)
}

// marksSeen are the marks who sees through the API, by paper.
func (tm *team) marksSeen(t *testing.T, who, runID string) map[string]string {
	t.Helper()
	res, err := tm.clients[who].Get(tm.w.srv.URL + "/api/runs/" + runID + "/marks")
	require.NoError(t, err)
	defer res.Body.Close()
	var out handlers.MarksJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	seen := map[string]string{}
	for _, m := range out.Marks {
		seen[m.PaperID] = m.By + ":" + m.Mark
	}
	return seen
}

// TestBlindDualScreening: two reviewers screen each paper without seeing
// each other's marks until both have; a paper they agree on counts, one
// they disagree on waits for a third person (never one of the pair), and
// the run does not move on before; the conflicts page shows Cohen's
// kappa, also exported as CSV; and only the agreed or resolved marks
// reach the run.
func TestBlindDualScreening(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	runID, cp, papers := tm.dualRun(t)
	p0, p1, p2 := papers[0], papers[1], papers[2]

	tm.markAs(t, "reviewer", runID, p0, "relevant")
	tm.markAs(t, "reviewer", runID, p1, "relevant")
	require.Empty(t, tm.marksSeen(t, "owner", runID), "blind: the owner sees none of the reviewer's marks")
	require.Equal(t, map[string]string{p0: "Reviewer:relevant", p1: "Reviewer:relevant"}, tm.marksSeen(t, "reviewer", runID))
	_, doc := tm.fetch(t, tm.clients["owner"], "/runs/"+runID)
	require.Zero(t, doc.Find(`input[name="mark:`+p0+`"][value="relevant"][checked]`).Length(), "the owner's review form shows no mark of p0")
	_, doc = tm.fetch(t, tm.clients["reviewer"], "/runs/"+runID)
	require.Equal(t, 1, doc.Find(`input[name="mark:`+p0+`"][value="relevant"][checked]`).Length(), "the reviewer's own mark is on their form")

	tm.markAs(t, "owner", runID, p0, "relevant")   // agree
	tm.markAs(t, "owner", runID, p1, "irrelevant") // disagree
	tm.markAs(t, "owner", runID, p2, "irrelevant") // only one screener so far
	seen := tm.marksSeen(t, "reviewer", runID)
	require.Equal(t, "relevant", strings.SplitN(seen[p0], ":", 2)[1], "the agreed paper counts")
	require.NotContains(t, seen, p2, "the owner's mark of p2 stays hidden from the reviewer")

	// The run waits for the disagreement to be resolved.
	res, _ := tm.send(t, tm.clients["owner"], "/runs/"+runID+"/checkpoints/"+cp+"/review", url.Values{"action": {"approve"}})
	require.Equal(t, http.StatusConflict, res.StatusCode)

	_, doc = tm.fetch(t, tm.clients["reviewer"], "/runs/"+runID+"/conflicts")
	require.Equal(t, 1, doc.Find(`[data-testid="conflict"][data-paper-id="`+p1+`"]`).Length())
	require.Zero(t, doc.Find(`[data-testid="resolve-form"]`).Length(), "one of the pair does not resolve")
	require.Equal(t, "0.00", strings.TrimSpace(doc.Find(`[data-testid="kappa"]`).Text()), "Owner and Reviewer: 2 papers, 1 agreed, κ = 0")
	res, _ = tm.send(t, tm.clients["reviewer"], "/runs/"+runID+"/checkpoints/"+cp+"/resolve", url.Values{"paper_id": {p1}, "mark": {"relevant"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res, _ = tm.send(t, tm.clients["viewer"], "/runs/"+runID+"/checkpoints/"+cp+"/resolve", url.Values{"paper_id": {p1}, "mark": {"relevant"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, "a viewer decides nothing")
	_, doc = tm.fetch(t, tm.clients["admin"], "/runs/"+runID+"/conflicts")
	require.Equal(t, 1, doc.Find(`[data-testid="resolve-form"]`).Length())
	res, _ = tm.send(t, tm.clients["admin"], "/runs/"+runID+"/checkpoints/"+cp+"/resolve", url.Values{"paper_id": {p1}, "mark": {"irrelevant"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/runs/"+runID+"/conflicts", res.Header.Get("Location"))
	_, doc = tm.fetch(t, tm.clients["admin"], "/runs/"+runID+"/conflicts")
	require.Equal(t, 1, doc.Find(`[data-testid="conflicts-empty"]`).Length())
	require.Contains(t, doc.Find(`[data-testid="screening-counts"]`).Text(), "1 agreed · 1 resolved · 0 in conflict · 1 still being screened")

	res, err := tm.clients["viewer"].Get(tm.w.srv.URL + "/runs/" + runID + "/agreement.csv")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, "reviewer_a,reviewer_b,papers,agreed,percent_agreement,kappa\nOwner,Reviewer,2,1,50.00,0.0000\n", string(body))

	res, _ = tm.send(t, tm.clients["owner"], "/runs/"+runID+"/checkpoints/"+cp+"/review", url.Values{"action": {"approve"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Eventually(t, func() bool {
		r, err := tm.st.Run(context.Background(), runID)
		return err == nil && r.Status == engine.StatusCompleted
	}, 10*time.Second, 20*time.Millisecond)
	cps, err := tm.st.Checkpoints(context.Background(), runID)
	require.NoError(t, err)
	var fb research.UserFeedback
	for _, cd := range cps {
		if cd.Checkpoint.ID == cp {
			require.NotNil(t, cd.Decision)
			require.NoError(t, json.Unmarshal(cd.Decision.RevisedData, &fb))
		}
	}
	require.Equal(t, []string{p0}, fb.MarkedRelevant, "only the agreed relevant paper counts, not one reviewer's")
	require.Equal(t, []string{p1}, fb.MarkedIrrelevant, "the resolution counts for the disagreement; p2 (one screener) counts for nothing")
}
