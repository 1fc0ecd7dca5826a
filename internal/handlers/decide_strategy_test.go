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
	for _, name := range []string{"year_from", "year_to", "max_results_per_source", "include_terms", "exclude_terms", "fields_of_study", "note"} {
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

// TestStrategyRefusesQueriesThatSearchNothing: a query of punctuation only,
// or with another search engine's syntax (sleep^2), is refused at the
// checkpoint with a 422 that puts the reason, naming the offending text,
// under that query, and keeps what was typed; nothing is decided.
func TestStrategyRefusesQueriesThatSearchNothing(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
	vals := strategyValues(doc)
	n := len(vals["query"])
	vals.Add("query", "*")
	vals.Add("query", "sleep^2 memory")
	vals.Set("action", "edit")
	res, doc := w.post(t, w.client, action, vals)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, doc.Find(`[data-field="queries[`+itoa(n)+`].text"]`).Text(), "no word to search for")
	require.Contains(t, doc.Find(`[data-field="queries[`+itoa(n+1)+`].text"]`).Text(), `"^" in sleep^2`)
	require.Equal(t, "sleep^2 memory", doc.Find(`input#query-`+itoa(n+1)).AttrOr("value", ""), "what was typed is kept")
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind, "nothing was decided")
}

// TestStrategyFieldsOfStudy: each proposed query shows its text as each
// source receives it; fields of study are an editable filter, a name no
// source filters by comes back as a field error with the text kept, and a
// valid one is searched spelled as listed.
func TestStrategyFieldsOfStudy(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	form := doc.Find(`form[data-testid="strategy-form"]`)
	sent := form.Find(`[data-testid="query-row"]`).First().Find(`[data-testid="sent-as-query"]`)
	require.Equal(t, len(testapp.Sources), sent.Length(), "one form per source")
	require.NotEmpty(t, strings.TrimSpace(sent.First().Text()))
	require.Empty(t, form.Find(`input#fields_of_study`).AttrOr("value", ""), "no field filter unless the researcher sets one")
	require.Contains(t, form.Find(`#fields-hint`).Text(), "Computer Science")

	action := form.AttrOr("action", "")
	vals := strategyValues(doc)
	vals.Set("fields_of_study", "Neuroscience, medicine")
	vals.Set("action", "edit")
	res, doc := w.post(t, w.client, action, vals)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, doc.Find(`[data-field="filters.fields_of_study"]`).Text(), `"Neuroscience": not a field of study`)
	require.Equal(t, "Neuroscience, medicine", doc.Find(`input#fields_of_study`).AttrOr("value", ""), "what was typed is kept")

	vals.Set("fields_of_study", "medicine")
	res, _ = w.post(t, w.client, action, vals)
	require.Equal(t, http.StatusOK, res.StatusCode)
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	require.Equal(t, []string{"Medicine"}, st.History[0].Strategy.Filters.FieldsOfStudy)
}

// TestStrategyConflictKeepsWhatWasTyped: a strategy submit that loses to
// someone else's decision (409) shows the form as it was submitted —
// queries, sources, years, filters, note — read-only in the conflict box,
// labelled as not saved, for a plain post and for an htmx one alike.
func TestStrategyConflictKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	action := doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
	stale := strategyValues(doc)
	stale["query"] = []string{"hippocampal replay during slow-wave sleep", "  ", "targeted memory reactivation"}
	stale.Set("year_from", "2010")
	stale.Set("include_terms", "humans, adults")
	stale.Set("note", "narrowed to human studies; see protocol §2")
	stale.Set("action", "approve")

	// Grace decides first, in her own session.
	grace := newClient(t)
	w.signIn(t, grace, "Grace")
	_, gdoc := w.get(t, grace, "/runs/"+runID)
	res, _ := w.post(t, grace, action, url.Values{"_csrf": {csrf(gdoc)}, "action": {"approve"}})
	require.Equal(t, http.StatusOK, res.StatusCode)

	check := func(t *testing.T, doc *goquery.Document) {
		t.Helper()
		box := doc.Find(`[data-testid="conflict"]`)
		require.Contains(t, box.Find(`[data-testid="conflict-message"]`).Text(), "Grace")
		sub := box.Find(`[data-testid="submitted"]`)
		require.Contains(t, sub.Find(`[data-testid="submitted-label"]`).Text(), "not saved")
		value := func(testID string) []string {
			return sub.Find(`input[data-testid="` + testID + `"]`).Map(func(_ int, s *goquery.Selection) string {
				_, readonly := s.Attr("readonly")
				require.True(t, readonly, "%s is read-only", testID)
				return s.AttrOr("value", "")
			})
		}
		require.Equal(t, []string{"hippocampal replay during slow-wave sleep", "targeted memory reactivation"}, value("submitted-query"),
			"the typed queries, blank ones left out")
		require.Equal(t, []string{strings.Join(stale["sources"], ", ")}, value("submitted-sources"))
		require.Equal(t, []string{"2010"}, value("submitted-year-from"))
		require.Equal(t, []string{"humans, adults"}, value("submitted-include-terms"))
		require.Equal(t, []string{"narrowed to human studies; see protocol §2"}, value("submitted-strategy-note"))
		require.Empty(t, sub.Find(`[data-testid="submitted-feedback"]`).Nodes, "no review fields")
	}

	t.Run("Post", func(t *testing.T) {
		res, doc := w.post(t, w.client, action, stale)
		require.Equal(t, http.StatusConflict, res.StatusCode)
		check(t, doc)
		// The page shows the run's current state, not the stale form.
		require.Empty(t, doc.Find(`form[data-testid="strategy-form"]`).Nodes)
	})
	t.Run("HTMX", func(t *testing.T) {
		// "Add query" swaps only the form; the conflict swaps <main>.
		vals := url.Values{}
		for k, v := range stale {
			vals[k] = v
		}
		vals.Del("action")
		vals.Set("op", "add")
		res, doc := w.htmx(t, w.client, http.MethodPost, action, vals)
		require.Equal(t, http.StatusConflict, res.StatusCode)
		require.Equal(t, "#main", res.Header.Get("HX-Retarget"))
		require.Equal(t, "#main", res.Header.Get("HX-Reselect"))
		require.True(t, strings.HasPrefix(res.Header.Get("HX-Reswap"), "outerHTML"))
		require.Equal(t, 1, doc.Find(`main#main [data-testid="conflict"]`).Length())
		check(t, doc)
	})
	t.Run("BareApprove", func(t *testing.T) {
		// A post with no form fields (a script's approve) has nothing to show.
		res, doc := w.post(t, w.client, action, url.Values{"_csrf": {stale.Get("_csrf")}, "action": {"approve"}})
		require.Equal(t, http.StatusConflict, res.StatusCode)
		require.Contains(t, doc.Find(`[data-testid="conflict-message"]`).Text(), "Grace")
		require.Empty(t, doc.Find(`[data-testid="submitted"]`).Nodes)
	})
}
