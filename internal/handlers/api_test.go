package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/skills"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/organize"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/relevance"
)

// fallbackBuilder is a query builder that, like an LLM builder whose model
// cannot be reached, notes that it fell back to the offline one.
type fallbackBuilder struct{ skills.QueryBuilder }

const fallbackNote = "openai could not be used (401 unauthorized); the offline query builder was used instead"

func (b fallbackBuilder) BuildStrategy(ctx context.Context, in skills.QueryInput) (skills.SearchStrategy, error) {
	skills.AddNote(ctx, skills.Note{Skill: "query_builder", Message: fallbackNote})
	return b.QueryBuilder.BuildStrategy(ctx, in)
}

// librarySource returns every test library paper.
type librarySource struct{}

func (librarySource) Name() string { return "library" }

func (librarySource) Search(context.Context, skills.SourceRequest) ([]skills.RawPaper, error) {
	return testapp.Library(), nil
}

// postJSON sends body as JSON and returns the response.
func (w *web) postJSON(t *testing.T, path string, body any) *http.Response {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	res, err := w.client.Post(w.srv.URL+path, "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// TestGetRunNotes: the notes a run's skills left (here a query builder's
// fallback) are in GET /api/runs/:id and in the search-strategy report.
func TestGetRunNotes(t *testing.T) {
	t.Parallel()
	wf, err := pipeline.New(pipeline.Skills{
		Intent:    skills.NewIntentParser(func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }),
		Queries:   fallbackBuilder{skills.NewQueryBuilder()},
		Sources:   []skills.Source{librarySource{}},
		Dedup:     dedup.New(),
		Scorer:    relevance.Scorer{},
		Organizer: organize.Organizer{},
	}, pipeline.Options{MaxIterations: 2, MaxResultsPerSource: 10})
	require.NoError(t, err)
	reg, err := engine.NewRegistry(wf)
	require.NoError(t, err)
	a, err := app.New(context.Background(), app.Config{Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)

	res := w.postJSON(t, "/api/runs", map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": false})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	st := w.waitFor(t, created.ID, "waiting")
	require.Equal(t, []skills.Note{{Skill: "query_builder", Message: fallbackNote}}, st.Notes)

	_, md := w.download(t, "/runs/"+created.ID+"/report.md")
	require.Contains(t, md, "## Notes from the run\n")
	require.Contains(t, md, "- query builder: "+fallbackNote+"\n")
}

// TestGetRunNotesEmpty: a run without notes has an empty list, not null,
// so clients can iterate without a check.
func TestGetRunNotesEmpty(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	res := w.postJSON(t, "/api/runs", map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": false, "sources": testapp.Sources})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	w.waitFor(t, created.ID, "waiting")
	r, body := w.download(t, "/api/runs/"+created.ID)
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.True(t, strings.Contains(body, `"notes":[]`), body)
}
