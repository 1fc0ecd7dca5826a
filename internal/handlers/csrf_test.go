package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// sent maps the values an error page shows as sent, by field name.
func sent(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	doc.Find(`[data-testid="error-sent-value"]`).Each(func(_ int, s *goquery.Selection) {
		out[s.AttrOr("data-name", "")] = s.Text()
	})
	return out
}

// TestCSRF: a form whose token failed is refused with 403 and a message
// that says what happened and what to do, and nothing typed is lost: the
// start form comes back with its values and a fresh token; other forms'
// text is shown on the error page.
func TestCSRF(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")

	t.Run("StartFormExpired", func(t *testing.T) {
		t.Parallel()
		question := "sleep and memory consolidation\nin older adults"
		form := url.Values{"_csrf": {"a token from yesterday"}, "question": {question}, "max_iterations": {"2"},
			"strategy_checkpoint": {"true"}, "sources": {testapp.Sources[1]}}
		res, doc := w.post(t, w.client, "/runs", form)
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		require.Equal(t, "/runs", res.Request.URL.Path, "nothing was started")
		f := doc.Find(`form[data-testid="search-form"]`)
		require.Equal(t, question, f.Find("textarea#question").Text(), "the question is kept")
		require.Equal(t, "2", f.Find("input#max_iterations").AttrOr("value", ""))
		require.Equal(t, 1, f.Find(`input[name="sources"][value="`+testapp.Sources[1]+`"][checked]`).Length())
		require.Equal(t, 0, f.Find(`input[name="sources"][value="`+testapp.Sources[0]+`"][checked]`).Length())
		require.Equal(t, "This form had expired (the page was open too long, or the browser's cookies were cleared), so the run was not started. "+
			"Your text is kept below; submit again.", f.Find(`[data-field="form"]`).Text())

		// The form carries a fresh token: submitting it again starts the run.
		again := formValues(f)
		again.Set("question", f.Find("textarea#question").Text())
		require.NotEqual(t, "a token from yesterday", again.Get("_csrf"))
		res, _ = w.post(t, w.client, "/runs", again)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.True(t, strings.HasPrefix(res.Request.URL.Path, "/runs/"), res.Request.URL.Path)
	})

	t.Run("StartFormWithoutToken", func(t *testing.T) {
		t.Parallel()
		res, doc := w.post(t, w.client, "/runs", url.Values{"question": {"naps"}})
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		require.Equal(t, "naps", doc.Find("textarea#question").Text())
		require.Contains(t, doc.Find(`[data-field="form"]`).Text(), "This form arrived without its security token, so the run was not started.")
		require.NotEmpty(t, csrf(doc))
	})

	t.Run("OtherFormExpired", func(t *testing.T) {
		t.Parallel()
		// Another browser's token: the name form is refused and its text shown.
		c := newClient(t)
		res, doc := w.post(t, c, "/name", url.Values{"_csrf": {"someone else's token"}, "name": {"Grace Hopper"}, "next": {"/runs/r1"}})
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		sec := doc.Find(`[data-testid="error"]`)
		require.Equal(t, fault.EUnauthorized, sec.AttrOr("data-code", ""))
		require.Equal(t, "Form expired", doc.Find(`[data-testid="error-title"]`).Text())
		require.Equal(t, "This form has expired (the page was open too long, or the browser's cookies were cleared), so it was not saved. "+
			"What you sent is below: copy it, open the form again and submit it there.", doc.Find(`[data-testid="error-message"]`).Text())
		require.Equal(t, map[string]string{"name": "Grace Hopper", "next": "/runs/r1"}, sent(doc), "the token itself is not shown")
		require.Equal(t, "/name", doc.Find(`[data-testid="error-back-link"]`).AttrOr("href", ""))
	})

	t.Run("CheckpointFormExpired", func(t *testing.T) {
		t.Parallel()
		res, doc := w.post(t, w.client, "/runs/r1/checkpoints/cp1/review", url.Values{"_csrf": {"stale"}, "free_text_feedback": {"more on naps,\nfewer rodents"}})
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		require.Equal(t, map[string]string{"free_text_feedback": "more on naps,\nfewer rodents"}, sent(doc))
		require.Equal(t, "/runs/r1", doc.Find(`[data-testid="error-back-link"]`).AttrOr("href", ""))
	})

	t.Run("Fragment", func(t *testing.T) {
		t.Parallel()
		res, doc := w.htmx(t, w.client, http.MethodPost, "/runs/r1/checkpoints/cp1/strategy", url.Values{"_csrf": {"stale"}, "query": {"sleep AND naps"}})
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		require.Equal(t, "#flash", res.Header.Get("HX-Retarget"))
		require.Equal(t, map[string]string{"query": "sleep AND naps"}, sent(doc))
	})

	t.Run("CrossSite", func(t *testing.T) {
		t.Parallel()
		req, err := http.NewRequest(http.MethodPost, w.srv.URL+"/name", strings.NewReader(url.Values{"name": {"Mallory"}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		res, err := w.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		doc, err := goquery.NewDocumentFromReader(res.Body)
		require.NoError(t, err)
		require.Equal(t, "This form was sent from another site, so it was not accepted. Open Quarry and submit the form from its own page.",
			doc.Find(`[data-testid="error-message"]`).Text())
		require.Empty(t, sent(doc), "another site's form is not echoed")
	})

	t.Run("API", func(t *testing.T) {
		t.Parallel()
		res, err := w.client.Post(w.srv.URL+"/api/runs", "application/x-www-form-urlencoded", strings.NewReader("question=hello+world"))
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusForbidden, res.StatusCode)
		var eb handlers.ErrorBody
		require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
		require.Equal(t, handlers.ErrorJSON{Code: fault.EUnauthorized,
			Message: "send API requests with Content-Type: application/json; any other request needs a form's security token"}, eb.Error)
	})
}

// TestRoutingMissMessages: an unknown address or method gets a message
// naming it, not "Not Found" twice, and never a token error.
func TestRoutingMissMessages(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantTitle, wantMsg string
	}{
		{"UnknownPage", http.MethodGet, "/nowhere/x", http.StatusNotFound, "Page not found", "No page at /nowhere/x. Runs are listed on the home page."},
		{"UnknownPost", http.MethodPost, "/nowhere", http.StatusNotFound, "Page not found", "No page at /nowhere. Runs are listed on the home page."},
		{"DeleteHome", http.MethodDelete, "/", http.StatusMethodNotAllowed, "Method Not Allowed", "/ does not accept DELETE requests (only GET, HEAD)."},
		{"PutRunPage", http.MethodPut, "/runs/r1", http.StatusMethodNotAllowed, "Method Not Allowed", "/runs/r1 does not accept PUT requests (only GET, HEAD)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tt.method, w.srv.URL+tt.path, nil)
			require.NoError(t, err)
			res, err := w.client.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			require.Equal(t, tt.wantStatus, res.StatusCode)
			doc, err := goquery.NewDocumentFromReader(res.Body)
			require.NoError(t, err)
			require.Equal(t, tt.wantTitle, doc.Find(`[data-testid="error-title"]`).Text())
			require.Equal(t, tt.wantMsg, doc.Find(`[data-testid="error-message"]`).Text())
		})
	}

	res, body := w.download(t, "/api/nowhere")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.JSONEq(t, `{"error":{"code":"not_found","message":"no API endpoint at /api/nowhere (the endpoints are listed in the README)"}}`, body)
}
