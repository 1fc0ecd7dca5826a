package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
)

// startStrategy starts a run with the strategy checkpoint on and returns
// its ID and the page at that checkpoint.
func (w *web) startStrategy(t *testing.T) (string, *goquery.Document) {
	t.Helper()
	w.signIn(t, w.client, "Ada")
	_, home := w.get(t, w.client, "/")
	res, _ := w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"},
		"max_iterations": {"3"}, "strategy_checkpoint": {"true"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runID := strings.TrimPrefix(res.Request.URL.Path, "/runs/")
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)
	_, doc := w.get(t, w.client, "/runs/"+runID)
	return runID, doc
}

// strategyValues are the strategy form's fields as the page shows them,
// the way a browser posts them.
func strategyValues(doc *goquery.Document) url.Values {
	form := doc.Find(`form[data-testid="strategy-form"]`)
	v := url.Values{"_csrf": {csrf(doc)}}
	form.Find(`input[name="query"]`).Each(func(_ int, s *goquery.Selection) { v.Add("query", s.AttrOr("value", "")) })
	form.Find(`input[name="sources"][checked]`).Each(func(_ int, s *goquery.Selection) { v.Add("sources", s.AttrOr("value", "")) })
	for _, name := range []string{"year_from", "year_to", "max_results_per_source", "include_terms", "exclude_terms", "note"} {
		v.Set(name, form.Find(`input[name="`+name+`"]`).AttrOr("value", ""))
	}
	return v
}

// TestStrategyEnterKeeps: the form's first submit button, which Enter in a
// field presses, keeps the values typed, removes no query and decides
// nothing.
func TestStrategyEnterKeeps(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	form := doc.Find(`form[data-testid="strategy-form"]`)
	first := form.Find(`button[type="submit"]`).First()
	require.Equal(t, "op", first.AttrOr("name", ""))
	require.Equal(t, "keep", first.AttrOr("value", ""), "Enter presses the keep button, not Remove or Approve")

	vals := strategyValues(doc)
	n := len(vals["query"])
	vals.Set("year_from", "2012")
	vals.Set("op", "keep")
	res, doc := w.post(t, w.client, form.AttrOr("action", ""), vals)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NotEmpty(t, doc.Find(`[data-testid="enter-notice"]`).Text())
	require.Len(t, doc.Find(`form[data-testid="strategy-form"] input[name="query"]`).Nodes, n)
	require.Equal(t, "2012", doc.Find(`input#year_from`).AttrOr("value", ""))
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)
	require.Empty(t, doc.Find(`[data-testid="decision"]`).Nodes)
}

// TestStrategyApproveKeepsEdits: Approve searches what the form says. A
// changed query or year range is searched (recorded as an edit); an
// emptied or invalid form is refused with its fields named and values
// kept; the untouched form is a plain approve.
func TestStrategyApproveKeepsEdits(t *testing.T) {
	t.Parallel()
	t.Run("Changed", func(t *testing.T) {
		t.Parallel()
		w := setupWeb(t)
		runID, doc := w.startStrategy(t)
		action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
		vals := strategyValues(doc)
		vals["query"] = []string{"memory reactivation"}
		vals.Set("year_from", "2011")
		vals.Set("year_to", "2016")
		vals.Set("action", "approve")
		res, _ := w.post(t, w.client, action, vals)
		require.Equal(t, http.StatusOK, res.StatusCode)
		st := w.waitFor(t, runID, "waiting")
		require.Equal(t, "result_review", st.Checkpoint.Kind)
		require.Len(t, st.History, 1)
		searched := st.History[0].Strategy
		require.Len(t, searched.Queries, 1)
		require.Equal(t, "memory reactivation", searched.Queries[0].Text, "the typed query was searched, not the proposal")
		require.Equal(t, 2011, searched.YearRange.From)
		require.Equal(t, 2016, searched.YearRange.To)
		_, doc = w.get(t, w.client, "/runs/"+runID)
		require.Equal(t, "edit", doc.Find(`[data-testid="decision-action"]`).First().Text())
	})
	t.Run("Unchanged", func(t *testing.T) {
		t.Parallel()
		w := setupWeb(t)
		runID, doc := w.startStrategy(t)
		proposed := doc.Find(`form[data-testid="strategy-form"] input[name="query"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
		vals := strategyValues(doc)
		vals.Set("action", "approve")
		res, _ := w.post(t, w.client, doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", ""), vals)
		require.Equal(t, http.StatusOK, res.StatusCode)
		st := w.waitFor(t, runID, "waiting")
		require.Equal(t, "result_review", st.Checkpoint.Kind)
		var searched []string
		for _, q := range st.History[0].Strategy.Queries {
			searched = append(searched, q.Text)
		}
		require.Equal(t, proposed, searched)
		_, doc = w.get(t, w.client, "/runs/"+runID)
		require.Equal(t, "approve", doc.Find(`[data-testid="decision-action"]`).First().Text())
	})
	t.Run("Emptied", func(t *testing.T) {
		t.Parallel()
		w := setupWeb(t)
		runID, doc := w.startStrategy(t)
		action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
		// What a browser posts once every query is removed and every
		// source unticked: no query or sources keys, empty text fields.
		vals := url.Values{"_csrf": {csrf(doc)}, "year_from": {""}, "year_to": {""}, "max_results_per_source": {"10"},
			"include_terms": {""}, "exclude_terms": {""}, "note": {"looks fine"}, "action": {"approve"}}
		res, doc := w.post(t, w.client, action, vals)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		require.NotEmpty(t, doc.Find(`[data-field="queries"]`).Text())
		require.NotEmpty(t, doc.Find(`[data-field="sources"]`).Text())
		require.Equal(t, "looks fine", doc.Find(`input#strategy_note`).AttrOr("value", ""), "values are kept")
		require.Empty(t, doc.Find(`form[data-testid="strategy-form"] input[name="query"]`).Nodes)
		st := w.waitFor(t, runID, "waiting")
		require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind, "nothing was decided")
	})
	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		w := setupWeb(t)
		runID, doc := w.startStrategy(t)
		vals := strategyValues(doc)
		vals.Set("year_from", "20l2")
		vals.Set("action", "approve")
		res, doc := w.post(t, w.client, doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", ""), vals)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
		require.NotEmpty(t, doc.Find(`[data-field="year_range.from"]`).Text())
		require.Equal(t, "20l2", doc.Find(`input#year_from`).AttrOr("value", ""))
		st := w.waitFor(t, runID, "waiting")
		require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind, "nothing was decided")
	})
}
