package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
)

// poll fetches the status fragment the way htmx does and parses it.
func (w *web) poll(t *testing.T, path string) (*http.Response, *goquery.Document) {
	t.Helper()
	res, doc := w.htmx(t, w.client, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	return res, doc
}

// pollURL is the address a page's status line polls.
func pollURL(t *testing.T, doc *goquery.Document) string {
	t.Helper()
	u, ok := doc.Find(`#run-status`).Attr("hx-get")
	require.True(t, ok, "the status line polls while the run can change")
	return u
}

// graceDecides approves the run's pending checkpoint (shown in the form
// with test id form) from Grace's own session and waits for the run to
// reach settled, which it returns.
func (w *web) graceDecides(t *testing.T, grace *http.Client, runID, form, settled string) handlers.RunJSON {
	t.Helper()
	_, gdoc := w.get(t, grace, "/runs/"+runID)
	action := gdoc.Find(`form[data-testid="`+form+`"]`).AttrOr("action", "")
	require.NotEmpty(t, action, "Grace sees the %s", form)
	res, _ := w.post(t, grace, action, url.Values{"_csrf": {csrf(gdoc)}, "action": {"approve"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	return w.waitFor(t, runID, settled)
}

// grace is a second person, signed in as Grace in her own session.
func (w *web) grace(t *testing.T) *http.Client {
	t.Helper()
	c := newClient(t)
	w.signIn(t, c, "Grace")
	return c
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// bannerText is the banner's message with its whitespace collapsed.
func bannerText(doc *goquery.Document) string {
	return strings.Join(strings.Fields(doc.Find(`[data-testid="stale-message"]`).Text()), " ")
}

// TestStatusPollReloadsUntouchedForms: a page showing a checkpoint form
// nobody has edited (static/app.js adds dirty=0 to the poll) follows the
// run like any other page: when the run moves on, its poll is answered
// with a redirect to the run's page (HX-Redirect), so a person merely watching never has to
// click through a banner.
func TestStatusPollReloadsUntouchedForms(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	strategyPoll := pollURL(t, doc)
	q := mustURL(t, strategyPoll).Query()
	require.Empty(t, q.Get("typed"), "a plain form page holds nothing typed until edited")
	require.Empty(t, q.Get("form"))

	// Nothing has changed: the answer keeps polling the same address.
	res, frag := w.poll(t, strategyPoll+"&dirty=0")
	require.Empty(t, res.Header.Get("HX-Redirect"))
	require.Equal(t, strategyPoll, frag.Find(`#run-status`).AttrOr("hx-get", ""))
	require.Empty(t, frag.Find(`[data-testid="stale-banner"]`).Nodes)

	w.graceDecides(t, w.grace(t), runID, "strategy-form", "waiting")
	res, frag = w.poll(t, strategyPoll+"&dirty=0")
	require.Equal(t, "/runs/"+runID, res.Header.Get("HX-Redirect"), "an untouched form page follows the run")
	require.Empty(t, frag.Find(`[data-testid="stale-banner"]`).Nodes)

	// A page drawn without a form (the run was running) is reloaded too,
	// whether or not its script says anything.
	for _, dirty := range []string{"", "&dirty=0"} {
		res, frag = w.poll(t, "/runs/"+runID+"/status?cp=&s=running"+dirty)
		require.Equal(t, "/runs/"+runID, res.Header.Get("HX-Redirect"))
		require.Empty(t, frag.Find(`[data-testid="stale-banner"]`).Nodes)
	}

	// The review page's poller holds nothing typed either.
	_, doc = w.get(t, w.client, "/runs/"+runID)
	require.NotEmpty(t, doc.Find(`[data-testid="checkpoint-review"]`).Nodes)
	require.NotContains(t, pollURL(t, doc), "typed=")
}

// TestStatusPollKeepsEditedForms: once a form on the page was edited
// (static/app.js adds dirty=1 to the poll), the page is never reloaded when
// the run moves on — that would lose what was typed — but gets a banner
// naming who decided. So does a form page whose poll does not say (a
// script from before edits were tracked, still in the browser's cache). The banner keeps polling: 204 (nothing to swap)
// while the run stays where the banner says, a redrawn banner with the
// newest decision once it moves again, and never a reload.
func TestStatusPollKeepsEditedForms(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	strategyPoll := pollURL(t, doc)

	// Edited, but nothing has changed: the page keeps polling as it was.
	res, frag := w.poll(t, strategyPoll+"&dirty=1")
	require.Empty(t, res.Header.Get("HX-Redirect"))
	require.Equal(t, strategyPoll, frag.Find(`#run-status`).AttrOr("hx-get", ""), "dirty is added by the script, never kept in the address")

	grace := w.grace(t)
	st := w.graceDecides(t, grace, runID, "strategy-form", "waiting")

	res, frag = w.poll(t, strategyPoll+"&dirty=1")
	require.Empty(t, res.Header.Get("HX-Redirect"), "a page with an edited form is never reloaded")
	banner := frag.Find(`#run-status [data-testid="stale-banner"]`)
	require.Equal(t, "alert", banner.AttrOr("role", ""))
	require.Contains(t, bannerText(frag), "Grace decided this checkpoint (approve) at ")
	require.Contains(t, bannerText(frag), "the run is now waiting.")
	require.Contains(t, banner.Text(), "not saved")
	require.Equal(t, "/runs/"+runID, banner.Find(`a[data-testid="stale-reload"]`).AttrOr("href", ""))

	// A poll that does not say whether the form was edited (an older
	// app.js), and one from a page drawn before typed=1 replaced form=1,
	// get the banner too: they cannot tell an untouched form.
	for _, old := range []string{strategyPoll, strategyPoll + "&form=1"} {
		res, legacy := w.poll(t, old)
		require.Empty(t, res.Header.Get("HX-Redirect"), old)
		require.NotEmpty(t, legacy.Find(`[data-testid="stale-banner"]`).Nodes, old)
	}

	// The banner polls, remembering the page's checkpoint and what it shows.
	bannerPoll := pollURL(t, frag)
	bq := mustURL(t, bannerPoll).Query()
	require.Equal(t, "1", bq.Get("banner"))
	require.Equal(t, mustURL(t, strategyPoll).Query().Get("cp"), bq.Get("cp"))
	require.Equal(t, st.Checkpoint.ID, bq.Get("seen_cp"))
	require.Equal(t, "waiting", bq.Get("seen_s"))
	for range 2 {
		res, _ = w.htmx(t, w.client, http.MethodGet, bannerPoll, nil)
		require.Equal(t, http.StatusNoContent, res.StatusCode, "nothing new: htmx leaves the banner as it is")
		require.Empty(t, res.Header.Get("HX-Redirect"))
	}

	// Grace decides the review too: the banner says so, and that the run
	// is complete, and stops polling since nothing can change any more.
	w.graceDecides(t, grace, runID, "review-form", "completed")
	res, frag = w.poll(t, bannerPoll)
	require.Empty(t, res.Header.Get("HX-Redirect"), "the banner never reloads the page")
	msg := bannerText(frag)
	require.Contains(t, msg, "Grace decided this checkpoint (approve) at ")
	require.Contains(t, msg, "Since then, Grace decided the result review checkpoint (approve) at ")
	require.Contains(t, msg, "the run is now completed.")
	require.Equal(t, "completed", frag.Find(`[data-testid="run-state"]`).Text())
	_, polls := frag.Find(`#run-status`).Attr("hx-get")
	require.False(t, polls, "a complete run cannot change again")
}

// TestStatusPollKeepsSubmittedValues: a page showing what a losing submit
// carried holds typed text whether or not anything is edited after: its
// poll says typed=1, and it gets the banner, not a reload, when the run
// moves on again.
func TestStatusPollKeepsSubmittedValues(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	stale := strategyValues(doc)
	stale.Set("note", "humans only")
	stale.Set("action", "approve")
	grace := w.grace(t)
	w.graceDecides(t, grace, runID, "strategy-form", "waiting")

	res, doc := w.post(t, w.client, doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", ""), stale)
	require.Equal(t, http.StatusConflict, res.StatusCode)
	require.NotEmpty(t, doc.Find(`[data-testid="submitted"]`).Nodes)
	typedPoll := pollURL(t, doc)
	require.Equal(t, "1", mustURL(t, typedPoll).Query().Get("typed"))

	res, frag := w.poll(t, typedPoll+"&dirty=0")
	require.Empty(t, res.Header.Get("HX-Redirect"))
	require.Equal(t, typedPoll, frag.Find(`#run-status`).AttrOr("hx-get", ""), "typed=1 stays in the address")

	w.graceDecides(t, grace, runID, "review-form", "completed")
	res, frag = w.poll(t, typedPoll+"&dirty=0")
	require.Empty(t, res.Header.Get("HX-Redirect"), "submitted values are typed text, edited or not")
	require.Contains(t, bannerText(frag), "Grace decided this checkpoint (approve) at ")
	require.Contains(t, bannerText(frag), "the run is now completed.")
}
