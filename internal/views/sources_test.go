package views_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/views"
)

// TestSourceResultsShowsWarningsApartFromErrors: a source that failed shows
// its error in the error style; a source that returned papers with a
// warning (PubMed leaving out a term) shows it as a warning, not as a
// failure.
func TestSourceResultsShowsWarningsApartFromErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, views.SourceResults(map[string]research.SourceResult{
		"pubmed":   {Count: 3, Warnings: []string{"PubMed did not run the query as written: terms not found, left out: zzz"}},
		"crossref": {Error: "internal: timed out after 20s"},
		"openalex": {Count: 5},
	}).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	item := func(name string) *goquery.Selection {
		return doc.Find(`[data-testid="source-result"][data-source="` + name + `"]`)
	}

	pm := item("pubmed")
	require.Equal(t, 0, pm.Find(`[data-testid="source-error"], .error`).Length(), "a warning is not a failure")
	require.Equal(t, "— warning: PubMed did not run the query as written: terms not found, left out: zzz", pm.Find(`[data-testid="source-warning"]`).Text())
	require.True(t, strings.HasPrefix(pm.Text(), "pubmed: 3 found"))

	cr := item("crossref")
	require.Equal(t, "— internal: timed out after 20s", cr.Find(`.error[data-testid="source-error"]`).Text())
	require.Equal(t, 0, cr.Find(`[data-testid="source-warning"]`).Length())

	require.Equal(t, "openalex: 5 found", strings.TrimSpace(item("openalex").Text()))

	buf.Reset()
	require.NoError(t, views.SourceResults(nil).Render(context.Background(), &buf))
	require.Empty(t, strings.TrimSpace(buf.String()))
}

// TestSourceResultsSayWhatTheLimitCut is defect 7 of issue 16 on the
// review: "local: 25 found" when its query matched 49 now reads "local:
// 25 shown of 49 found"; a source sent several queries says up to how
// many; one whose result was not cut says only its count.
func TestSourceResultsSayWhatTheLimitCut(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	// As stored, so the test reads the same results on code that predates
	// the totals (where it fails: "local: 25 found").
	var results map[string]research.SourceResult
	require.NoError(t, json.Unmarshal([]byte(`{
		"local": {"count": 25, "queries": ["\"sleep\""], "query_results": [{"count": 25, "total": 49}]},
		"openalex": {"count": 40, "queries": ["a", "b"], "query_results": [{"count": 25, "total": 900}, {"count": 20, "total": 20}]},
		"arxiv": {"count": 3, "queries": ["x"], "query_results": [{"count": 3, "total": 3}]}}`), &results))
	require.NoError(t, views.SourceResults(results).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	text := func(name string) string {
		return strings.TrimSpace(doc.Find(`[data-testid="source-result"][data-source="` + name + `"]`).Text())
	}
	require.Equal(t, "local: 25 shown of 49 found", text("local"))
	require.Equal(t, "openalex: 40 shown of up to 920 found", text("openalex"))
	require.Equal(t, "arxiv: 3 found", text("arxiv"))
}
