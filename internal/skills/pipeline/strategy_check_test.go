package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestCheckStrategyReportsEveryField (issue 16, defect 4): one answer
// names every problem — the shape (an empty query, years backwards), the
// sources, the fields of study and each query's syntax — instead of
// reporting the syntax only once the rest was valid. A query the shape
// check already refused is not parsed again.
func TestCheckStrategyReportsEveryField(t *testing.T) {
	t.Parallel()
	s := research.SearchStrategy{
		Queries:   []research.Query{{Text: "sleep^2 deprivation[tiab]"}, {Text: ""}, {Text: "memory AND (sleep"}, {Text: "sleep memory"}},
		Sources:   []string{"local", "nowhere"},
		YearRange: research.YearRange{From: 2020, To: 2001},
		Filters:   research.Filters{FieldsOfStudy: []string{"Alchemy"}},
	}
	err := pipeline.CheckStrategy(s, []string{"local"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	for _, k := range []string{"queries[0].text", "queries[1].text", "queries[2].text", "sources[1]", "year_range.from", "filters.fields_of_study"} {
		require.Contains(t, fields, k, "%v", fields)
	}
	require.Equal(t, "query is empty", fields["queries[1].text"])
	require.NotContains(t, fields, "queries[3].text")

	s.Queries, s.Sources, s.YearRange, s.Filters, s.MaxResultsPerSource = []research.Query{{Text: "sleep memory"}}, []string{"local"}, research.YearRange{}, research.Filters{}, 25
	require.NoError(t, pipeline.CheckStrategy(s, []string{"local"}))
}
