package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
)

// TestRunReadsFollowChanges: the run page and GET /api/runs/:id, which
// keep the decoded run between requests (runCache), show a mark saved
// after they were read, and the run moving on after a decision.
func TestRunReadsFollowChanges(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	runID, ids := markRun(t, w, false)

	apiMark := func(paperID string) string {
		t.Helper()
		res := w.doJSON(t, http.MethodGet, "/api/runs/"+runID, nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		var out handlers.RunJSON
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		require.NotNil(t, out.Collection)
		for _, p := range out.Collection.Papers {
			if p.ID == paperID {
				return p.Mark
			}
		}
		t.Fatalf("paper %s not in the collection", paperID)
		return ""
	}
	pageMark := func(paperID string) string {
		t.Helper()
		res, doc := w.get(t, w.client, "/runs/"+runID)
		require.Equal(t, http.StatusOK, res.StatusCode)
		var checked string
		doc.Find(`input[type="radio"][checked]`).Each(func(_ int, s *goquery.Selection) {
			if s.AttrOr("name", "") == "mark:"+paperID {
				checked = s.AttrOr("value", "")
			}
		})
		return checked
	}

	for range 2 { // the second read comes from the cache
		require.Equal(t, "", apiMark(ids[0]))
		require.Equal(t, "unsure", pageMark(ids[0]))
	}
	res := w.doJSON(t, http.MethodPut, markPath(runID, ids[0]), map[string]string{"mark": "relevant"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "relevant", apiMark(ids[0]))
	require.Equal(t, "relevant", pageMark(ids[0]))
	res = w.doJSON(t, http.MethodPut, markPath(runID, ids[0]), map[string]string{"mark": "irrelevant"})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "irrelevant", apiMark(ids[0]))
	require.Equal(t, "irrelevant", pageMark(ids[0]))

	st := w.waitFor(t, runID, "waiting")
	res = w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/decisions", map[string]any{
		"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	done := w.waitFor(t, runID, "completed")
	require.Nil(t, done.Checkpoint)
	_, doc := w.get(t, w.client, "/runs/"+runID)
	require.Zero(t, doc.Find(`input[name="mark:`+ids[0]+`"]`).Length(), "the review form is gone")
}
