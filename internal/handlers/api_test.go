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
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/organize"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/sources"
)

// fallbackBuilder is a query builder that, like an LLM builder whose model
// cannot be reached, notes that it fell back to the offline one.
type fallbackBuilder struct{ skills.QueryBuilder }

const fallbackNote = "openai could not be used (401 unauthorized); the offline query builder was used instead"

func (b fallbackBuilder) BuildStrategy(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error) {
	research.AddNote(ctx, research.Note{Skill: "query_builder", Message: fallbackNote})
	return b.QueryBuilder.BuildStrategy(ctx, in)
}

// librarySource returns every test library paper.
type librarySource struct{}

func (librarySource) Name() string { return "library" }

func (librarySource) Search(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
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

// startAPIRun starts a run through POST /api/runs with params and returns
// what the API answered, checking it is 201 Created.
func (w *web) startAPIRun(t *testing.T, params map[string]any) handlers.RunCreated {
	t.Helper()
	res := w.postJSON(t, "/api/runs", params)
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	return created
}

// TestGetRunNotes: the notes a run's skills left (here a query builder's
// fallback) are in GET /api/runs/:id and in the search-strategy report.
func TestGetRunNotes(t *testing.T) {
	t.Parallel()
	wf, err := pipeline.New(pipeline.Skills{
		Intent:    intent.New(func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }),
		Queries:   fallbackBuilder{querybuilder.New()},
		Sources:   []sources.Source{librarySource{}},
		Dedup:     dedup.New(),
		Scorer:    relevance.Scorer{},
		Organizer: organize.Organizer{},
	}, pipeline.Options{MaxIterations: 2, MaxResultsPerSource: 10})
	require.NoError(t, err)
	reg, err := engine.NewRegistry(wf)
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)

	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": false})
	st := w.waitFor(t, created.ID, "waiting")
	require.Equal(t, []research.Note{{Skill: "query_builder", Message: fallbackNote}}, st.Notes)

	_, md := w.download(t, "/runs/"+created.ID+"/report.md")
	require.Contains(t, md, "## Notes from the run\n")
	require.Contains(t, md, "- query builder: "+fallbackNote+"\n")
}

// TestGetRunNotesEmpty: a run without notes has an empty list, not null,
// so clients can iterate without a check.
func TestGetRunNotesEmpty(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": false, "sources": testapp.Sources})
	w.waitFor(t, created.ID, "waiting")
	r, body := w.download(t, "/api/runs/"+created.ID)
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.True(t, strings.Contains(body, `"notes":[]`), body)
}

// waitForCheckpoint polls the JSON API until the run waits at a checkpoint
// of kind in iteration.
func (w *web) waitForCheckpoint(t *testing.T, runID, kind string, iteration int) handlers.RunJSON {
	t.Helper()
	var out handlers.RunJSON
	require.Eventually(t, func() bool {
		res, err := w.client.Get(w.srv.URL + "/api/runs/" + runID)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		out = handlers.RunJSON{}
		return json.NewDecoder(res.Body).Decode(&out) == nil && out.Status == "waiting" &&
			out.Checkpoint != nil && out.Checkpoint.Kind == kind && out.Checkpoint.Iteration == iteration
	}, 10*time.Second, 20*time.Millisecond, "run %s never waited at %s@%d (last %q)", runID, kind, iteration, out.Status)
	return out
}

// TestAPIDecisionRefusesMalformedRevisedData: revised data with a key the
// checkpoint's type does not have (a typo, a strategy sent to the review,
// feedback sent to the strategy) or a value of the wrong type is a 422
// naming the field, and nothing is recorded: the checkpoint still waits,
// and a corrected decision is accepted and carries its marks.
func TestAPIDecisionRefusesMalformedRevisedData(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 2,
		"strategy_checkpoint": true, "sources": testapp.Sources})
	decide := "/api/runs/" + created.ID + "/decisions"
	refused := func(t *testing.T, cpID, action, revised, wantField string) {
		t.Helper()
		res := w.postJSON(t, decide, map[string]any{"checkpoint_id": cpID, "action": action, "revised_data": json.RawMessage(revised)})
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, revised)
		var eb handlers.ErrorBody
		require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
		require.Equal(t, "invalid", eb.Error.Code)
		require.Contains(t, eb.Error.Fields, wantField, "%s: %v", revised, eb.Error.Fields)
	}

	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	strategy := `{"queries":[{"text":"memory consolidation"}],"sources":["` + testapp.Sources[0] + `"],"max_results_per_source":10`
	for _, tt := range []struct{ name, action, revised, field string }{
		{"UnknownField", "edit", strategy + `,"max_results":5}`, "max_results"},
		{"UnknownNestedField", "edit", strategy + `,"filters":{"exclude":["rodent"]}}`, "filters.exclude"},
		{"FeedbackSentToStrategy", "approve", `{"marked_relevant":["doi:10.5555/sleep.0"]}`, "marked_relevant"},
		{"WrongType", "edit", `{"queries":"memory consolidation","sources":["x"]}`, "queries"},
	} {
		t.Run("Strategy"+tt.name, func(t *testing.T) { refused(t, st.Checkpoint.ID, tt.action, tt.revised, tt.field) })
	}
	res := w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode, "the refused decisions left the checkpoint pending")

	st = w.waitForCheckpoint(t, created.ID, "result_review", 1)
	var payload struct {
		Collection struct {
			Papers []struct {
				ID string `json:"id"`
			} `json:"papers"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &payload))
	require.NotEmpty(t, payload.Collection.Papers)
	id := payload.Collection.Papers[0].ID
	for _, tt := range []struct{ name, action, revised, field string }{
		{"Typo", "edit", `{"marked_relevent":["` + id + `"],"free_text_feedback":"focus on trials"}`, "marked_relevent"},
		{"TypoOnApprove", "approve", `{"marked_relevent":["` + id + `"]}`, "marked_relevent"},
		{"Bogus", "edit", `{"bogus":1}`, "bogus"},
		{"StrategySentToReview", "edit", strategy + `}`, "queries"},
		{"WrongType", "edit", `{"marked_relevant":"` + id + `"}`, "marked_relevant"},
		{"NotAnObject", "reject", `"focus on trials"`, "revised_data"},
	} {
		t.Run("Review"+tt.name, func(t *testing.T) { refused(t, st.Checkpoint.ID, tt.action, tt.revised, tt.field) })
	}

	again := w.waitForCheckpoint(t, created.ID, "result_review", 1)
	require.Equal(t, st.Checkpoint.ID, again.Checkpoint.ID, "nothing was recorded")
	require.Len(t, again.History, 1)
	require.Nil(t, again.History[0].Feedback)

	res = w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "edit",
		"revised_data": map[string]any{"marked_relevant": []string{id}, "free_text_feedback": "focus on trials"}})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	next := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 2)
	require.NotNil(t, next.History[0].Feedback)
	require.Equal(t, []string{id}, next.History[0].Feedback.MarkedRelevant)
	require.Equal(t, "focus on trials", next.History[0].Feedback.FreeTextFeedback)
}

// TestAPIFeedbackAtLastIterationIsNoted: the form offers only "Finish the
// run" at the last iteration, but the API still accepts edit and reject
// there. The run completes within max_iterations either way, and its JSON
// says, in a note, that the feedback was recorded but not searched.
func TestAPIFeedbackAtLastIterationIsNoted(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"edit", "reject"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			w := setupWeb(t)
			created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 1,
				"strategy_checkpoint": false, "sources": testapp.Sources})
			st := w.waitForCheckpoint(t, created.ID, "result_review", 1)

			res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": action,
				"revised_data": map[string]any{"free_text_feedback": "more on naps"}})
			require.Equal(t, http.StatusAccepted, res.StatusCode)
			done := w.waitFor(t, created.ID, "completed")
			require.Equal(t, 1, done.Iteration, "iterations never exceed max_iterations")
			require.Contains(t, done.Notes, research.Note{Skill: "review", Message: "the feedback of iteration 1 (" + action + ") was recorded but not searched: " +
				"the run had reached max_iterations (1), so the decision finished it"})
			require.Len(t, done.History, 1)
			require.NotNil(t, done.History[0].Feedback)
			require.Equal(t, "more on naps", done.History[0].Feedback.FreeTextFeedback)
		})
	}
}

// TestAPIHistorySaysWhatWasNotSearched: an iteration whose strategy was
// rejected at the strategy checkpoint has result_count 0, like a search
// that found nothing; searched and not_searched_reason tell them apart,
// beside the fields the history always had.
func TestAPIHistorySaysWhatWasNotSearched(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 2,
		"strategy_checkpoint": true, "sources": testapp.Sources})
	decide := func(cp *handlers.CheckpointJSON, action string) {
		t.Helper()
		res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": cp.ID, "action": action, "note": "too broad"})
		require.Equal(t, http.StatusAccepted, res.StatusCode)
	}

	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	require.Len(t, st.History, 1)
	require.False(t, st.History[0].Searched)
	require.Equal(t, "not searched yet", st.History[0].NotSearchedReason)
	decide(st.Checkpoint, "reject")

	st = w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 2)
	require.Len(t, st.History, 2)
	rejected := st.History[0]
	require.Equal(t, 1, rejected.Iteration)
	require.Zero(t, rejected.ResultCount)
	require.False(t, rejected.Searched)
	require.Equal(t, "the strategy was rejected at the strategy checkpoint", rejected.NotSearchedReason)
	require.NotEmpty(t, rejected.Strategy.Queries, "the old fields are kept")
	decide(st.Checkpoint, "approve")

	st = w.waitForCheckpoint(t, created.ID, "result_review", 2)
	require.False(t, st.History[0].Searched)
	require.True(t, st.History[1].Searched)
	require.Empty(t, st.History[1].NotSearchedReason)

	_, body := w.download(t, "/api/runs/"+created.ID)
	var raw struct {
		History []map[string]json.RawMessage `json:"history"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &raw))
	require.Len(t, raw.History, 2)
	require.JSONEq(t, `false`, string(raw.History[0]["searched"]))
	require.JSONEq(t, `"the strategy was rejected at the strategy checkpoint"`, string(raw.History[0]["not_searched_reason"]))
	require.JSONEq(t, `0`, string(raw.History[0]["result_count"]))
	require.JSONEq(t, `1`, string(raw.History[0]["iteration"]))
	require.Contains(t, raw.History[0], "strategy")
	require.JSONEq(t, `true`, string(raw.History[1]["searched"]))
	require.NotContains(t, raw.History[1], "not_searched_reason")
}
