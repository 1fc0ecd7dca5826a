package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
)

// TestAPIRunPapersPage: GET /api/runs/:id holds one page of its paper
// lists (50 unless ?per_page=), the review payload's the same page as the
// collection's, with papers_page saying which; a bad page is 422 naming
// the field.
func TestAPIRunPapersPage(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, all := markRun(t, w, false)
	require.Len(t, all, 8)

	read := func(query string) (handlers.RunJSON, []string) {
		t.Helper()
		res := w.doJSON(t, http.MethodGet, "/api/runs/"+runID+query, nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		var run handlers.RunJSON
		require.NoError(t, json.NewDecoder(res.Body).Decode(&run))
		var payload struct {
			Collection struct {
				Papers []struct{ ID string } `json:"papers"`
			} `json:"collection"`
		}
		require.NoError(t, json.Unmarshal(run.Checkpoint.Payload, &payload))
		var ids []string
		for _, p := range payload.Collection.Papers {
			ids = append(ids, p.ID)
		}
		return run, ids
	}

	run, payloadIDs := read("")
	require.Equal(t, all, payloadIDs)
	require.Len(t, run.Collection.Papers, 8)
	require.Equal(t, &handlers.PapersPageJSON{Page: 1, PerPage: 50, Pages: 1, CollectionTotal: 8}, run.PapersPage)

	var paged []string
	for page, query := range []string{"?per_page=3", "?per_page=3&page=2", "?per_page=3&page=3"} {
		run, payloadIDs := read(query)
		require.Equal(t, &handlers.PapersPageJSON{Page: page + 1, PerPage: 3, Pages: 3, CollectionTotal: 8}, run.PapersPage)
		var ids []string
		for _, p := range run.Collection.Papers {
			ids = append(ids, p.ID)
		}
		require.Equal(t, payloadIDs, ids, "the payload's page is the collection's")
		named := 0
		for _, g := range run.Collection.Groups {
			require.Subset(t, ids, g.PaperIDs, "groups name the page's papers")
			named += len(g.PaperIDs)
		}
		require.Positive(t, named)
		require.Equal(t, 8, run.Collection.Counts.NotScreened, "counts are the whole run's")
		paged = append(paged, ids...)
	}
	require.Equal(t, all, paged)
	run, payloadIDs = read("?per_page=3&page=9")
	require.Empty(t, run.Collection.Papers)
	require.NotNil(t, run.Collection.Papers, "an empty list, not null")
	require.Empty(t, payloadIDs)

	for query, field := range map[string]string{"?page=0": "page", "?page=x": "page", "?per_page=0": "per_page", "?per_page=1001": "per_page"} {
		res := w.doJSON(t, http.MethodGet, "/api/runs/"+runID+query, nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, query)
		require.Contains(t, fieldsOf(t, res), field, query)
	}
}
