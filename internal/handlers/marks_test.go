package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/csvfile"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
)

// markRun starts a one-iteration run through the API (strategy checkpoint
// off unless strategy) and returns its ID and, once it waits at the
// review, the IDs of the papers under review.
func markRun(t *testing.T, w *web, strategy bool) (string, []string) {
	t.Helper()
	res := w.doJSON(t, http.MethodPost, "/api/runs", map[string]any{"question": "sleep and memory consolidation",
		"max_iterations": 2, "strategy_checkpoint": strategy, "sources": testapp.Sources})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	st := w.waitFor(t, created.ID, "waiting")
	if strategy {
		return created.ID, nil
	}
	var payload struct {
		Collection struct {
			Papers []struct{ ID string } `json:"papers"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &payload))
	var ids []string
	for _, p := range payload.Collection.Papers {
		ids = append(ids, p.ID)
	}
	require.GreaterOrEqual(t, len(ids), 4)
	return created.ID, ids
}

// doJSON sends body as JSON (nil: no body) and returns the answer, whose
// body is closed at the end of the test.
func (w *web) doJSON(t *testing.T, method, path string, body any) *http.Response {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.srv.URL+path, r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := w.client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// markPath is the mark API's address of a paper, its ID URL-encoded.
func markPath(runID, paperID string) string {
	return "/api/runs/" + runID + "/marks/" + url.PathEscape(paperID)
}

// fieldsOf reads an error answer's field errors.
func fieldsOf(t *testing.T, res *http.Response) map[string]string {
	t.Helper()
	var e handlers.ErrorBody
	require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
	return e.Error.Fields
}

// TestMarksAPI: a mark is stored by PUT (paper IDs with slashes, escaped
// or not), read back by GET, refused with the field named (422), for a
// paper outside the review (404) and for a run not at a review (409).
func TestMarksAPI(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, ids := markRun(t, w, false)
	require.Contains(t, ids[0], "/", "the test library's IDs are DOIs, with slashes")

	events, stop := w.app.Engine().Events().Subscribe(runID)
	defer stop()
	res := w.doJSON(t, http.MethodPut, markPath(runID, ids[0]), map[string]string{"mark": "relevant", "note": " fits "})
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got research.Mark
	require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
	// Everyone viewing the run is told on its event stream.
	timeout := time.After(5 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-events:
			if seen = ev.Type == handlers.EventMark; seen {
				require.Contains(t, ev.Message, "api marked")
				require.Contains(t, ev.Message, "relevant")
			}
		case <-timeout:
			t.Fatal("no mark event")
		}
	}
	require.Equal(t, research.Mark{PaperID: ids[0], Mark: "relevant", Note: "fits", By: "api", Iteration: 1, At: got.At}, got)
	require.False(t, got.At.IsZero())
	// The slash unescaped reaches the same paper.
	res = w.doJSON(t, http.MethodPut, "/api/runs/"+runID+"/marks/"+ids[1], map[string]string{"mark": "irrelevant", "reason": "population", "marked_by": "Grace"})
	require.Equal(t, http.StatusOK, res.StatusCode)

	res = w.doJSON(t, http.MethodGet, "/api/runs/"+runID+"/marks", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var marks handlers.MarksJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&marks))
	require.Len(t, marks.Marks, 2)
	require.Equal(t, ids[0], marks.Marks[0].PaperID)
	require.Equal(t, research.Mark{PaperID: ids[1], Mark: "irrelevant", Reason: "population", By: "Grace", Iteration: 1, At: marks.Marks[1].At}, marks.Marks[1])

	for _, tt := range []struct {
		name  string
		body  any
		field string
	}{
		{"UnknownMark", map[string]string{"mark": "maybe"}, "mark"},
		{"NoMark", map[string]string{"note": "n"}, "mark"},
		{"ReasonOnRelevant", map[string]string{"mark": "relevant", "reason": "population"}, "reason"},
		{"LongNote", map[string]string{"mark": "unsure", "note": strings.Repeat("n", research.MaxPaperNote+1)}, "note"},
	} {
		res := w.doJSON(t, http.MethodPut, markPath(runID, ids[2]), tt.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, tt.name)
		require.Contains(t, fieldsOf(t, res), tt.field, tt.name)
	}
	res = w.doJSON(t, http.MethodPut, markPath(runID, ids[2]), map[string]string{"mark": "relevant", "colour": "red"})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "an unknown field")

	res = w.doJSON(t, http.MethodPut, markPath(runID, "doi:10.1093/sleep/26.2.117"), map[string]string{"mark": "relevant"})
	require.Equal(t, http.StatusNotFound, res.StatusCode, "a paper not in the review")
	res = w.doJSON(t, http.MethodPut, markPath("nosuchrun", ids[0]), map[string]string{"mark": "relevant"})
	require.Equal(t, http.StatusNotFound, res.StatusCode, "no such run")

	// A run at the strategy checkpoint has no review to mark in.
	other, _ := markRun(t, w, true)
	res = w.doJSON(t, http.MethodPut, markPath(other, ids[0]), map[string]string{"mark": "relevant"})
	require.Equal(t, http.StatusConflict, res.StatusCode)

	// Nothing marked changed the run: the stored marks decide it. The
	// decision carries none (an approve as scripts always sent it).
	st := w.waitFor(t, runID, "waiting")
	res = w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	done := w.waitFor(t, runID, "completed")
	require.Equal(t, []string{ids[0]}, scoredIDs(done.AccumulatedPapers))
	require.NotNil(t, done.Collection)
	require.Equal(t, handlers.SetCounts{Relevant: 1, NotScreened: len(ids) - 2, Irrelevant: 1}, done.Collection.Counts)
	marked := map[string]string{}
	for _, p := range done.Collection.Papers {
		marked[p.ID] = p.Mark
	}
	require.Equal(t, "relevant", marked[ids[0]])
	require.Equal(t, "", marked[ids[2]])
	require.NotContains(t, marked, ids[1], "the merged collection leaves out papers marked irrelevant")

	// A finished run takes no marks.
	res = w.doJSON(t, http.MethodPut, markPath(runID, ids[2]), map[string]string{"mark": "relevant"})
	require.Equal(t, http.StatusConflict, res.StatusCode)
}

func scoredIDs(ps []research.ScoredPaper) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// TestMarksConcurrent: 20 people marking one paper at once each get their
// mark stored; the paper has one current mark and 20 in its history.
func TestMarksConcurrent(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, ids := markRun(t, w, false)
	const n = 20
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mark := []string{"relevant", "irrelevant", "unsure"}[i%3]
			b, _ := json.Marshal(map[string]string{"mark": mark, "note": "by " + itoa(i), "marked_by": "p" + itoa(i)})
			req, err := http.NewRequest(http.MethodPut, w.srv.URL+markPath(runID, ids[0]), bytes.NewReader(b))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := w.client.Do(req)
			if err != nil {
				return
			}
			codes[i] = res.StatusCode
			res.Body.Close()
		}()
	}
	wg.Wait()
	for i, c := range codes {
		require.Equal(t, http.StatusOK, c, "PUT %d", i)
	}
	current, err := w.app.Store().Marks(context.Background(), runID)
	require.NoError(t, err)
	require.Len(t, current, 1)
	history, err := w.app.Store().MarkHistory(context.Background(), runID, ids[0])
	require.NoError(t, err)
	require.Len(t, history, n)
	require.Equal(t, history[n-1], current[0], "the current mark is the latest")
}

// TestCompletedPageSets: with one paper marked relevant from the review
// form (htmx, one request per change) and one irrelevant by the form
// submit without JavaScript, "Approve and finish" shows the three sets
// with their counts, and the default export is the relevant paper alone.
func TestCompletedPageSets(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, ids := markRun(t, w, false)
	w.signIn(t, w.client, "Ada")
	runPath := "/runs/" + runID
	_, doc := w.get(t, w.client, runPath)
	marks := doc.Find(`[data-paper-id="` + ids[0] + `"] [data-testid="paper-marks"]`)
	action := marks.AttrOr("hx-post", "")
	require.NotEmpty(t, action, "each paper's marks save by themselves")
	res, saved := w.htmx(t, w.client, http.MethodPost, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[0]: {"relevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 1, saved.Find(`[data-testid="mark-saved"]`).Length())
	// A bad mark is refused, naming the paper's field.
	res, _ = w.htmx(t, w.client, http.MethodPost, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[0]: {"maybe"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)

	// The reloaded page shows the mark.
	_, doc = w.get(t, w.client, runPath)
	require.Equal(t, "relevant", doc.Find(`[data-paper-id="`+ids[0]+`"] input[type="radio"][checked]`).AttrOr("value", ""))

	// The form submit as a browser without JavaScript sends it: every
	// radio (the untouched ones "unsure") and note.
	form := url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}}
	doc.Find(`form[data-testid="review-form"] input[type="radio"][checked]`).Each(func(_ int, s *goquery.Selection) {
		form.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	form.Set("mark:"+ids[1], "irrelevant")
	form.Set("reason:"+ids[1], "study design")
	res, _ = w.post(t, w.client, doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	w.waitFor(t, runID, "completed")
	history, err := w.app.Store().MarkHistory(context.Background(), runID, ids[1])
	require.NoError(t, err)
	require.Len(t, history, 1, "the form submit saved the mark")
	require.Equal(t, "Ada", history[0].By)
	untouched, err := w.app.Store().MarkHistory(context.Background(), runID, ids[2])
	require.NoError(t, err)
	require.Empty(t, untouched, "an untouched paper is not marked unsure")

	_, doc = w.get(t, w.client, runPath)
	count := func(set string) string {
		return doc.Find(`[data-testid="final-count"][data-set="` + set + `"]`).Text()
	}
	require.Equal(t, "1", count("relevant"))
	require.Equal(t, itoa(len(ids)-2), count("not_screened"))
	require.Equal(t, "1", count("irrelevant"))
	relevant := doc.Find(`[data-testid="final-set"][data-set="relevant"] [data-testid="final-paper"]`)
	require.Equal(t, []string{ids[0]}, relevant.Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") }))
	require.Contains(t, doc.Find(`[data-testid="rejected-paper"]`).Text(), "excluded: study design")

	download := func(query string) []string {
		t.Helper()
		r, err := w.client.Get(w.srv.URL + "/api/runs/" + runID + "/export?" + query)
		require.NoError(t, err)
		defer r.Body.Close()
		require.Equal(t, http.StatusOK, r.StatusCode)
		var dois []string
		for _, rec := range biblitest.ReadAll(t, csvfile.NewReader(r.Body)) {
			dois = append(dois, "doi:"+rec.Paper.DOI)
		}
		return dois
	}
	require.Equal(t, []string{ids[0]}, download("format=csv"), "the default export is the relevant set")
	require.Len(t, download("format=csv&set=not_screened"), len(ids)-2)
	require.Equal(t, []string{ids[1]}, download("format=csv&set=irrelevant"))
}

// TestLateSaveOfTheSameMark: a page's last mark save can reach the server
// after the same page's submit decided the review (with that mark, which
// the form carried): that save changes nothing and is answered 200; a
// late save that would change a mark is still refused (409).
func TestLateSaveOfTheSameMark(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, ids := markRun(t, w, false)
	w.signIn(t, w.client, "Ada")
	_, doc := w.get(t, w.client, "/runs/"+runID)
	action := doc.Find(`[data-paper-id="`+ids[1]+`"] [data-testid="paper-marks"]`).AttrOr("hx-post", "")
	require.NotEmpty(t, action)
	form := url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}, "mark:" + ids[1]: {"irrelevant"}}
	res, _ := w.post(t, w.client, doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	w.waitFor(t, runID, "completed")

	res, saved := w.htmx(t, w.client, http.MethodPost, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[1]: {"irrelevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode, "the same mark, late: nothing to save")
	require.Equal(t, 1, saved.Find(`[data-testid="mark-saved"]`).Length())
	res, _ = w.htmx(t, w.client, http.MethodPost, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[1]: {"relevant"}})
	require.Equal(t, http.StatusConflict, res.StatusCode, "a change after the decision is refused")
	history, err := w.app.Store().MarkHistory(context.Background(), runID, ids[1])
	require.NoError(t, err)
	require.Len(t, history, 1)
}
