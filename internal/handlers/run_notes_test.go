package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources"
)

// notesLibrary is the local library as the search sees it: every test
// library paper, whatever the query.
type notesLibrary struct{}

func (notesLibrary) Name() string { return research.SourceLocal }

func (notesLibrary) Search(_ context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	papers := testapp.Library()
	for i := range papers {
		papers[i].Source = research.SourceLocal
	}
	return papers[:min(len(papers), req.MaxResults)], nil
}

// garbledLLM is an OpenAI-compatible server whose model always answers
// with text that is not JSON, so every LLM skill falls back to its offline
// variant. It counts the completions asked for.
func garbledLLM(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "garbled",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "Sure! Here are some thoughts, not JSON."}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

// TestRunPageShowsSkillNotes: with a configured model that answers garbage,
// the LLM skills fall back to the offline ones and record why; the run
// page lists those notes under a heading of their own, as the README says.
func TestRunPageShowsSkillNotes(t *testing.T) {
	t.Parallel()
	model, asked := garbledLLM(t)
	search, err := app.NewSearch(app.Search{
		Sources: []string{research.SourceLocal},
		LLM:     llm.Config{Provider: llm.ProviderOpenAI, BaseURL: model.URL + "/v1", Model: "garbled"},
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
	require.Positive(t, asked.Load(), "the model was asked")

	run, err := a.Store().Run(context.Background(), runID)
	require.NoError(t, err)
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	require.NotEmpty(t, rs.Notes, "the fallbacks are recorded in the run's state")

	_, doc := w.get(t, w.client, "/runs/"+runID)
	section := doc.Find(`[data-testid="skill-notes"]`)
	require.Equal(t, 1, section.Length())
	require.Equal(t, "Notes from the run", strings.TrimSpace(section.Find("h2").Text()))
	shown := section.Find(`[data-testid="skill-note"]`)
	require.Equal(t, len(rs.Notes), shown.Length(), "every note is listed")
	skillsNoted := shown.Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-skill", "") })
	require.Contains(t, skillsNoted, llm.SkillIntentParser)
	require.Contains(t, skillsNoted, llm.SkillQueryBuilder)
	for i, n := range rs.Notes {
		require.Contains(t, shown.Eq(i).Text(), n.Message)
	}
	require.Contains(t, shown.First().Text(), "offline")
}

// TestRunPageWithoutSkillNotes: a run whose skills noted nothing shows no
// notes section.
func TestRunPageWithoutSkillNotes(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	require.NotEmpty(t, runID)
	require.Equal(t, 0, doc.Find(`[data-testid="skill-notes"]`).Length())
}
