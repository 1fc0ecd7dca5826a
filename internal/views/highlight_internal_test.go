package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/research"
)

// render writes segments with the marked ones in [brackets], which is
// easy to read in a table.
func render(segs []segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Mark {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// TestHighlight: the question's terms are found case-insensitively at
// word starts, multi-word terms across spaces and hyphens, longer words
// only for terms long enough (or ending in *), the longest overlapping
// term wins, and nothing is lost or added to the text.
func TestHighlight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		terms []string
		want  string
	}{
		{"NoTerms", "Sleep and memory", nil, "Sleep and memory"},
		{"CaseInsensitive", "Sleep and Memory consolidation", []string{"sleep", "memory"}, "[Sleep] and [Memory] consolidation"},
		{"LongTermMatchesLongerWords", "Sleeping well aids cognitive performance", []string{"sleep", "cognit"}, "[Sleeping] well aids [cognitive] performance"},
		{"ShortTermWholeWordOnly", "Rats rate the ratio; a rat", []string{"rat"}, "Rats rate the ratio; a [rat]"},
		{"WildcardPrefix", "Rats rate", []string{"rat*"}, "[Rats] [rate]"},
		{"NotInsideWords", "An interest in rest", []string{"rest"}, "An interest in [rest]"},
		{"MultiWordAcrossHyphen", "Effects of sleep-deprivation and sleep  deprivation", []string{"sleep deprivation"}, "Effects of [sleep-deprivation] and [sleep  deprivation]"},
		{"LongestWins", "Total sleep deprivation impairs sleep", []string{"sleep", "sleep deprivation"}, "Total [sleep deprivation] impairs [sleep]"},
		{"QuotesAndOperatorsIgnored", "Working memory under load", []string{`"working memory"`, "OR load"}, "[Working memory] under [load]"},
		{"Unicode", "Schlafentzug und Gedächtnis; GEDÄCHTNIS", []string{"gedächtnis"}, "Schlafentzug und [Gedächtnis]; [GEDÄCHTNIS]"},
		{"MarkupStaysText", "<b>sleep</b> & memory", []string{"sleep"}, "<b>[sleep]</b> & memory"},
		{"EmptyAndOneLetterTermsIgnored", "a b c", []string{"", " ", "a", "*"}, "a b c"},
		{"Digits", "COVID-19 and sleep", []string{"covid-19"}, "[COVID-19] and sleep"},
		{"AtEnd", "memory", []string{"memory"}, "[memory]"},
		{"Empty", "", []string{"memory"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			segs := highlight(tt.text, tt.terms)
			require.Equal(t, tt.want, render(segs))
			var plain strings.Builder
			for _, s := range segs {
				plain.WriteString(s.Text)
			}
			require.Equal(t, tt.text, plain.String(), "the segments are the text")
		})
	}
}

// TestPaperSummaryHighlightEscapes: the review's paper summary marks the
// terms in the title and the abstract as <mark> elements while the
// paper's own text stays text: markup in a title is shown, never run.
func TestPaperSummaryHighlightEscapes(t *testing.T) {
	t.Parallel()
	p := research.ScoredPaper{RawPaper: research.RawPaper{ID: "p1", Title: `Sleep <script>alert(1)</script> & <b>memory</b>`,
		Abstract: "Memory after sleep loss."}}
	var buf bytes.Buffer
	require.NoError(t, paperSummary(p, []string{"sleep", "memory", "script"}).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	title := doc.Find(`[data-testid="paper-title"]`)
	require.Equal(t, p.Title, title.Text())
	require.Zero(t, doc.Find("script, b").Length(), "no element from the title's text")
	require.Equal(t, []string{"Sleep", "script", "script", "memory"}, title.Find("mark").Map(func(_ int, s *goquery.Selection) string { return s.Text() }))
	require.Equal(t, []string{"Memory", "sleep"}, doc.Find("details mark").Map(func(_ int, s *goquery.Selection) string { return s.Text() }))
	buf.Reset()
	require.NoError(t, PaperSummary(p).Render(context.Background(), &buf))
	require.NotContains(t, buf.String(), "<mark", "the final collection's summaries highlight nothing")
}
