package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/research"
	"quarry/internal/skills/llm"
)

// meteredFile is a workflow file whose two skill stages call the search's
// LLM-backed intent parser and query builder.
const meteredFile = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: metered, title: "Metered", version: 1}
params:
  - {name: question, type: string, required: true}
stages:
  - id: read
    type: skill
    skill: search.parse
    with: {question: "{{ params.question }}"}
    outputs: [{name: intent, required: true}]
  - id: plan
    type: skill
    skill: search.strategy
    with: {intent: "{{ outputs.read.intent }}"}
    outputs: [{name: strategy, required: true}, {name: queries}]
`

// meteredApp serves an app whose workflows directory holds meteredFile
// and whose skills ask model under budget tokens a run.
func meteredApp(t *testing.T, modelURL string, budget int64) *web {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "metered.yaml"), []byte(meteredFile), 0o644))
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), WorkflowsDir: dir,
		Search: app.Search{Sources: []string{research.SourceLocal},
			LLM: llm.Config{Provider: llm.ProviderOpenAI, BaseURL: modelURL + "/v1", Model: "schema", RunTokenBudget: budget}}})
	require.NoError(t, err)
	return serveApp(t, a)
}

// runMetered starts a metered run through the API and waits for it to end.
func runMetered(t *testing.T, w *web) handlers.RunJSON {
	t.Helper()
	created := w.startAPIRun(t, map[string]any{"workflow": "metered", "params": map[string]any{"question": "sleep and memory consolidation"}})
	var run handlers.RunJSON
	require.Eventually(t, func() bool {
		run = w.getRun(t, created.ID)
		return run.Status == "completed" || run.Status == "failed" || run.Status == "escalated"
	}, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, "completed", run.Status, run.Error)
	return run
}

// TestWorkflowFileRunRecordsLLMUsage: the LLM calls of a workflow file's
// skill stages are recorded on the run as a search run's are, adding up
// across stages: the API, the run page and the metrics show them.
func TestWorkflowFileRunRecordsLLMUsage(t *testing.T) {
	t.Parallel()
	model, formats := schemaLLM(t)
	w := meteredApp(t, model.URL, 0)
	run := runMetered(t, w)
	require.Equal(t, []string{"json_schema:search_intent", "json_schema:search_queries"}, formats(), "each stage asked the model")
	require.NotNil(t, run.LLMUsage, "the API shows the usage")
	require.Equal(t, 2, run.LLMUsage.Calls)
	require.EqualValues(t, 1200, run.LLMUsage.TokensIn)
	require.EqualValues(t, 200, run.LLMUsage.TokensOut)
	require.Zero(t, run.LLMUsage.Skipped)
	require.Empty(t, run.Notes)

	w.signIn(t, w.client, "Ada")
	_, doc := w.get(t, w.client, "/runs/"+run.ID)
	require.Contains(t, doc.Find(`[data-testid="llm-usage"]`).Text(), "2 calls, 1200 tokens in, 200 tokens out")

	fam := w.scrape(t)["quarry_llm_tokens_total"]
	require.NotNil(t, fam, "the calls reached the metrics")
	in, ok := value(fam, map[string]string{"direction": "in"})
	require.True(t, ok)
	require.EqualValues(t, 1200, in)
}

// TestWorkflowFileRunTokenBudgetFallsBackWithNote: with a budget the
// first call spends, a workflow file's second LLM-backed stage does not
// ask the model: the offline builder answers, the run says so in its
// notes, and its usage counts the request not sent.
func TestWorkflowFileRunTokenBudgetFallsBackWithNote(t *testing.T) {
	t.Parallel()
	model, formats := schemaLLM(t)
	w := meteredApp(t, model.URL, 500)
	run := runMetered(t, w)
	require.Equal(t, []string{"json_schema:search_intent"}, formats(), "one call, then the budget was spent")
	require.NotNil(t, run.LLMUsage)
	require.Equal(t, 1, run.LLMUsage.Calls)
	require.EqualValues(t, 600, run.LLMUsage.TokensIn)
	require.EqualValues(t, 100, run.LLMUsage.TokensOut)
	require.Equal(t, 1, run.LLMUsage.Skipped)
	var note string
	for _, n := range run.Notes {
		if strings.Contains(n.Message, "token budget of 500 tokens is spent") {
			note = n.Message
		}
	}
	require.NotEmpty(t, note, "the API's notes say the budget was spent: %v", run.Notes)
	require.Contains(t, note, "offline")

	w.signIn(t, w.client, "Ada")
	_, doc := w.get(t, w.client, "/runs/"+run.ID)
	require.Contains(t, doc.Find(`[data-testid="skill-notes"]`).Text(), "token budget of 500 tokens is spent")
	usage := doc.Find(`[data-testid="llm-usage"]`).Text()
	require.Contains(t, usage, "1 call, 600 tokens in, 100 tokens out")
	require.Contains(t, usage, "not sent: the run's token budget was spent")
}
