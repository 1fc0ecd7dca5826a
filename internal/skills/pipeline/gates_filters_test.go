package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
)

func TestRerenderHonoursIncludeAndExcludeTerms(t *testing.T) {
	t.Parallel()
	s := skills.SearchStrategy{
		Queries:             []skills.Query{{Text: `sleep "memory consolidation"`}},
		Sources:             []string{"local", "pubmed"},
		MaxResultsPerSource: 10,
		Filters:             skills.Filters{IncludeTerms: []string{"adults", "sleep"}, ExcludeTerms: []string{"children", "rodent models"}},
	}
	out, err := pipeline.Rerender(s)
	require.NoError(t, err)
	local := out.Queries[0].PerSource["local"]
	require.Contains(t, local, `"adults"`, "an include term becomes required")
	require.Contains(t, local, `NOT "children"`)
	require.Contains(t, local, `NOT "rodent models"`)
	require.Equal(t, 1, countOf(local, `"sleep"`), "a term the query already has is not added twice")
	require.Contains(t, out.Queries[0].PerSource["pubmed"], "children[tiab]")
	require.Equal(t, `sleep "memory consolidation"`, out.Queries[0].Text, "the researcher's text is kept as written")
}

func countOf(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}
