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

// long returns n distinct strings of exactly chars characters each
// (multi-byte, so a limit in bytes would be caught).
func long(n, chars int) []string {
	out := terms(n)
	for i, t := range out {
		out[i] = t + strings.Repeat("é", chars-len(t))
	}
	return out
}

// TestStrategyListLimits: fields of study, study types, every filter term
// and a query's text are bounded too, in count and in length, each
// reported on its own field path naming the limit, together with every
// other problem; a strategy at every one of these limits is valid.
func TestStrategyListLimits(t *testing.T) {
	t.Parallel()
	atLimit := research.SearchStrategy{
		Queries:             []research.Query{{Text: `"` + strings.Repeat("é", research.MaxQueryLength-2) + `"`}},
		Sources:             []string{research.SourceLocal},
		MaxResultsPerSource: 10,
		Filters: research.Filters{
			IncludeTerms:        long(research.MaxFilterTerms, research.MaxTermLength),
			ExcludeTerms:        long(research.MaxFilterTerms, research.MaxTermLength),
			LearnedExcludeTerms: long(research.MaxFilterTerms, research.MaxTermLength),
			FieldsOfStudy:       long(research.MaxFieldsOfStudy, research.MaxTermLength),
			StudyTypes:          long(research.MaxStudyTypes, research.MaxTermLength),
		},
	}
	require.NoError(t, atLimit.Validate())

	over := atLimit
	over.Queries = []research.Query{{Text: "ok"}, {Text: strings.Repeat("é", research.MaxQueryLength+1)}}
	over.Filters = research.Filters{
		IncludeTerms:        long(2, research.MaxTermLength+1),
		ExcludeTerms:        append([]string{"ok"}, long(1, research.MaxTermLength+1)...),
		LearnedExcludeTerms: long(1, research.MaxTermLength+1),
		FieldsOfStudy:       append(long(research.MaxFieldsOfStudy, research.MaxTermLength-1), long(1, research.MaxTermLength+1)...),
		StudyTypes:          long(1, research.MaxTermLength+1),
	}
	over.MaxResultsPerSource = 0 // one more problem, reported with the rest
	err := over.Validate()
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	for field, limit := range map[string]int{
		"queries[1].text":                  research.MaxQueryLength,
		"filters.include_terms[0]":         research.MaxTermLength,
		"filters.include_terms[1]":         research.MaxTermLength,
		"filters.exclude_terms[1]":         research.MaxTermLength,
		"filters.learned_exclude_terms[0]": research.MaxTermLength,
		"filters.fields_of_study":          research.MaxFieldsOfStudy,
		"filters.study_types[0]":           research.MaxTermLength,
	} {
		require.Contains(t, fields[field], fmt.Sprintf("at most %d", limit), "%s: %v", field, fields)
	}
	require.Contains(t, fields, "max_results_per_source")
	require.NotContains(t, fields, "filters.exclude_terms[0]")
	require.NotContains(t, fields, fmt.Sprintf("filters.fields_of_study[%d]", research.MaxFieldsOfStudy), "elements past the limit are not checked one by one")

	over.Filters.StudyTypes = terms(research.MaxStudyTypes + 1)
	require.Contains(t, fault.ErrorFields(over.Validate())["filters.study_types"], fmt.Sprintf("at most %d", research.MaxStudyTypes))
}

// TestFeedbackTermAndIDLengths: a review's added and excluded terms are
// bounded in length like a strategy's, and the paper ids it marks or
// notes are bounded too, each reported on its own field without quoting
// the id, all at once.
func TestFeedbackTermAndIDLengths(t *testing.T) {
	t.Parallel()
	id := long(1, research.MaxPaperIDLength)[0]
	require.NoError(t, research.UserFeedback{
		MarkedRelevant: []string{id}, AddTerms: long(research.MaxFeedbackTerms, research.MaxTermLength),
		ExcludeTerms: long(research.MaxFeedbackTerms, research.MaxTermLength), PaperNotes: map[string]string{id: "n"},
	}.Validate())

	longID := long(1, research.MaxPaperIDLength+1)[0]
	err := research.UserFeedback{
		MarkedRelevant:   []string{"a", longID},
		MarkedIrrelevant: []string{longID},
		AddTerms:         []string{"ok", long(1, research.MaxTermLength+1)[0]},
		ExcludeTerms:     long(1, research.MaxTermLength+1),
		PaperNotes:       map[string]string{longID: "n"},
		FreeTextFeedback: strings.Repeat("x", 10001),
	}.Validate()
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	for field, limit := range map[string]int{
		"add_terms[1]":         research.MaxTermLength,
		"exclude_terms[0]":     research.MaxTermLength,
		"marked_relevant[1]":   research.MaxPaperIDLength,
		"marked_irrelevant[0]": research.MaxPaperIDLength,
		"paper_notes":          research.MaxPaperIDLength,
	} {
		require.Contains(t, fields[field], fmt.Sprintf("at most %d", limit), "%s: %v", field, fields)
		require.NotContains(t, fields[field], longID[:50], "the id is not quoted")
	}
	require.Contains(t, fields, "free_text_feedback")
	require.NotContains(t, fields, "add_terms[0]")
}
