package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers/testapp"
	"quarry/internal/research"
)

// progressText is a review progress element's text, spaces collapsed.
func progressText(s *goquery.Selection) string {
	return strings.Join(strings.Fields(s.Text()), " ")
}

// TestReviewScreeningAids: the review offers the configured exclusion
// reasons (QUARRY_EXCLUSION_REASONS) with the keys that choose them,
// marks the question's concepts in the titles, and says "x of N screened ·
// y relevant" — on the page and, out of band, in the answer to every
// mark saved. On the old code the reasons were a fixed list, nothing was
// highlighted and no counts were shown.
func TestReviewScreeningAids(t *testing.T) {
	t.Parallel()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	reasons := []string{"wrong species", "wrong dose", "not peer reviewed"}
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db"),
		ExclusionReasons: reasons}, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	runPath, doc := w.startReview(t, "3")
	ids := paperIDs(doc)
	require.GreaterOrEqual(t, len(ids), 3)

	// The configured reasons, in order, each with its key.
	opts := doc.Find(`[data-testid="exclusion-reasons"] option`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
	require.Equal(t, reasons, opts)
	keys := doc.Find(`[data-testid="reason-key"]`).Map(func(_ int, s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") })
	require.Equal(t, []string{"1 wrong species", "2 wrong dose", "3 not peer reviewed"}, keys)

	// The question's concepts are marked in titles, as text.
	marks := doc.Find(`[data-testid="paper-title"] mark[data-testid="highlight"]`)
	require.Positive(t, marks.Length(), "some title names a concept of %q", "sleep and memory consolidation")
	marks.Each(func(_ int, s *goquery.Selection) {
		word := strings.ToLower(s.Text())
		require.True(t, strings.HasPrefix(word, "sleep") || strings.HasPrefix(word, "memor") || strings.HasPrefix(word, "consolidat"), word)
	})

	// The counts, on the page and after each mark.
	n := len(ids)
	require.Equal(t, "0 of "+strconv.Itoa(n)+" screened · 0 relevant", progressText(doc.Find(`[data-testid="review-progress"]`)))
	action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")
	marksPath := strings.TrimSuffix(action, "/review") + "/marks"
	token := csrf(doc)
	res, frag := w.htmx(t, w.client, http.MethodPost, marksPath, url.Values{"_csrf": {token}, "mark:" + ids[0]: {research.MarkRelevant}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	oob := frag.Find(`#review-progress[hx-swap-oob]`)
	require.Equal(t, 1, oob.Length(), "the counts ride along out of band")
	require.Equal(t, "1 of "+strconv.Itoa(n)+" screened · 1 relevant", progressText(oob))
	res, frag = w.htmx(t, w.client, http.MethodPost, marksPath, url.Values{"_csrf": {token},
		"mark:" + ids[1]: {research.MarkIrrelevant}, "reason:" + ids[1]: {"wrong dose"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "2 of "+strconv.Itoa(n)+" screened · 1 relevant", progressText(frag.Find(`#review-progress`)))
	res, frag = w.htmx(t, w.client, http.MethodPost, marksPath, url.Values{"_csrf": {token}, "mark:" + ids[2]: {research.MarkUnsure}, "note:" + ids[2]: {"ask"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "2 of "+strconv.Itoa(n)+" screened · 1 relevant", progressText(frag.Find(`#review-progress`)), "unsure is not screened")

	_, doc = w.get(t, w.client, runPath)
	require.Equal(t, "2 of "+strconv.Itoa(n)+" screened · 1 relevant", progressText(doc.Find(`[data-testid="review-progress"]`)))
	require.Equal(t, "wrong dose", doc.Find(`[data-paper-id="`+ids[1]+`"] [data-testid="paper-reason"]`).AttrOr("value", ""))
}
