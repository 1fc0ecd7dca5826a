package views_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

// TestErrorPageSent: a refused form's text is shown in read-only text
// areas a person can copy from, as text, with a link back to the form.
func TestErrorPageSent(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := views.ErrorData{Status: 403, Code: "unauthorized", Title: "Form expired", Message: "This form has expired.",
		Sent: []views.FormValue{{Name: "free_text_feedback", Value: "more <b>naps</b>\nfewer rodents"}, {Name: "query", Value: "sleep"}},
		Back: "/runs/r1"}
	require.NoError(t, views.ErrorPage(d).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	values := doc.Find(`[data-testid="error-sent"] textarea[data-testid="error-sent-value"]`)
	require.Equal(t, 2, values.Length())
	first := values.First()
	require.Equal(t, "more <b>naps</b>\nfewer rodents", first.Text(), "the text as typed, not markup")
	require.Equal(t, "free_text_feedback", first.AttrOr("data-name", ""))
	_, readonly := first.Attr("readonly")
	require.True(t, readonly)
	require.Equal(t, "2", first.AttrOr("rows", ""))
	require.Equal(t, "free_text_feedback", doc.Find(`label[for="`+first.AttrOr("id", "")+`"]`).Text())
	require.Equal(t, "/runs/r1", doc.Find(`[data-testid="error-back-link"]`).AttrOr("href", ""))

	buf.Reset()
	require.NoError(t, views.ErrorPage(views.ErrorData{Status: 404, Title: "Page not found", Message: "No page at /x."}).Render(context.Background(), &buf))
	doc, err = goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	require.Zero(t, doc.Find(`[data-testid="error-sent"]`).Length())
	require.Zero(t, doc.Find(`[data-testid="error-back-link"]`).Length())
	require.Equal(t, "Page not found · Quarry", doc.Find("title").Text())
}

// TestHomeFormError: an error about the whole start form (an expired
// token) is shown above it.
func TestHomeFormError(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	form := views.StartForm{Available: true, Question: "naps", Errors: map[string]string{"form": "This form had expired."}}
	require.NoError(t, views.Home(views.HomeData{Page: views.Page{CSRF: "tok"}, Form: form}).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	require.Equal(t, "This form had expired.", doc.Find(`form[data-testid="search-form"] [data-field="form"]`).Text())
}
