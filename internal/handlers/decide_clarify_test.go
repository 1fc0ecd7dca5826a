package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// startFromHome starts a run from the start form with the extra fields
// given and returns its ID once it waits.
func (w *web) startFromHome(t *testing.T, question string, extra url.Values) string {
	t.Helper()
	w.signIn(t, w.client, "Ada")
	_, home := w.get(t, w.client, "/")
	v := url.Values{"_csrf": {csrf(home)}, "question": {question}, "max_iterations": {"3"}, "strategy_checkpoint": {"true"}, "sources": testapp.Sources}
	for k, vs := range extra {
		v[k] = vs
	}
	res, _ := w.post(t, w.client, "/runs", v)
	require.Equal(t, http.StatusOK, res.StatusCode)
	runID := strings.TrimPrefix(res.Request.URL.Path, "/runs/")
	w.waitFor(t, runID, "waiting")
	return runID
}

// TestClarifyForm: a run started with "ask me first" on an ambiguous
// question shows the clarifying questions before any strategy, each with
// its options as radio buttons; an answer of one's own that the gate
// refuses comes back with the error by its question (422) and the answers
// kept; the answers posted then shape the intent the strategy shows, and
// are recorded as the checkpoint's decision.
func TestClarifyForm(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID := w.startFromHome(t, "Does CBT reduce insomnia?", url.Values{"clarify": {"true"}})
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "clarify", st.Checkpoint.Kind)
	var p pipeline.ClarifyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &p))
	require.Len(t, p.Questions, 3)

	_, doc := w.get(t, w.client, "/runs/"+runID)
	require.Empty(t, doc.Find(`[data-testid="checkpoint-strategy"]`).Nodes)
	form := doc.Find(`form[data-testid="clarify-form"]`)
	require.Len(t, form.Find(`[data-testid="clarify-item"]`).Nodes, 3)
	years := form.Find(`[data-question="time_frame"]`)
	require.Len(t, years.Find(`input[type="radio"]`).Nodes, 4, "three options and Other")
	action := form.AttrOr("action", "")

	v := url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}, "answer:acronym-cbt": {"cognitive behavioural therapy"},
		"answer:population": {"Adults"}, "answer:time_frame": {"__other__"}, "other:time_frame": {"recent ones"}}
	res, doc := w.post(t, w.client, action, v)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, doc.Find(`[data-field="answers.time_frame"]`).Text(), "names no year")
	require.Equal(t, "recent ones", doc.Find(`input[name="other:time_frame"]`).AttrOr("value", ""))
	_, checked := doc.Find(`input[name="answer:population"][value="Adults"]`).Attr("checked")
	require.True(t, checked, "the answers are kept")

	v.Set("other:time_frame", "2018 to 2024")
	res, _ = w.post(t, w.client, action, v)
	require.Equal(t, http.StatusOK, res.StatusCode)
	st = w.waitForCheckpoint(t, runID, "strategy_confirmation", 1)
	var sp pipeline.StrategyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &sp))
	require.Equal(t, research.YearRange{From: 2018, To: 2024}, sp.Intent.YearRange)
	require.Contains(t, sp.Intent.Concepts, research.Concept{Term: "adults"})
	require.Equal(t, 2018, sp.Strategy.YearRange.From, "the strategy searches the years answered")
	_, doc = w.get(t, w.client, "/runs/"+runID)
	require.Contains(t, doc.Find(`[data-testid="decision"]`).First().Text(), "clarify", "the answers are the checkpoint's decision")
	require.Contains(t, doc.Find(`[data-testid="checkpoint-strategy"] [data-testid="intent-concepts"]`).Text(), "adults")
}

// TestAPIClarify: a run started through the API with clarify asks its
// questions at a "clarify" checkpoint (GET /api/runs/:id shows them);
// the decisions endpoint takes the answers as revised_data {answers},
// refusing one that names no option (422, nothing decided), and the
// strategy that follows is built from the intent they shaped.
func TestAPIClarify(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true,
		"clarify": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "clarify", 1)
	var p pipeline.ClarifyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &p))
	require.NotEmpty(t, p.Questions)
	require.LessOrEqual(t, len(p.Questions), research.MaxClarifyingQuestions)

	decide := "/api/runs/" + created.ID + "/decisions"
	res := w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve",
		"revised_data": map[string]any{"answers": map[string]string{"time_frame": "Tomorrow"}}})
	res.Body.Close()
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	w.waitForCheckpoint(t, created.ID, "clarify", 1)

	res = w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve",
		"revised_data": map[string]any{"answers": map[string]string{"time_frame": "The last 10 years"}}})
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	st = w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	var sp pipeline.StrategyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &sp))
	require.Equal(t, research.YearRange{From: 2015, To: 2025}, sp.Intent.YearRange)
	require.Equal(t, 2015, sp.Strategy.YearRange.From)
}
