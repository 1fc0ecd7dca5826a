package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/report/prisma"
	"quarry/internal/skills/pipeline"
)

// startCapped starts a run through the API whose strategy caps each
// source at 2 results, below what the test library matches, and returns
// it waiting at its first review.
func (w *web) startCapped(t *testing.T) handlers.RunJSON {
	t.Helper()
	created := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, created.ID, string(pipeline.KindStrategyConfirmation), 1)
	var p pipeline.StrategyPayload
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &p))
	p.Strategy.MaxResultsPerSource = 2
	res := w.postJSON(t, "/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "edit", "revised_data": p.Strategy})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	return w.waitForCheckpoint(t, created.ID, string(pipeline.KindResultReview), 1)
}

// nextReview polls the JSON API until the run waits at a review other
// than the checkpoint after.
func (w *web) nextReview(t *testing.T, runID, after string) handlers.RunJSON {
	t.Helper()
	var out handlers.RunJSON
	require.Eventually(t, func() bool {
		res, err := w.client.Get(w.srv.URL + "/api/runs/" + runID)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		out = handlers.RunJSON{}
		return json.NewDecoder(res.Body).Decode(&out) == nil && out.Status == "waiting" &&
			out.Checkpoint != nil && out.Checkpoint.Kind == string(pipeline.KindResultReview) && out.Checkpoint.ID != after
	}, 10*time.Second, 20*time.Millisecond, "run %s never came back to its review (last %q)", runID, out.Status)
	return out
}

// TestShowMoreAPI: POST /api/runs/:id/checkpoints/:cp/more fetches the
// next page into the review: the papers are appended (none twice), the
// counts say what was shown of what was found (never more shown), a mark
// made before stays, two requests at once fetch one page (both 202), and
// once nothing more is found the review refuses (422). Unknown runs and
// checkpoints are 404; a strategy checkpoint is 409.
func TestShowMoreAPI(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	r := w.startCapped(t)
	runID, cp := r.ID, r.Checkpoint.ID
	first := r.Collection.Papers
	require.NotEmpty(t, first)
	require.True(t, r.Checkpoint.ShowMore, "the API says the review has more")
	marked := first[0].ID
	res := w.doJSON(t, http.MethodPut, "/api/runs/"+runID+"/marks/"+url.PathEscape(marked), map[string]any{"mark": "relevant", "note": "keep"})
	require.Equal(t, http.StatusOK, res.StatusCode)

	require.Equal(t, http.StatusNotFound, w.doJSON(t, http.MethodPost, "/api/runs/nope/checkpoints/"+cp+"/more", nil).StatusCode)
	require.Equal(t, http.StatusNotFound, w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/checkpoints/nope/more", nil).StatusCode)

	// Two at once: both accepted, one page fetched.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/checkpoints/"+cp+"/more", map[string]any{"requested_by": "bot"}).StatusCode
		}()
	}
	wg.Wait()
	require.Equal(t, []int{http.StatusAccepted, http.StatusAccepted}, codes)
	r2 := w.nextReview(t, runID, cp)
	require.Equal(t, 1, r2.Checkpoint.Iteration, "showing more is not another iteration")
	require.Greater(t, len(r2.Collection.Papers), len(first))
	seen := map[string]bool{}
	for i, p := range r2.Collection.Papers {
		require.False(t, seen[p.ID], "paper %s twice", p.ID)
		seen[p.ID] = true
		if i < len(first) {
			require.Equal(t, first[i].ID, p.ID, "the papers under review keep their places")
		}
		if p.ID == marked {
			require.Equal(t, "relevant", p.Mark, "the mark made before stays")
		}
	}
	for _, h := range r2.History {
		for name, src := range h.Sources {
			for _, q := range src.QueryResults {
				if q.Total > 0 {
					require.LessOrEqual(t, q.Count, q.Total, "%s: never more shown than found", name)
				}
			}
		}
		require.NotEmpty(t, h.Found)
	}

	// Twice more at most: then everything found is shown and the review
	// refuses another page.
	cur := r2
	for range 10 {
		if !pipeline.HasMore(cur.Collection.PaperCollection) {
			break
		}
		res := w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/checkpoints/"+cur.Checkpoint.ID+"/more", nil)
		require.Equal(t, http.StatusAccepted, res.StatusCode)
		cur = w.nextReview(t, runID, cur.Checkpoint.ID)
	}
	require.False(t, pipeline.HasMore(cur.Collection.PaperCollection))
	require.False(t, cur.Checkpoint.ShowMore)
	for name, src := range cur.Collection.Sources {
		f := src.Found()
		require.False(t, f.Capped(), "%s: %s", name, f)
		require.Regexp(t, `^\d+ found$`, f.String())
	}
	res = w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/checkpoints/"+cur.Checkpoint.ID+"/more", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	var body handlers.ErrorBody
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Contains(t, body.Error.Fields, "show_more")

	// Finished, the PRISMA diagram counts every page: the records each
	// source sent over its pages, and every paper the reviews showed.
	res = w.postJSON(t, "/api/runs/"+runID+"/decisions", map[string]any{"checkpoint_id": cur.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	res.Body.Close()
	done := w.waitFor(t, runID, "completed")
	identified, input, output := 0, 0, 0
	for _, h := range done.History {
		for _, r := range h.Sources {
			identified += r.Count
		}
		input += h.Dedup.Input
		output += h.Dedup.Output
	}
	_, svg := w.download(t, "/runs/"+runID+"/prisma.svg")
	boxes, lines := svgBoxes(t, []byte(svg))
	require.Equal(t, identified, boxes[prisma.BoxIdentified])
	require.Equal(t, len(cur.Collection.Papers), boxes[prisma.BoxPresented], "the reviews showed the first page and every page after")
	require.Equal(t, identified-len(cur.Collection.Papers), boxes[prisma.BoxRemoved])
	require.Equal(t, input-output, lines[prisma.BoxRemoved]["Duplicate records removed"])

	// The report says which pages each source's queries fetched.
	_, md := w.download(t, "/runs/"+runID+"/report.md")
	require.Regexp(t, `Records from this source: \d+ \([^)]*\); \d+ found, \d+ pages \(the first, then \d+ more the review asked for\)\.`, md)
	require.Regexp(t, `\| \d+ \(\d+ pages\) \|`, md)

	// A strategy checkpoint has nothing to show more of.
	other := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true, "sources": testapp.Sources})
	st := w.waitForCheckpoint(t, other.ID, string(pipeline.KindStrategyConfirmation), 1)
	require.Equal(t, http.StatusConflict, w.doJSON(t, http.MethodPost, "/api/runs/"+other.ID+"/checkpoints/"+st.Checkpoint.ID+"/more", nil).StatusCode)
}

// TestShowMoreButton: the review offers "Show more results" only while a
// source found more than it returned; the button posts the review form
// (so marks typed without JavaScript are saved) to the checkpoint's more
// action, which lands on the run's page with the new papers; a second
// submit of the same page (a double click) lands there too, not on a
// conflict; an unknown run is 404.
func TestShowMoreButton(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	r := w.startCapped(t)
	runPath := "/runs/" + r.ID
	_, doc := w.get(t, w.client, runPath)
	btn := doc.Find(`[data-testid="show-more"]`)
	require.Equal(t, 1, btn.Length(), "a capped review offers more")
	action := btn.AttrOr("formaction", "")
	require.Equal(t, runPath+"/checkpoints/"+r.Checkpoint.ID+"/more", action)
	require.Equal(t, 1, doc.Find(`form[data-testid="review-form"] [data-testid="show-more"]`).Length(), "it submits the review form, marks and all")
	require.Equal(t, "keep", doc.Find(`form[data-testid="review-form"] button[type="submit"]`).First().AttrOr("value", ""),
		"Enter in a note still presses the form's first button, which keeps the marks; it never asks for more")
	ids := paperIDs(doc)
	require.NotEmpty(t, ids)

	form := url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[0]: {"irrelevant"}, "note:" + ids[0]: {"off topic"},
		"free_text_feedback": {"more on naps"}}
	res, page := w.post(t, w.client, action, form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, runPath, res.Request.URL.Path)
	res, _ = w.post(t, w.client, action, form)
	require.Equal(t, http.StatusOK, res.StatusCode, "a second submit of the same page is not a conflict")
	require.Equal(t, runPath, res.Request.URL.Path)
	_ = page

	next := w.nextReview(t, r.ID, r.Checkpoint.ID)
	require.Greater(t, len(next.Collection.Papers), len(r.Collection.Papers))
	_, doc = w.get(t, w.client, runPath)
	require.Greater(t, len(paperIDs(doc)), len(ids))
	require.Equal(t, "irrelevant", doc.Find(`input[name="mark:`+ids[0]+`"][checked]`).AttrOr("value", ""), "the mark the form carried was saved and stays")
	require.Equal(t, "more on naps", strings.TrimSpace(doc.Find(`textarea[name="free_text_feedback"]`).Text()), "the feedback typed before showing more is not lost")
	labels := doc.Find(`[data-testid="group-label"]`).Map(func(_ int, s *goquery.Selection) string { return strings.TrimSpace(s.Text()) })
	require.Contains(t, labels, pipeline.MoreGroupLabel(2))

	for range 10 {
		if doc.Find(`[data-testid="show-more"]`).Length() == 0 {
			break
		}
		cp := w.waitFor(t, r.ID, "waiting").Checkpoint.ID
		res, _ := w.post(t, w.client, runPath+"/checkpoints/"+cp+"/more", url.Values{"_csrf": {csrf(doc)}})
		require.Equal(t, http.StatusOK, res.StatusCode)
		w.nextReview(t, r.ID, cp)
		_, doc = w.get(t, w.client, runPath)
	}
	require.Equal(t, 0, doc.Find(`[data-testid="show-more"]`).Length(), "nothing more found, no button")
	require.Equal(t, 1, doc.Find(`[data-testid="review-form"]`).Length())

	res, _ = w.post(t, w.client, "/runs/nope/checkpoints/x/more", url.Values{"_csrf": {csrf(doc)}})
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
