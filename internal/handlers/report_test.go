package handlers_test

import (
	"encoding/csv"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/report"
)

// download fetches a path and returns the response and its body.
func (w *web) download(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	res, err := w.client.Get(w.srv.URL + path)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// TestSearchStrategyReport: a completed run offers its PRISMA-S report as
// Markdown and CSV downloads that state every query exactly as sent.
func TestSearchStrategyReport(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "2")
	runID := strings.TrimPrefix(runPath, "/runs/")
	require.Equal(t, runPath+"/report.md", doc.Find(`[data-testid="report-md"]`).AttrOr("href", ""))
	require.Equal(t, runPath+"/report.csv", doc.Find(`[data-testid="report-csv"]`).AttrOr("href", ""))

	ids := paperIDs(doc)
	res, _ := w.post(t, w.client, doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), url.Values{"_csrf": {csrf(doc)},
		"action": {"approve"}, "mark:" + ids[0]: {"relevant"}, "mark:" + ids[1]: {"irrelevant"}, "free_text_feedback": {"enough"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	st := w.waitFor(t, runID, "completed")
	require.Len(t, st.History, 1)
	h := st.History[0]
	require.WithinDuration(t, time.Now(), h.SearchedAt, time.Minute)
	require.ElementsMatch(t, []string{"library", "mirror"}, slices.Collect(maps.Keys(h.Sources)))

	res, md := w.download(t, runPath+"/report.md")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/markdown"))
	disp, params, err := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
	require.NoError(t, err)
	require.Equal(t, "attachment", disp)
	require.Contains(t, params["filename"], runID)
	require.True(t, strings.HasSuffix(params["filename"], ".md"))
	require.Contains(t, md, "- Research question: sleep and memory consolidation\n")
	require.Contains(t, md, "- Started by: Ada\n", "the signed-in person who started the run")
	require.Contains(t, md, "- Run ID: `"+runID+"`\n")
	require.Contains(t, md, "- Searched at: "+h.SearchedAt.UTC().Format(time.RFC3339)+"\n")
	require.Contains(t, md, "- Databases and sources searched: library, mirror\n")
	require.Contains(t, md, "> enough\n")
	nQueries := 0
	for _, sr := range h.Sources {
		for _, q := range sr.Queries {
			require.Contains(t, md, q, "the query as sent")
			nQueries++
		}
	}
	require.Positive(t, nQueries)

	res, body := w.download(t, runPath+"/report.csv")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv"))
	require.Contains(t, res.Header.Get("Content-Disposition"), runID)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, report.CSVHeader(), rows[0])
	require.Len(t, rows, 1+nQueries, "one row per source and query")
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, r := range rows[1:] {
		src := r[col["source"]]
		require.Equal(t, "1", r[col["iteration"]])
		require.Equal(t, "search", r[col["source_kind"]])
		qi := slices.Index(h.Sources[src].Queries, r[col["query_as_sent"]])
		require.GreaterOrEqual(t, qi, 0, "the row's query is one the source was sent")
		require.Equal(t, h.SearchedAt.UTC().Format(time.RFC3339), r[col["searched_at"]])
		require.Equal(t, strconv.Itoa(h.Sources[src].QueryResults[qi].Count), r[col["results"]], "each row counts its own query")
		require.Equal(t, strconv.Itoa(h.Sources[src].Count), r[col["source_records"]])
		require.Equal(t, "1", r[col["marked_relevant"]])
		require.Equal(t, "1", r[col["marked_irrelevant"]])
	}

	res, _ = w.download(t, "/runs/nope/report.csv")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
