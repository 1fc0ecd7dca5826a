package handlers_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
)

// TestProgressSVG marks papers through the API — one marked twice, one
// changed from relevant to irrelevant, one only unsure — and checks GET
// /runs/:id/progress.svg against the marks: one step per paper screened,
// in the order first marked, ending at the papers marked relevant now.
// The review shows the plot with both stopping suggestions, k of the
// second one taken from the configuration; an unknown run is 404.
func TestProgressSVG(t *testing.T) {
	t.Parallel()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"), StopWindow: 2}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	runID, ids := markRun(t, w, false)

	for _, m := range []struct{ id, mark string }{
		{ids[0], "relevant"}, {ids[1], "irrelevant"}, {ids[2], "relevant"},
		{ids[0], "relevant"},   // marked again: still one step
		{ids[2], "irrelevant"}, // changed: no longer relevant
		{ids[3], "unsure"},     // not screened
	} {
		res := w.doJSON(t, http.MethodPut, markPath(runID, m.id), map[string]string{"mark": m.mark})
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	res := w.doJSON(t, http.MethodGet, "/api/runs/"+runID+"/marks", nil)
	var current handlers.MarksJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&current))
	relevantNow := 0
	for _, m := range current.Marks {
		if m.Mark == research.MarkRelevant {
			relevantNow++
		}
	}
	require.Equal(t, 1, relevantNow)

	res, body := w.download(t, "/runs/"+runID+"/progress.svg")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "image/svg+xml; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, res.Header.Get("Content-Disposition"), "quarry-run-"+runID+"-progress.svg")
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'none'")
	root := svgRoot(t, body)
	require.Equal(t, "3", root["data-screened"], "three papers got a decisive mark")
	require.Equal(t, "1", root["data-relevant"], "the final count is the papers marked relevant now")
	require.Equal(t, "1:1 2:1 3:1", root["data-points"])
	require.Contains(t, body, "sleep and memory consolidation", "the question is in the plot's title")
	require.Contains(t, body, "3 papers screened, 1 relevant.")

	w.signIn(t, w.client, "Ada")
	_, doc := w.get(t, w.client, "/runs/"+runID)
	panel := doc.Find(`[data-testid="checkpoint-review"] [data-testid="screening-progress"]`)
	require.Equal(t, 1, panel.Length(), "the review shows the progress")
	img := panel.Find(`img[data-testid="progress-plot"]`)
	require.Equal(t, "/runs/"+runID+"/progress.svg?v=6", img.AttrOr("src", ""), "versioned by the marks")
	require.Contains(t, img.AttrOr("alt", ""), "3 papers screened, 1 relevant")
	require.Equal(t, "3 screened · 1 relevant", panel.Find(`[data-testid="progress-counts"]`).Text())
	hints := panel.Find(`[data-testid="stopping-suggestion"]`)
	require.Equal(t, 2, hints.Length())
	knee := hints.Eq(0)
	require.Equal(t, research.RuleKnee, knee.AttrOr("data-rule", ""))
	require.Equal(t, "false", knee.AttrOr("data-applies", ""))
	require.Contains(t, knee.Text(), "Stopping suggestion (knee method, Cormack & Grossman 2016): does not apply yet")
	window := hints.Eq(1)
	require.Equal(t, "no relevant paper in the last 2 screened", window.AttrOr("data-rule", ""), "k from the configuration")
	require.Equal(t, "true", window.AttrOr("data-stop", ""), window.Text())
	require.Contains(t, window.Text(), "the last relevant paper was the 1st of 3 screened, 2 papers ago")

	// Finished, the run's page shows the plot without suggestions: there
	// is nothing left to stop.
	st := w.waitFor(t, runID, "waiting")
	res = w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve"})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	w.waitFor(t, runID, "completed")
	_, doc = w.get(t, w.client, "/runs/"+runID)
	panel = doc.Find(`[data-testid="screening-progress"]`)
	require.Equal(t, 1, panel.Length(), "the completed page shows the progress")
	require.Equal(t, "3 screened · 1 relevant", panel.Find(`[data-testid="progress-counts"]`).Text())
	require.Zero(t, panel.Find(`[data-testid="stopping-suggestion"]`).Length())

	res, _ = w.download(t, "/runs/nope/progress.svg")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// svgRoot is the attributes of an SVG document's root element, which must
// be well-formed XML.
func svgRoot(t *testing.T, doc string) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	out := map[string]string{}
	for {
		tok, err := dec.Token()
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			require.Equal(t, "svg", se.Name.Local)
			for _, a := range se.Attr {
				out[a.Name.Local] = a.Value
			}
			return out
		}
	}
}

// TestProgressRedraw: saving a mark on the review answers with the
// trigger the progress panel listens for, and the run's page then holds
// the panel with the new counts (what the panel fetches and swaps in);
// a save that changes nothing triggers nothing.
func TestProgressRedraw(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "2")
	panel := doc.Find(`#checkpoint-review #screening-progress`)
	require.Equal(t, runPath, panel.AttrOr("hx-get", ""))
	require.Equal(t, "marks-saved from:body", panel.AttrOr("hx-trigger", ""))
	// The panel swaps in its contents, so it outlives a redraw and a
	// redraw queued behind another is not dropped with the old element.
	require.Equal(t, "#screening-progress > *", panel.AttrOr("hx-select", ""))
	require.Equal(t, "innerHTML", panel.AttrOr("hx-swap", ""))
	require.Equal(t, "0 screened · 0 relevant", panel.Find(`[data-testid="progress-counts"]`).Text())

	ids := paperIDs(doc)
	action := doc.Find(`[data-testid="paper-marks"]`).First().AttrOr("hx-post", "")
	res, _ := w.htmx(t, w.client, http.MethodPost, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[0]: {"relevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "marks-saved", res.Header.Get("HX-Trigger"))
	res, _ = w.htmx(t, w.client, http.MethodPost, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + ids[0]: {"relevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, res.Header.Get("HX-Trigger"), "nothing changed")

	_, doc = w.htmx(t, w.client, http.MethodGet, runPath, nil)
	panel = doc.Find(`#screening-progress`)
	require.Equal(t, "1 screened · 1 relevant", panel.Find(`[data-testid="progress-counts"]`).Text())
	require.Contains(t, panel.Find(`img`).AttrOr("src", ""), "progress.svg?v=1")
}
