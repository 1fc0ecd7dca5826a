package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// badStrategyFields are the problems of issue 16's example edit: query 1
// is not query syntax (boosting, a PubMed field tag), query 2 is empty and
// the years run backwards.
var badStrategyFields = []string{"queries[0].text", "queries[1].text", "year_range.from"}

// TestAPIStrategyErrorsAllAtOnce (issue 16, defect 4): an API edit whose
// strategy has several problems gets one 422 naming every field; on the
// old code the query's syntax was checked only once everything else was
// valid, so query 1's error came in a second round.
func TestAPIStrategyErrorsAllAtOnce(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	created := w.startAPIRun(t, map[string]any{"question": "sleep deprivation and working memory", "strategy_checkpoint": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, "strategy_confirmation", 1)
	res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "edit",
		"revised_data": map[string]any{
			"queries":    []map[string]string{{"text": "sleep^2 deprivation[tiab]"}, {"text": ""}},
			"sources":    testapp.Sources,
			"year_range": map[string]int{"from": 2020, "to": 2001}, "max_results_per_source": 25, "filters": map[string]any{},
		}})
	defer res.Body.Close()
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	var eb handlers.ErrorBody
	require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
	require.Equal(t, "invalid", eb.Error.Code)
	for _, k := range badStrategyFields {
		require.Contains(t, eb.Error.Fields, k, "%v", eb.Error.Fields)
	}
	require.Contains(t, eb.Error.Fields["queries[0].text"], "^")
}

// TestStrategyFormErrorsAllAtOnce (issue 16, defects 4 and 9): the same
// edit through the strategy form comes back (422) with all three errors,
// each input marked aria-invalid and described by its error's text, the
// first invalid input autofocused, the values kept; the page names its
// own address for the address bar (data-page-url), and a GET of the
// form's POST-only action leads to the run's page instead of a 405. On the
// old code query 1 had no error, no input had aria attributes and the GET
// was a 405.
func TestStrategyFormErrorsAllAtOnce(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	_, home := w.get(t, w.client, "/")
	res, _ := w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep deprivation and working memory"},
		"max_iterations": {"2"}, "strategy_checkpoint": {"true"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runPath := res.Request.URL.Path
	w.waitFor(t, strings.TrimPrefix(runPath, "/runs/"), "waiting")
	_, page := w.get(t, w.client, runPath)
	action := page.Find(`[data-testid="strategy-form"]`).AttrOr("action", "")
	require.NotEmpty(t, action)

	form := url.Values{"_csrf": {csrf(page)}, "action": {"edit"}, "query": {"sleep^2 deprivation[tiab]", ""},
		"sources": testapp.Sources, "year_from": {"2020"}, "year_to": {"2001"}, "max_results_per_source": {"25"},
		"include_terms": {""}, "exclude_terms": {""}, "fields_of_study": {""}, "note": {""}}
	res, doc := w.post(t, w.client, action, form)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	inputs := map[string]string{"queries[0].text": "#query-0", "queries[1].text": "#query-1", "year_range.from": "#year_from"}
	for _, k := range badStrategyFields {
		msg := doc.Find(`[data-testid="field-error"][data-field="` + k + `"]`)
		require.Equal(t, 1, msg.Length(), k)
		id := msg.AttrOr("id", "")
		require.NotEmpty(t, id, k)
		in := doc.Find(inputs[k])
		require.Equal(t, "true", in.AttrOr("aria-invalid", ""), k)
		require.Contains(t, strings.Fields(in.AttrOr("aria-describedby", "")), id, k)
	}
	require.Equal(t, 1, doc.Find("[autofocus]").Length(), "one field has the focus")
	require.Equal(t, "query-0", doc.Find("[autofocus]").AttrOr("id", ""))
	require.Equal(t, "sleep^2 deprivation[tiab]", doc.Find("#query-0").AttrOr("value", ""))
	require.Equal(t, "2001", doc.Find("#year_to").AttrOr("value", ""))
	_, invalid := doc.Find("#year_to").Attr("aria-invalid")
	require.False(t, invalid)
	require.Equal(t, runPath, doc.Find("[data-page-url]").AttrOr("data-page-url", ""))

	res, _ = w.get(t, w.client, action)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, runPath, res.Request.URL.Path, "the action's GET leads to the run's page")
}
