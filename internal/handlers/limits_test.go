package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
)

// TestAPIDecisionLimits: one decision cannot order unbounded work. A
// strategy edit with more queries, terms per query or filter terms than
// research allows, and a review marking more papers than MaxMarks, are
// refused with 422 naming each field over its limit and the limit, all at
// once, and nothing is recorded: a strategy within the limits is then
// accepted. (Before the limits, 10,000 queries were accepted with 202.)
func TestAPIDecisionLimits(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 2,
		"strategy_checkpoint": true, "sources": testapp.Sources})
	decide := "/api/runs/" + created.ID + "/decisions"
	refused := func(t *testing.T, cpID string, revised any) map[string]string {
		t.Helper()
		res := w.postJSON(t, decide, map[string]any{"checkpoint_id": cpID, "action": "edit", "revised_data": revised})
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		var eb handlers.ErrorBody
		require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
		require.Equal(t, "invalid", eb.Error.Code)
		return eb.Error.Fields
	}

	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	strategy := func(queries []string, excludes int) map[string]any {
		qs := make([]map[string]string, len(queries))
		for i, q := range queries {
			qs[i] = map[string]string{"text": q}
		}
		ex := make([]string, excludes)
		for i := range ex {
			ex[i] = fmt.Sprintf("rodent%d", i)
		}
		return map[string]any{"queries": qs, "sources": testapp.Sources, "max_results_per_source": 10,
			"filters": map[string]any{"exclude_terms": ex}}
	}
	many := make([]string, research.MaxQueries+1)
	for i := range many {
		many[i] = fmt.Sprintf("memory consolidation %d", i)
	}
	t.Run("Queries", func(t *testing.T) {
		fields := refused(t, st.Checkpoint.ID, strategy(many, 0))
		require.Contains(t, fields["queries"], fmt.Sprintf("at most %d", research.MaxQueries), fields)
	})
	t.Run("AllAtOnce", func(t *testing.T) {
		long := "sleep " + strings.Repeat("(memory OR recall) ", research.MaxQueryTerms/2+1)
		fields := refused(t, st.Checkpoint.ID, strategy([]string{"memory consolidation", long}, research.MaxFilterTerms+1))
		require.Contains(t, fields["queries[1].text"], fmt.Sprintf("at most %d", research.MaxQueryTerms), fields)
		require.Contains(t, fields["filters.exclude_terms"], fmt.Sprintf("at most %d", research.MaxFilterTerms), fields)
	})
	res := w.postJSON(t, decide, map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "edit",
		"revised_data": strategy(many[:research.MaxQueries], research.MaxFilterTerms)})
	require.Equal(t, http.StatusAccepted, res.StatusCode, "a strategy at the limits is accepted")

	st = w.waitForCheckpoint(t, created.ID, "result_review", 1)
	marks := make([]string, research.MaxMarks+1)
	for i := range marks {
		marks[i] = fmt.Sprintf("doi:10.5555/none.%d", i)
	}
	t.Run("Marks", func(t *testing.T) {
		fields := refused(t, st.Checkpoint.ID, map[string]any{"marked_relevant": marks})
		require.Contains(t, fields["marks"], fmt.Sprintf("at most %d", research.MaxMarks), fields)
	})
	again := w.waitForCheckpoint(t, created.ID, "result_review", 1)
	require.Equal(t, st.Checkpoint.ID, again.Checkpoint.ID, "nothing was recorded")
}
