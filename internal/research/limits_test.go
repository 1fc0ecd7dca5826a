package research_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// terms returns n distinct words.
func terms(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("term%d", i)
	}
	return out
}

// TestStrategyLimits: a strategy over any limit is invalid, naming the
// field and the limit, and every field over its limit is reported at
// once; one at every limit is valid.
func TestStrategyLimits(t *testing.T) {
	t.Parallel()
	queries := func(n int, text string) []research.Query {
		qs := make([]research.Query, n)
		for i := range qs {
			qs[i] = research.Query{Text: text}
		}
		return qs
	}
	atLimit := research.SearchStrategy{
		Queries:             queries(research.MaxQueries, strings.Join(terms(research.MaxQueryTerms), " ")),
		Sources:             research.Sources(),
		MaxResultsPerSource: 10,
		Filters:             research.Filters{IncludeTerms: terms(research.MaxFilterTerms), ExcludeTerms: terms(research.MaxFilterTerms)},
	}
	require.NoError(t, atLimit.ValidateSources(research.Sources()))

	over := atLimit
	over.Queries = queries(research.MaxQueries+1, strings.Join(terms(research.MaxQueryTerms+1), " "))
	over.Sources = append(research.Sources(), "x")
	over.Filters = research.Filters{IncludeTerms: terms(research.MaxFilterTerms + 1), ExcludeTerms: terms(research.MaxFilterTerms + 1)}
	over.Files = make([]research.AttachedFile, research.MaxFiles+1)
	err := over.Validate()
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	for field, limit := range map[string]int{
		"queries":               research.MaxQueries,
		"queries[0].text":       research.MaxQueryTerms,
		"sources":               research.MaxSources,
		"filters.include_terms": research.MaxFilterTerms,
		"filters.exclude_terms": research.MaxFilterTerms,
		"files":                 research.MaxFiles,
	} {
		require.Contains(t, fields[field], fmt.Sprintf("at most %d", limit), "%s: %v", field, fields)
	}
	require.NotContains(t, fields, fmt.Sprintf("queries[%d].text", research.MaxQueries), "elements past the limit are not checked one by one")
	require.Equal(t, len(research.Sources()), research.MaxSources)
}

// TestQueryTerms: terms are words and quoted phrases; operators,
// parentheses and the minus of an exclusion are not.
func TestQueryTerms(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]int{
		"":       0,
		"sepsis": 1,
		`sepsis "machine learning" (children OR paediatric OR "young people") -animal NOT "case report"`: 7,
		"a AND b":          2,
		"and or not":       3, // lower case: words, not operators
		`"OR"`:             1,
		"* -& ()":          0,
		`"unclosed phrase`: 1,
		"child* title:x":   2,
	} {
		require.Equal(t, want, research.QueryTerms(text), text)
	}
}

// TestFeedbackLimits: a review decision marking more papers than
// MaxMarks, or adding or excluding more terms than MaxFeedbackTerms, is
// invalid naming the field and the limit, every one at once.
func TestFeedbackLimits(t *testing.T) {
	t.Parallel()
	marks := terms(research.MaxMarks)
	require.NoError(t, research.UserFeedback{MarkedRelevant: marks[:research.MaxMarks/2], MarkedIrrelevant: marks[research.MaxMarks/2:]}.Validate())

	notes := map[string]string{}
	for _, id := range terms(research.MaxMarks + 1) {
		notes[id] = "n"
	}
	err := research.UserFeedback{
		MarkedRelevant:   terms(research.MaxMarks),
		MarkedIrrelevant: []string{"one more"},
		PaperNotes:       notes,
		AddTerms:         terms(research.MaxFeedbackTerms + 1),
		ExcludeTerms:     terms(research.MaxFeedbackTerms + 1),
	}.Validate()
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	for field, limit := range map[string]int{
		"marks":         research.MaxMarks,
		"paper_notes":   research.MaxMarks,
		"add_terms":     research.MaxFeedbackTerms,
		"exclude_terms": research.MaxFeedbackTerms,
	} {
		require.Contains(t, fields[field], fmt.Sprintf("at most %d", limit), "%s: %v", field, fields)
	}
}
