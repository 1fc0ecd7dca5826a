package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/querybuilder"
)

// proposedStrategy is what the offline builder proposes for a question
// with a quoted (include) phrase and an exclusion, over two sources.
func proposedStrategy(t *testing.T) research.SearchStrategy {
	t.Helper()
	intent, err := intent.New(nil).ParseIntent(context.Background(), `"memory consolidation" during sleep, excluding rodent models`)
	require.NoError(t, err)
	s, err := querybuilder.New().BuildStrategy(context.Background(), skills.QueryInput{Intent: intent, Sources: []string{"local", "pubmed"}})
	require.NoError(t, err)
	require.NotEmpty(t, s.Filters.IncludeTerms)
	require.NotEmpty(t, s.Filters.ExcludeTerms)
	return s
}

// TestRerenderOfAnUnchangedStrategyChangesNothing: approving through the
// edit path (attaching a file does that) must search exactly what was
// proposed, not fold the include terms into the broad queries.
func TestRerenderOfAnUnchangedStrategyChangesNothing(t *testing.T) {
	t.Parallel()
	s := proposedStrategy(t)
	edited := s
	edited.Queries = nil
	for _, q := range s.Queries {
		edited.Queries = append(edited.Queries, research.Query{Text: q.Text}) // the form sends texts only
	}
	out, err := pipeline.Rerender(edited, s)
	require.NoError(t, err)
	require.Equal(t, s.Queries, out.Queries)
}

func TestRerenderAppliesAddedFiltersToEveryQuery(t *testing.T) {
	t.Parallel()
	s := proposedStrategy(t)
	edited := s
	edited.Filters.IncludeTerms = append(append([]string(nil), s.Filters.IncludeTerms...), "adults")
	edited.Filters.ExcludeTerms = append(append([]string(nil), s.Filters.ExcludeTerms...), "children")
	out, err := pipeline.Rerender(edited, s)
	require.NoError(t, err)
	for i, q := range out.Queries {
		require.Contains(t, q.Text, "adults", "query %d: an added include term is required, and the text shows it", i)
		require.Contains(t, q.Text, `-children`, "query %d", i)
		local := q.PerSource["local"]
		require.Contains(t, local, `"adults"`, "query %d", i)
		require.Contains(t, local, `NOT "children"`, "query %d", i)
		require.Contains(t, q.PerSource["pubmed"], "children[tiab]", "query %d", i)
		require.Equal(t, 1, strings.Count(local, `"adults"`), "query %d: added once", i)
	}
}

func TestRerenderDropsARemovedExclusion(t *testing.T) {
	t.Parallel()
	s := proposedStrategy(t)
	require.Contains(t, s.Queries[0].PerSource["local"], "rodent")
	edited := s
	edited.Filters.ExcludeTerms = nil
	out, err := pipeline.Rerender(edited, s)
	require.NoError(t, err)
	for i, q := range out.Queries {
		require.NotContains(t, q.Text, "rodent", "query %d", i)
		require.NotContains(t, q.PerSource["local"], "rodent", "query %d", i)
	}
}

func TestRerenderNamesAnUnparseableQuery(t *testing.T) {
	t.Parallel()
	s := proposedStrategy(t)
	edited := s
	edited.Queries = append([]research.Query{}, s.Queries...)
	edited.Queries[1] = research.Query{Text: "sleep AND"}
	_, err := pipeline.Rerender(edited, s)
	var e *fault.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, fault.EInvalid, e.Code)
	require.Contains(t, e.Fields, "queries[1].text")
}

// TestRerenderDropsARemovedExpansionTerm: a learned expansion term the
// researcher removed in the strategy form (the learned list sent without
// it) leaves the expansion query, which keeps the rest of its terms.
func TestRerenderDropsARemovedExpansionTerm(t *testing.T) {
	t.Parallel()
	s := proposedStrategy(t)
	s.Queries = append(s.Queries, research.Query{Text: `"memory consolidation" (spindles OR hippocampus OR replay)`})
	s.Filters.Learned = []research.LearnedTerm{
		{Term: "spindles", Use: research.LearnedExpand, Papers: []string{"a", "b"}},
		{Term: "replay", Use: research.LearnedExpand, Papers: []string{"a", "c"}},
	}
	edited := s
	edited.Filters.Learned = s.Filters.Learned[1:]
	out, err := pipeline.Rerender(edited, s)
	require.NoError(t, err)
	last := out.Queries[len(out.Queries)-1]
	require.NotContains(t, last.Text, "spindles")
	require.Contains(t, last.Text, "(hippocampus OR replay)")
	require.NotContains(t, last.PerSource["local"], "spindles")
}
