package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/skills/pipeline"
)

// web is a real app (store, engine, search pipeline over the test library)
// behind an httptest server, and a browser-like client with a cookie jar.
type web struct {
	srv    *httptest.Server
	client *http.Client
	app    *app.App
}

func setupWeb(t *testing.T) *web {
	t.Helper()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}, app.WithWorkflows(reg))
	require.NoError(t, err)
	return serveApp(t, a)
}

// serveApp puts a behind an httptest server and closes both at the end.
func serveApp(t *testing.T, a *app.App) *web {
	t.Helper()
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); require.NoError(t, a.Close()) })
	return &web{srv: srv, client: newClient(t), app: a}
}

func newClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	// Generous: the upload tests move tens of MB through -race on a
	// loaded 2-core machine; the bound is there to fail a hang, not to time.
	return &http.Client{Jar: jar, Timeout: 60 * time.Second}
}

// get fetches a page and parses it.
func (w *web) get(t *testing.T, c *http.Client, path string) (*http.Response, *goquery.Document) {
	t.Helper()
	res, err := c.Get(w.srv.URL + path)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// post submits a form (following the redirect) and parses the answer.
func (w *web) post(t *testing.T, c *http.Client, path string, form url.Values) (*http.Response, *goquery.Document) {
	t.Helper()
	res, err := c.PostForm(w.srv.URL+path, form)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// htmx sends a request the way htmx does (HX-Request; a form body when
// form is not nil) and parses the answer, whatever its status.
func (w *web) htmx(t *testing.T, c *http.Client, method, path string, form url.Values) (*http.Response, *goquery.Document) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, w.srv.URL+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("HX-Request", "true")
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// signIn gives the client a display name through the first-visit form.
func (w *web) signIn(t *testing.T, c *http.Client, name string) {
	t.Helper()
	res, doc := w.get(t, c, "/")
	require.Equal(t, "/name", res.Request.URL.Path, "first visit asks for a name")
	res, _ = w.post(t, c, "/name", url.Values{"_csrf": {csrf(doc)}, "name": {name}, "next": {"/"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "/", res.Request.URL.Path)
}

func csrf(doc *goquery.Document) string {
	return doc.Find(`input[name="_csrf"]`).First().AttrOr("value", "")
}

// waitFor polls the JSON API until the run reaches status.
func (w *web) waitFor(t *testing.T, runID, status string) handlers.RunJSON {
	t.Helper()
	var out handlers.RunJSON
	require.Eventually(t, func() bool {
		res, err := w.client.Get(w.srv.URL + "/api/runs/" + runID)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		out = handlers.RunJSON{}
		return json.NewDecoder(res.Body).Decode(&out) == nil && out.Status == status
	}, 10*time.Second, 20*time.Millisecond, "run %s never reached %s (last %q)", runID, status, out.Status)
	return out
}

func TestFormLoop(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")

	// Bad input re-renders with values kept.
	_, home := w.get(t, w.client, "/")
	res, doc := w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"ab"}, "max_iterations": {"2"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, "ab", doc.Find("textarea#question").Text())
	require.NotEmpty(t, doc.Find(`[data-field="question"]`).Text())
	input := doc.Find("input#max_iterations")
	require.Equal(t, "2", input.AttrOr("value", ""))
	require.Equal(t, strconv.Itoa(pipeline.MaxIterationsLimit), input.AttrOr("max", ""), "the form's bound is the workflow's")

	// A missing CSRF token is refused (the form is shown again, see TestCSRF).
	res, _ = w.post(t, w.client, "/runs", url.Values{"question": {"sleep and memory consolidation"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)

	res, doc = w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"},
		"max_iterations": {"3"}, "strategy_checkpoint": {"true"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runPath := res.Request.URL.Path
	require.True(t, strings.HasPrefix(runPath, "/runs/"), runPath)
	runID := strings.TrimPrefix(runPath, "/runs/")
	require.Equal(t, "sleep and memory consolidation", doc.Find(`[data-testid="run-question"]`).Text())

	st := w.waitFor(t, runID, "waiting")
	require.NotNil(t, st.Checkpoint)
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)
	_, doc = w.get(t, w.client, runPath)
	form := doc.Find(`form[data-testid="strategy-form"]`)
	require.Equal(t, 1, form.Length())
	action := form.AttrOr("action", "")
	nQueries := form.Find(`input[name="query"]`).Length()
	require.Positive(t, nQueries)

	// The no-JS "Add query" re-renders with one more row.
	vals := url.Values{"_csrf": {csrf(doc)}, "sources": testapp.Sources, "year_from": {"2012"}, "year_to": {"2016"}, "max_results_per_source": {"10"}}
	form.Find(`input[name="query"]`).Each(func(_ int, s *goquery.Selection) { vals.Add("query", s.AttrOr("value", "")) })
	add := cloneVals(vals)
	add.Set("op", "add")
	res, doc = w.post(t, w.client, action, add)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, nQueries+1, doc.Find(`form[data-testid="strategy-form"] input[name="query"]`).Length())

	// Invalid edits: year_from > year_to, an empty query, an unknown source.
	bad := cloneVals(vals)
	bad.Set("year_from", "2020")
	bad.Set("year_to", "2001")
	bad.Add("query", "")
	bad.Add("sources", "nowhere")
	bad.Set("action", "edit")
	res, doc = w.post(t, w.client, action, bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.NotEmpty(t, doc.Find(`[data-field="year_range.from"]`).Text())
	require.NotEmpty(t, doc.Find(`[data-field="queries[`+itoa(nQueries)+`].text"]`).Text())
	require.Contains(t, doc.Find(`[data-field="sources"]`).Text(), "nowhere")
	require.Equal(t, "2020", doc.Find(`input#year_from`).AttrOr("value", ""), "values are kept")

	edit := cloneVals(vals)
	edit.Add("query", "memory reactivation")
	edit.Set("action", "edit")
	res, _ = w.post(t, w.client, action, edit)
	require.Equal(t, http.StatusOK, res.StatusCode)

	st = w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	_, doc = w.get(t, w.client, runPath)
	// The history shows the edited strategy.
	require.Contains(t, doc.Find(`[data-testid="history"]`).Text(), "memory reactivation")
	review := doc.Find(`form[data-testid="review-form"]`)
	require.Equal(t, 1, review.Length())
	// Markup in a title is text, never an element.
	require.Equal(t, 0, doc.Find(`[data-testid="paper-title"] script`).Length())
	papers := doc.Find(`[data-testid="paper"]`)
	require.GreaterOrEqual(t, papers.Length(), 3)
	ids := papers.Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") })
	marks := url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[0]: {"relevant"}, "mark:" + ids[1]: {"relevant"}, "mark:" + ids[2]: {"irrelevant"},
		"free_text_feedback": {"more on reactivation"}, "action": {"edit"}}
	res, _ = w.post(t, w.client, review.AttrOr("action", ""), marks)
	require.Equal(t, http.StatusOK, res.StatusCode)

	// A stale submit of the same checkpoint is a 409 naming who decided.
	res, doc = w.post(t, w.client, review.AttrOr("action", ""), marks)
	require.Equal(t, http.StatusConflict, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="conflict-message"]`).Text(), "Ada")

	st = w.waitFor(t, runID, "waiting")
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)
	require.Equal(t, 2, st.Iteration)
	require.Len(t, st.AccumulatedPapers, 2)
	_, doc = w.get(t, w.client, runPath)
	res, _ = w.post(t, w.client, doc.Find(`form[data-testid="strategy-form"]`).AttrOr("action", ""), url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	st = w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	_, doc = w.get(t, w.client, runPath)
	res, _ = w.post(t, w.client, doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}})
	require.Equal(t, http.StatusOK, res.StatusCode)

	w.waitFor(t, runID, "completed")
	_, doc = w.get(t, w.client, runPath)
	require.Equal(t, 1, doc.Find(`[data-testid="final-collection"]`).Length())
	acc := doc.Find(`[data-testid="accumulated-paper"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") })
	require.ElementsMatch(t, ids[:2], acc)
	require.Equal(t, 4, doc.Find(`[data-testid="decision"]`).Length())
	doc.Find(`[data-testid="decision-by"]`).Each(func(_ int, s *goquery.Selection) { require.Equal(t, "Ada", s.Text()) })

	// The home page lists the run with its status.
	_, doc = w.get(t, w.client, "/")
	require.Equal(t, "completed", doc.Find(`[data-testid="run-item"][data-run-id="`+runID+`"] [data-testid="status-badge"]`).Text())
}

func TestAPI(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	postJSON := func(path string, body any) *http.Response {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		res, err := w.client.Post(w.srv.URL+path, "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	res := postJSON("/api/runs", map[string]any{"question": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	var eb handlers.ErrorBody
	require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
	require.Equal(t, "invalid", eb.Error.Code)
	require.Contains(t, eb.Error.Fields, "question")

	// A form-encoded POST to the API is not exempt from CSRF.
	res2, err := w.client.Post(w.srv.URL+"/api/runs", "application/x-www-form-urlencoded", strings.NewReader("question=hello+world"))
	require.NoError(t, err)
	res2.Body.Close()
	require.Equal(t, http.StatusForbidden, res2.StatusCode)

	res = postJSON("/api/runs", map[string]any{"question": "sleep and memory consolidation", "max_iterations": 2, "strategy_checkpoint": false, "sources": testapp.Sources})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	require.Equal(t, "/runs/"+created.ID, created.URL)

	st := w.waitFor(t, created.ID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	var payload struct {
		Collection struct {
			Papers []struct {
				ID string `json:"id"`
			} `json:"papers"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &payload))
	require.NotEmpty(t, payload.Collection.Papers)

	res = postJSON("/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "edit",
		"revised_data": map[string]any{"marked_relevant": []string{"doi:not-here"}, "marked_irrelevant": []string{}, "free_text_feedback": ""}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)

	first := payload.Collection.Papers[0].ID
	res = postJSON("/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve",
		"revised_data": map[string]any{"marked_relevant": []string{first}, "marked_irrelevant": []string{}, "free_text_feedback": ""}, "decided_by": "script"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res = postJSON("/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusConflict, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
	require.Contains(t, eb.Error.Message, "script")

	done := w.waitFor(t, created.ID, "completed")
	require.Nil(t, done.Checkpoint)
	require.NotNil(t, done.Collection)
	require.Len(t, done.AccumulatedPapers, 1)
	require.Equal(t, first, done.AccumulatedPapers[0].ID)
}

func TestWorkflowsPage(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	_, doc := w.get(t, w.client, "/workflows")
	wf := doc.Find(`[data-testid="workflow"][data-workflow="search"]`)
	require.Equal(t, 1, wf.Length())
	require.Contains(t, wf.Find(`[data-testid="workflow-mermaid"]`).Text(), "flowchart TD")
	require.Equal(t, 1, wf.Find(`[data-step="confirm_strategy"]`).Length())
	require.Positive(t, wf.Find(`[data-testid="workflow-edges"] li`).Length())
}

func cloneVals(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
