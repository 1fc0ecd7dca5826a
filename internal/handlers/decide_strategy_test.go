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
