package handlers_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"
)

// TestBoostedStrategyFormGetsWholePages: the strategy form is boosted
// (htmx posts it and swaps the answer in as the page's body), so its
// answers are whole pages, as without JavaScript: a 422 is the run page
// with every field error, not the form fragment an htmx button gets, and
// an approval is followed to the page the run reached.
func TestBoostedStrategyFormGetsWholePages(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	form := doc.Find(`form[data-testid="strategy-form"]`)
	require.Equal(t, "true", form.AttrOr("hx-boost", ""), "the strategy form is boosted")
	action := form.AttrOr("action", "")

	boosted := func(v url.Values) (*http.Response, *goquery.Document) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, w.srv.URL+action, strings.NewReader(v.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		req.Header.Set("HX-Boosted", "true")
		res, err := w.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		page, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		require.NoError(t, err)
		return res, page
	}

	bad := strategyValues(doc)
	bad.Set("year_from", "2020")
	bad.Set("year_to", "2001")
	bad.Set("action", "edit")
	res, page := boosted(bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, 1, page.Find("body").Length(), "a whole page")
	require.Equal(t, 1, page.Find(`[data-testid="checkpoint-strategy"]`).Length())
	require.Equal(t, "/runs/"+runID, page.Find("[data-page-url]").AttrOr("data-page-url", ""), "the page names its own address")
	require.Contains(t, page.Find(`form[data-testid="strategy-form"]`).Text(), "2001")

	ok := strategyValues(doc)
	ok.Set("action", "approve")
	res, page = boosted(ok)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "/runs/"+runID, res.Request.URL.Path, "the decision's redirect is followed")
	require.Equal(t, 1, page.Find(`[data-testid="checkpoint-review"]`).Length(), "the page the run reached: its review")
}
