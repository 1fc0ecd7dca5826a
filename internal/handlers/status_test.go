package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"
)

// poll fetches the status fragment the way htmx does and parses it.
func (w *web) poll(t *testing.T, path string) (*http.Response, *goquery.Document) {
	t.Helper()
	res, doc := w.htmx(t, w.client, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	return res, doc
}

// TestStatusPollKeepsTypedForms: a page showing a checkpoint form is never
// reloaded by its poller when the run moves on (that would lose what was
// typed); it gets a banner naming who decided, and stops polling. A page
// without a form is still reloaded, so progress appears by itself.
func TestStatusPollKeepsTypedForms(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, doc := w.startStrategy(t)
	poller := doc.Find(`#run-status`)
	pollURL, ok := poller.Attr("hx-get")
	require.True(t, ok, "the status line polls while the run waits")
	q, err := url.Parse(pollURL)
	require.NoError(t, err)
	require.Equal(t, "1", q.Query().Get("form"), "a page with a form says so in its poll")

	// Nothing has changed: the answer keeps polling, still saying form=1.
	res, frag := w.poll(t, pollURL)
	require.Empty(t, res.Header.Get("HX-Refresh"))
	require.Equal(t, pollURL, frag.Find(`#run-status`).AttrOr("hx-get", ""))
	require.Empty(t, frag.Find(`[data-testid="stale-banner"]`).Nodes)

	// Grace decides in her own session.
	grace := newClient(t)
	w.signIn(t, grace, "Grace")
	_, gdoc := w.get(t, grace, "/runs/"+runID)
	action := gdoc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", "")
	res, _ = w.post(t, grace, action, url.Values{"_csrf": {csrf(gdoc)}, "action": {"approve"}})
	require.Equal(t, http.StatusOK, res.StatusCode)

	// The page with the form gets the banner, not a reload.
	res, frag = w.poll(t, pollURL)
	require.Empty(t, res.Header.Get("HX-Refresh"), "a page holding a form is never reloaded")
	status := frag.Find(`#run-status`)
	require.Equal(t, 1, status.Length())
	_, polls := status.Attr("hx-get")
	require.False(t, polls, "the out-of-date page stops polling")
	banner := status.Find(`[data-testid="stale-banner"]`)
	require.Equal(t, "alert", banner.AttrOr("role", ""))
	msg := strings.Join(strings.Fields(banner.Find(`[data-testid="stale-message"]`).Text()), " ")
	require.Contains(t, msg, "Grace decided this checkpoint (approve) at ")
	require.Contains(t, banner.Text(), "not saved")
	require.Equal(t, "/runs/"+runID, banner.Find(`a[data-testid="stale-reload"]`).AttrOr("href", ""))

	// A page drawn without a form (the run was running) is reloaded when
	// the run reaches the review, as before.
	w.waitFor(t, runID, "waiting")
	res, frag = w.poll(t, "/runs/"+runID+"/status?cp=&s=running")
	require.Equal(t, "true", res.Header.Get("HX-Refresh"))
	require.Empty(t, frag.Find(`[data-testid="stale-banner"]`).Nodes)

	// The review page's poller says form=1 too.
	_, doc = w.get(t, w.client, "/runs/"+runID)
	require.Contains(t, doc.Find(`#run-status`).AttrOr("hx-get", ""), "&form=1")
	require.NotEmpty(t, doc.Find(`[data-testid="checkpoint-review"]`).Nodes)
}
