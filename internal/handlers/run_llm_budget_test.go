package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/pipeline"
)

// schemaLLM is an OpenAI-compatible server that honours structured
// output: it answers each skill's schema (by its name) with a valid
// answer, counting 600 tokens in and 100 out per call. It records the
// response formats it was asked for.
func schemaLLM(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	answers := map[string]string{
		"search_intent": `{"topic":"sleep and memory consolidation","concepts":[{"term":"sleep","synonyms":["slumber"]},{"term":"memory consolidation","synonyms":[]}],` +
			`"year_range":{"from":0,"to":0},"include_terms":[],"exclude_terms":[],"fields_of_study":[],"study_types":[]}`,
		"clarifying_questions": `{"questions":[]}`,
		"search_queries":       `{"queries":["sleep \"memory consolidation\""]}`,
		"relevance_scores":     `{"scores":[{"n":1,"score":0.9,"reason":"on the question"}]}`,
	}
	var mu sync.Mutex
	var formats []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		formats = append(formats, body.ResponseFormat.Type+":"+body.ResponseFormat.JSONSchema.Name)
		mu.Unlock()
		content, ok := answers[body.ResponseFormat.JSONSchema.Name]
		if !ok {
			http.Error(w, `{"error":{"message":"unknown schema"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "schema",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content, "refusal": nil}}},
			"usage": map[string]any{"prompt_tokens": 600, "completion_tokens": 100, "total_tokens": 700},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), formats...)
	}
}

// TestRunTokenBudgetFallsBackWithNote: a run whose token budget the first
// call spends asks the model no more; the later skills answer offline,
// the run's notes say why, and the run page, the API and the PRISMA-S
// report show what the run spent, as stored with the run.
func TestRunTokenBudgetFallsBackWithNote(t *testing.T) {
	t.Parallel()
	model, formats := schemaLLM(t)
	search, err := app.NewSearch(app.Search{
		Sources: []string{research.SourceLocal},
		LLM:     llm.Config{Provider: llm.ProviderOpenAI, BaseURL: model.URL + "/v1", Model: "schema", RunTokenBudget: 500},
	}, notesLibrary{}, nil)
	require.NoError(t, err)
	reg, err := engine.NewRegistry(search.Workflow())
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)

	w.signIn(t, w.client, "Ada")
	_, home := w.get(t, w.client, "/")
	res, _ := w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"},
		"max_iterations": {"2"}, "strategy_checkpoint": {"true"}, "sources": {research.SourceLocal}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runID := strings.TrimPrefix(res.Request.URL.Path, "/runs/")
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)

	require.Equal(t, []string{"json_schema:search_intent"}, formats(), "one structured call, then the budget was spent")

	run, err := a.Store().Run(context.Background(), runID)
	require.NoError(t, err)
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	require.NotNil(t, rs.LLMUsage, "the usage is stored with the run")
	require.Equal(t, 1, rs.LLMUsage.Calls)
	require.EqualValues(t, 600, rs.LLMUsage.TokensIn)
	require.EqualValues(t, 100, rs.LLMUsage.TokensOut)
	require.Positive(t, rs.LLMUsage.Skipped)
	require.Equal(t, "sleep and memory consolidation", rs.Intent.Topic, "the model's intent was used")
	var budgetNote *research.Note
	for i, n := range rs.Notes {
		if strings.Contains(n.Message, "token budget of 500 tokens is spent") {
			budgetNote = &rs.Notes[i]
			break
		}
	}
	require.NotNil(t, budgetNote, "the notes say the budget was spent: %v", rs.Notes)
	require.Contains(t, budgetNote.Message, "offline")

	_, doc := w.get(t, w.client, "/runs/"+runID)
	require.Contains(t, doc.Find(`[data-testid="skill-notes"]`).Text(), "token budget of 500 tokens is spent")
	usage := doc.Find(`[data-testid="llm-usage"]`).Text()
	require.Contains(t, usage, "1 call, 600 tokens in, 100 tokens out")
	require.Contains(t, usage, "not sent: the run's token budget was spent")

	api := w.getRun(t, runID)
	require.NotNil(t, api.LLMUsage, "the API shows the usage")
	require.Equal(t, *rs.LLMUsage, *api.LLMUsage)

	_, body := w.download(t, "/runs/"+runID+"/report.md")
	require.Contains(t, body, "## Language model use")
	require.Contains(t, body, "- Calls: 1 (600 tokens in, 100 tokens out;")
	require.Contains(t, body, "token budget of 500 tokens is spent")
}
