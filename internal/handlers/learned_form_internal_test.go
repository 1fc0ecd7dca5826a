package handlers

import (
	"bytes"
	"context"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// TestStrategyFormRemovesALearnedTermInOneClick: the strategy form lists
// each learned term with where it came from, ticked; unticking one (one
// click) and saving removes it: an expansion term from the learned list,
// an exclusion from the exclude terms too. Left ticked, the form's
// strategy is the proposal.
func TestStrategyFormRemovesALearnedTermInOneClick(t *testing.T) {
	t.Parallel()
	proposed := research.SearchStrategy{
		Queries: []research.Query{{Text: "sepsis -mice"}, {Text: "sepsis (lactate OR tolerance) -mice"}},
		Sources: []string{"local"}, MaxResultsPerSource: 25, QuestionWords: []string{"sepsis", "outcomes", "lactate"},
		Filters: research.Filters{ExcludeTerms: []string{"mice"}, LearnedExcludeTerms: []string{"mice"}, Learned: []research.LearnedTerm{
			{Term: "mice", Use: research.LearnedExclude, Papers: []string{"p1", "p2", "p3"}},
			{Term: "lactate", Use: research.LearnedExpand, Feedback: "more on lactate"},
			{Term: "tolerance", Use: research.LearnedExpand, Papers: []string{"p4", "p5"}},
		}},
	}
	payload := pipeline.StrategyPayload{Strategy: proposed, Iteration: 2}
	cp := engine.Checkpoint{ID: "cp"}

	f := strategyFormOf("run", cp, payload, []string{"local"})
	var buf bytes.Buffer
	require.NoError(t, views.LearnedTerms(f.Learned).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	boxes := doc.Find(`[data-testid="learned-terms"] input[type="checkbox"][name="learned"]`)
	require.Equal(t, 3, boxes.Length())
	require.Contains(t, doc.Text(), "in 3 papers you marked irrelevant (p1, p2, p3)")
	require.Contains(t, doc.Text(), "read in your feedback “more on lactate”")

	form := url.Values{"query": {"sepsis -mice", "sepsis (lactate OR tolerance) -mice"}, "sources": {"local"},
		"max_results_per_source": {"25"}, "exclude_terms": {"mice"}, "learned_shown": {"1"},
		"learned": {"exclude:mice", "expand:lactate", "expand:tolerance"}}
	s, fe := strategyOf(strategyFormFromPost("run", cp, payload, []string{"local"}, form), proposed)
	require.Empty(t, fe)
	require.True(t, sameStrategy(s, proposed), "all ticked: nothing changed")

	form["learned"] = []string{"expand:lactate"} // mice and tolerance unticked
	s, fe = strategyOf(strategyFormFromPost("run", cp, payload, []string{"local"}, form), proposed)
	require.Empty(t, fe)
	require.False(t, sameStrategy(s, proposed))
	require.Empty(t, s.Filters.ExcludeTerms, "an unticked learned exclusion is no longer excluded")
	require.Equal(t, []research.LearnedTerm{proposed.Filters.Learned[1]}, s.Filters.Learned)
	out, err := pipeline.Rerender(s, proposed)
	require.NoError(t, err)
	require.Equal(t, "sepsis", out.Queries[0].Text)
	require.Equal(t, "sepsis lactate", out.Queries[1].Text)
	require.Equal(t, proposed.QuestionWords, out.QuestionWords, "an edited strategy keeps the question's words the library ranks by")
}
