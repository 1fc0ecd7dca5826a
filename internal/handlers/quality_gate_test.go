package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestStrategyFormFindings: with the quality gate on, the strategy form
// lists the review's findings with their severity and that they block at
// iteration 1; Approve reads "Approve anyway", and approving without a
// note is refused (422) with the reason by the note, nothing decided;
// with a note it goes on, and the run notes the override.
func TestStrategyFormFindings(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID := w.startFromHome(t, "sleep and memory consolidation", url.Values{"quality_gate": {"true"}})
	_, doc := w.get(t, w.client, "/runs/"+runID)
	findings := doc.Find(`[data-testid="checkpoint-strategy"] [data-testid="finding"]`)
	require.NotEmpty(t, findings.Nodes)
	require.Equal(t, "COULD", doc.Find(`[data-testid="finding"][data-rule="no_date_limit"] [data-testid="finding-severity"]`).Text())
	findings.Each(func(_ int, s *goquery.Selection) {
		require.Equal(t, "true", s.AttrOr("data-blocks", ""), s.Text())
		require.Contains(t, s.Text(), "blocks approval at this iteration")
	})
	require.Contains(t, doc.Find(`[data-testid="findings-blocking"]`).Text(), "at iteration 1")
	require.Equal(t, "Approve anyway", doc.Find(`[data-testid="strategy-actions"] button[value="approve"]`).Text())

	action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
	vals := strategyValues(doc)
	vals.Set("action", "approve")
	res, doc := w.post(t, w.client, action, vals)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, doc.Find(`[data-field="note"]`).Text(), "Approval refused")
	require.Contains(t, doc.Find(`[data-field="note"]`).Text(), "approve anyway with a note")
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind, "nothing was decided")

	vals.Set("note", "a quick scoping search")
	res, _ = w.post(t, w.client, action, vals)
	require.Equal(t, http.StatusOK, res.StatusCode)
	st = w.waitForCheckpoint(t, runID, "result_review", 1)
	var noted bool
	for _, n := range st.Notes {
		noted = noted || (n.Skill == "strategy review" && strings.Contains(n.Message, "a quick scoping search"))
	}
	require.True(t, noted, "%+v", st.Notes)
}

// TestAPIStrategyFindings: GET /api/runs/:id shows the findings in the
// strategy checkpoint's payload; with the quality gate on an approval
// without a note is a 422 naming the blocking findings, and one with a
// note is accepted. Without the gate (the default) the findings are
// warnings and a bare approval goes through.
func TestAPIStrategyFindings(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true,
		"quality_gate": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	var p pipeline.StrategyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &p))
	require.True(t, p.QualityGate)
	require.NotEmpty(t, research.Blocking(p.Findings))

	decide := "/api/runs/" + created.ID + "/decisions"
	res := w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, string(body), "Approval refused")
	res = w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve", "note": "scoping only"})
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode)

	created = w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true, "sources": testapp.Sources})
	st = w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	p = pipeline.StrategyPayload{}
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &p))
	require.False(t, p.QualityGate)
	require.NotEmpty(t, p.Findings)
	require.Empty(t, research.Blocking(p.Findings))
	res = w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode)
}

// TestStrategyFormFindingsOfTheEdit: an edit the gate refuses comes back
// with the findings of what was typed: the years set, "no date limit" is
// gone from the list while the finding still blocking is named.
func TestStrategyFormFindingsOfTheEdit(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID := w.startFromHome(t, "sleep and memory consolidation", url.Values{"quality_gate": {"true"}})
	_, doc := w.get(t, w.client, "/runs/"+runID)
	require.NotEmpty(t, doc.Find(`[data-testid="finding"][data-rule="no_date_limit"]`).Nodes)
	action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
	vals := strategyValues(doc)
	vals.Set("year_from", "2015")
	vals.Set("action", "edit")
	res, doc := w.post(t, w.client, action, vals)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Empty(t, doc.Find(`[data-testid="finding"][data-rule="no_date_limit"]`).Nodes, "the years typed fixed it")
	require.NotEmpty(t, doc.Find(`[data-testid="finding"][data-blocks="true"]`).Nodes)
	require.Contains(t, doc.Find(`[data-field="note"]`).Text(), "Approval refused")
	require.Equal(t, "2015", doc.Find(`input#year_from`).AttrOr("value", ""), "the edit is kept")
}
