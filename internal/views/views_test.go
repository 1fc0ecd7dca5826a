package views_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/views"
)

func TestErrorFragment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		data       views.ErrorData
		wantFields []string
		wantReqID  string
	}{
		{
			name: "Plain",
			data: views.ErrorData{Status: 404, Code: "not_found", Title: "Not Found", Message: "no such run"},
		},
		{
			name: "FieldsInGivenOrder",
			data: views.ErrorData{Status: 422, Code: "invalid", Title: "Unprocessable Entity", Message: "invalid intent",
				Fields:    []views.FieldError{{Field: "b", Message: "bad b"}, {Field: "a", Message: "bad a"}},
				RequestID: "req-1"},
			wantFields: []string{"b: bad b", "a: bad a"},
			wantReqID:  "req-1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, views.ErrorFragment(tt.data).Render(context.Background(), &buf))
			doc, err := goquery.NewDocumentFromReader(&buf)
			require.NoError(t, err)
			require.Equal(t, tt.data.Message, doc.Find(`[data-testid="error-message"]`).Text())
			require.Equal(t, tt.data.Code, doc.Find(`[data-testid="error"]`).AttrOr("data-code", ""))
			var fields []string
			doc.Find(`[data-testid="error-field"]`).Each(func(_ int, s *goquery.Selection) { fields = append(fields, s.Text()) })
			require.Equal(t, tt.wantFields, fields)
			require.Equal(t, len(tt.wantFields) > 0, doc.Find(`[data-testid="error-fields"]`).Length() == 1)
			require.Equal(t, tt.wantReqID, doc.Find(`[data-testid="error-request-id"]`).Text())
		})
	}
}

func TestHomeForm(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	form := views.StartForm{Available: true, Question: "a <b> question", Sources: []views.Choice{{Value: "arxiv", Checked: true}, {Value: "crossref"}},
		Errors: map[string]string{"question": "too short"}}
	require.NoError(t, views.Home(views.HomeData{Page: views.Page{CSRF: "tok"}, Form: form}).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	require.Equal(t, "Research question", doc.Find(`label[for="question"]`).Text())
	require.Equal(t, 1, doc.Find(`textarea#question`).Length())
	require.Equal(t, "Start", doc.Find(`button[type="submit"]`).Text())
	require.Equal(t, "a <b> question", doc.Find(`textarea#question`).Text(), "values are kept, as text")
	require.Equal(t, "tok", doc.Find(`input[name="_csrf"]`).AttrOr("value", ""))
	require.Equal(t, "too short", doc.Find(`[data-field="question"]`).Text())
	require.Equal(t, 1, doc.Find(`input[name="sources"][value="arxiv"][checked]`).Length())
	require.Equal(t, 0, doc.Find(`input[name="sources"][value="crossref"][checked]`).Length())
	cfg := doc.Find(`meta[name="htmx-config"]`).AttrOr("content", "")
	var htmxCfg struct {
		IncludeIndicatorStyles *bool            `json:"includeIndicatorStyles"`
		ResponseHandling       []map[string]any `json:"responseHandling"`
	}
	require.NoError(t, json.Unmarshal([]byte(cfg), &htmxCfg), "htmx ignores a config it cannot parse")
	require.NotNil(t, htmxCfg.IncludeIndicatorStyles)
	require.False(t, *htmxCfg.IncludeIndicatorStyles)
	require.Len(t, htmxCfg.ResponseHandling, 3)
}

func TestHistoryTableSaysWhenAnIterationHasNotBeenSearched(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rows := []views.IterationRow{
		{Iteration: 1, Queries: []string{"sleep"}, ResultCount: 7, Searched: true},
		{Iteration: 2, Queries: []string{"sleep memory"}},
	}
	require.NoError(t, views.HistoryTable(rows).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	cells := doc.Find(`[data-testid="history-row"] td:nth-child(3)`)
	require.Equal(t, 2, cells.Length())
	require.Equal(t, "7", strings.TrimSpace(cells.Eq(0).Text()))
	require.Equal(t, "not searched yet", strings.TrimSpace(cells.Eq(1).Text()))
}

// TestAccumulatedListBounded: a run that kept thousands of papers shows
// the first hundred titles and says how many more the export holds.
func TestAccumulatedListBounded(t *testing.T) {
	t.Parallel()
	papers := make([]research.ScoredPaper, 150)
	for i := range papers {
		papers[i].ID, papers[i].Title = fmt.Sprintf("p%d", i), fmt.Sprintf("Paper %d", i)
	}
	var buf bytes.Buffer
	require.NoError(t, views.AccumulatedList(papers).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	require.Equal(t, 100, doc.Find(`[data-testid="accumulated-paper"]`).Length())
	require.Contains(t, doc.Find(`[data-testid="accumulated-more"]`).Text(), "and 50 more")
	require.Contains(t, doc.Find("h2").Text(), "(150)")
}
