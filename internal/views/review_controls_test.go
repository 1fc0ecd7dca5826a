package views_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

func renderDoc(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	return doc
}

// TestReviewControls: a GET form on the run's page showing the list's
// selection, whose htmx swaps only the list and pushes the address.
func TestReviewControls(t *testing.T) {
	t.Parallel()
	f := views.ReviewForm{RunID: "r1", CheckpointID: "c1", List: views.ReviewListState{
		Query:   views.ReviewQuery{Sort: "year", Mark: "unsure", Source: "pubmed", Theme: "sleep", Year: 2020, Page: 2, PerPage: 25},
		Sources: []string{"library", "pubmed"}, Themes: []string{"memory", "sleep"}, Years: []int{2021, 2020},
	}}
	doc := renderDoc(t, views.ReviewControls(f))
	form := doc.Find(`form[data-testid="review-controls"]`)
	require.Equal(t, "get", form.AttrOr("method", ""))
	require.Equal(t, "/runs/r1", form.AttrOr("action", ""))
	require.Equal(t, "#review-list", form.AttrOr("hx-target", ""))
	require.Equal(t, "true", form.AttrOr("hx-push-url", ""))
	for testid, want := range map[string]string{"list-sort": "year", "list-mark": "unsure", "list-source": "pubmed",
		"list-theme": "sleep", "list-year": "2020", "list-per-page": "25"} {
		sel := doc.Find(`select[data-testid="` + testid + `"]`)
		require.Equal(t, 1, sel.Length(), testid)
		require.Equal(t, want, sel.Find("option[selected]").AttrOr("value", ""), testid)
		require.Equal(t, 1, sel.Closest("label").Length(), "%s has a label", testid)
	}
}

// TestReviewListConfirmAndUndo: the list's "mark the rest" button, its
// question without JavaScript, and the Undo, each a button of the review
// form posting to its action with the list's query.
func TestReviewListConfirmAndUndo(t *testing.T) {
	t.Parallel()
	f := views.ReviewForm{RunID: "r1", CheckpointID: "c1", List: views.ReviewListState{
		Query: views.ReviewQuery{Sort: "title", Page: 2, PerPage: 10}, Total: 30, Matching: 30, First: 11, Last: 20, Pages: 3,
		Rest: 7, Confirm: true, Undo: &views.RestUndo{At: "2026-11-26T03:00:00.123Z", Count: 4},
	}}
	doc := renderDoc(t, views.ReviewList(f))
	require.Equal(t, "Papers 11–20 of 30", doc.Find(`[data-testid="list-position"]`).First().Text())
	require.Equal(t, "/runs/r1?page=3&per_page=10&sort=title", doc.Find(`[data-testid="list-next"]`).First().AttrOr("href", ""))
	require.Equal(t, "/runs/r1?per_page=10&sort=title", doc.Find(`[data-testid="list-prev"]`).First().AttrOr("href", ""))

	rest := doc.Find(`[data-testid="mark-rest"]`)
	require.Equal(t, "/runs/r1/checkpoints/c1/rest?page=2&per_page=10&sort=title", rest.AttrOr("formaction", ""))
	require.Contains(t, rest.AttrOr("hx-confirm", ""), "not screened yet", "the question names no count drawn before the page's clicks")
	require.Contains(t, doc.Find(`[data-testid="rest-confirm"]`).Text(), "Mark the 7 papers", "the step without JavaScript counts them as it is drawn")

	yes := doc.Find(`[data-testid="rest-confirm-yes"]`)
	require.Equal(t, "confirm", yes.AttrOr("name", ""))
	require.Equal(t, "yes", yes.AttrOr("value", ""))
	require.Equal(t, "/runs/r1?page=2&per_page=10&sort=title", doc.Find(`[data-testid="rest-confirm-cancel"]`).AttrOr("href", ""))

	undo := doc.Find(`[data-testid="rest-undo-button"]`)
	require.Contains(t, doc.Find(`[data-testid="rest-undo"]`).Text(), "Marked 4 papers irrelevant.")
	require.Equal(t, "undo_at", undo.AttrOr("name", ""))
	require.Equal(t, "2026-11-26T03:00:00.123Z", undo.AttrOr("value", ""))
	require.Equal(t, "/runs/r1/checkpoints/c1/rest/undo?page=2&per_page=10&sort=title", undo.AttrOr("formaction", ""))
	require.Equal(t, `{"undo_at":"2026-11-26T03:00:00.123Z"}`, undo.AttrOr("hx-vals", ""))
}
