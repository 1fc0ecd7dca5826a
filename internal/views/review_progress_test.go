package views_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/views"
)

// TestReviewProgress: the review's bar counts the papers it lists by
// their marks (unsure is not screened; a paper listed twice counts once),
// or shows the handler's count of the whole review when set; the default
// exclusion reasons come with their keys.
func TestReviewProgress(t *testing.T) {
	t.Parallel()
	text := func(d views.RunData) string {
		doc := render(t, views.RunPage(d))
		return strings.Join(strings.Fields(doc.Find(`[data-testid="review-bar"] [data-testid="review-progress"]`).Text()), " ")
	}
	d := reviewPage(1, 3, "")
	p2 := research.ScoredPaper{RawPaper: research.RawPaper{ID: "p2", Title: "Naps"}}
	p3 := research.ScoredPaper{RawPaper: research.RawPaper{ID: "p3", Title: "Dreams"}}
	d.Review.Groups = append(d.Review.Groups, views.PaperGroup{Label: "More", Papers: []research.ScoredPaper{p2, p3, d.Review.Groups[0].Papers[0]}})
	d.Review.Marks = map[string]string{"p1": views.MarkRelevant, "p2": views.MarkUnsure, "p3": views.MarkIrrelevant}
	require.Equal(t, "2 of 3 screened · 1 relevant", text(d))
	d.Review.Progress = &views.Progress{Screened: 5, Total: 40, Relevant: 2}
	require.Equal(t, "5 of 40 screened · 2 relevant", text(d))

	doc := render(t, views.RunPage(d))
	keys := doc.Find(`[data-testid="reason-key"]`)
	require.Equal(t, 8, keys.Length())
	require.Equal(t, "1 population", strings.Join(strings.Fields(keys.First().Text()), " "))
	require.Equal(t, "8 other", strings.Join(strings.Fields(keys.Last().Text()), " "))
}
