package views_test

import (
	"bytes"
	"context"
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
