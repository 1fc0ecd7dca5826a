package handlers_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
)

// TestStartReportsEveryFieldError: starting a run with several bad values
// names every one of them at once, through the API and the form, so a
// person fixes all of them in one go.
func TestStartReportsEveryFieldError(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)

	res := w.postJSON(t, "/api/runs", map[string]any{"question": "ab", "max_iterations": 99, "sources": []string{"zzz"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	var eb handlers.ErrorBody
	require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
	require.Equal(t, "invalid", eb.Error.Code)
	require.Equal(t, []string{"max_iterations", "question", "sources"}, slices.Sorted(maps.Keys(eb.Error.Fields)), eb.Error.Fields)
	require.Equal(t, "the question must be 3 to 2,000 characters long", eb.Error.Fields["question"])

	// Parameters alone (a good question) are still all reported.
	res = w.postJSON(t, "/api/runs", map[string]any{"question": "sleep and memory", "max_iterations": 0, "sources": []string{"zzz"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	eb = handlers.ErrorBody{}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
	require.Equal(t, []string{"max_iterations", "sources"}, slices.Sorted(maps.Keys(eb.Error.Fields)), eb.Error.Fields)

	w.signIn(t, w.client, "Ada")
	tests := []struct {
		name string
		form url.Values
		want []string
	}{
		{"BadQuestionAndBounds", url.Values{"question": {"ab"}, "max_iterations": {"99"}, "sources": {"zzz"}}, []string{"max_iterations", "question", "sources"}},
		{"NotANumber", url.Values{"question": {"ab"}, "max_iterations": {"many"}, "sources": {"library"}}, []string{"max_iterations", "question"}},
	}
	for _, tt := range tests {
		_, home := w.get(t, w.client, "/")
		tt.form.Set("_csrf", csrf(home))
		res, doc := w.post(t, w.client, "/runs", tt.form)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, tt.name)
		var got []string
		doc.Find(`form[data-testid="search-form"] [data-testid="field-error"]`).Each(func(_ int, s *goquery.Selection) {
			got = append(got, s.AttrOr("data-field", ""))
		})
		slices.Sort(got)
		require.Equal(t, tt.want, got, tt.name)
		require.Equal(t, tt.form.Get("max_iterations"), doc.Find("input#max_iterations").AttrOr("value", ""), "values are kept")
	}
}
