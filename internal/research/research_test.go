package research_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// TestIterationRecordJSON: runs stored before the search fields existed
// still decode, and a record without a search writes none of them.
func TestIterationRecordJSON(t *testing.T) {
	t.Parallel()
	old := `{"iteration":2,"strategy":{"queries":[{"text":"a"}],"sources":["x"],"year_range":{},"max_results_per_source":5,"filters":{}},` +
		`"result_count":7,"feedback":{"marked_relevant":["p"],"marked_irrelevant":[],"free_text_feedback":"f"}}`
	var r research.IterationRecord
	require.NoError(t, json.Unmarshal([]byte(old), &r))
	require.Equal(t, 2, r.Iteration)
	require.Equal(t, 7, r.ResultCount)
	require.True(t, r.SearchedAt.IsZero())
	require.True(t, r.Searched(), "an old record with results was searched")
	require.Equal(t, []string{"p"}, r.Feedback.MarkedRelevant)

	b, err := json.Marshal(research.IterationRecord{Iteration: 1})
	require.NoError(t, err)
	require.NotContains(t, string(b), "searched_at")
	require.NotContains(t, string(b), "dedup")
	require.False(t, research.IterationRecord{Iteration: 1}.Searched())

	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	full := research.IterationRecord{Iteration: 1, SearchedAt: at,
		Sources: map[string]research.SourceResult{"x": {Count: 3, Queries: []string{"a"}}}, Dedup: research.DedupStats{Input: 3, Output: 2, Merged: 1}}
	b, err = json.Marshal(full)
	require.NoError(t, err)
	require.Contains(t, string(b), `"searched_at":"2025-01-02T03:04:05Z"`)
	var back research.IterationRecord
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, full, back)
}

// TestSourceResultWarnings: a source's warnings travel in their own JSON
// field, are left out when there are none (older records stay as they
// were), and a state recording them is valid.
func TestSourceResultWarnings(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(research.SourceResult{Count: 2})
	require.NoError(t, err)
	require.JSONEq(t, `{"count":2}`, string(b))

	sr := research.SourceResult{Count: 3, Warnings: []string{"PubMed did not run the query as written: terms not found, left out: zzz"}, Queries: []string{"sleep zzz"}}
	b, err = json.Marshal(sr)
	require.NoError(t, err)
	require.JSONEq(t, `{"count":3,"warnings":["PubMed did not run the query as written: terms not found, left out: zzz"],"queries":["sleep zzz"]}`, string(b))
	var back research.SourceResult
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, sr, back)

	st := research.WorkflowState{CurrentIteration: 1, History: []research.IterationRecord{{Iteration: 1, SearchedAt: time.Now(),
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "sleep zzz"}}, Sources: []string{"pubmed"}, MaxResultsPerSource: 5},
		Sources:  map[string]research.SourceResult{"pubmed": sr}, ResultCount: 3}}}
	require.NoError(t, st.Validate())
	require.NoError(t, research.PaperCollection{Sources: map[string]research.SourceResult{"pubmed": sr}}.Validate())
}

// TestSourceResultQueryResults: each query's own result travels in
// query_results; a result stored before it existed (only the source's
// count) still decodes, and says it has no per-query results, so nobody
// reads the source's count as a query's.
func TestSourceResultQueryResults(t *testing.T) {
	t.Parallel()
	var old research.SourceResult
	require.NoError(t, json.Unmarshal([]byte(`{"count":24,"error":"query 2: boom","queries":["a","b"]}`), &old))
	require.Equal(t, research.SourceResult{Count: 24, Error: "query 2: boom", Queries: []string{"a", "b"}}, old)
	require.False(t, old.HasQueryResults())

	sr := research.SourceResult{Count: 3, Error: "query 2: boom", Queries: []string{"a", "b"},
		QueryResults: []research.QueryResult{{Count: 3}, {Error: "boom"}}}
	require.True(t, sr.HasQueryResults())
	b, err := json.Marshal(sr)
	require.NoError(t, err)
	require.JSONEq(t, `{"count":3,"error":"query 2: boom","queries":["a","b"],"query_results":[{"count":3},{"count":0,"error":"boom"}]}`, string(b))
	var back research.SourceResult
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, sr, back)

	require.False(t, research.SourceResult{Error: "not configured"}.HasQueryResults(), "a source sent nothing has no queries")
}

func TestUserFeedbackPaperNotes(t *testing.T) {
	t.Parallel()
	coll := research.PaperCollection{Papers: []research.ScoredPaper{{RawPaper: research.RawPaper{ID: "a", Title: "A"}}}}
	long := strings.Repeat("é", research.MaxPaperNote)
	tests := []struct {
		name      string
		notes     map[string]string
		wantField string // "" means valid
	}{
		{"None", nil, ""},
		{"Shown", map[string]string{"a": "fits; check n"}, ""},
		{"Clear", map[string]string{"a": ""}, ""},
		{"LongestInCharacters", map[string]string{"a": long}, ""},
		{"TooLong", map[string]string{"a": long + "x"}, "paper_notes[a]"},
		{"NotShown", map[string]string{"zzz": "note"}, "paper_notes[zzz]"},
		{"NoPaper", map[string]string{" ": "note"}, "paper_notes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := research.UserFeedback{PaperNotes: tt.notes}.ValidateAgainst(coll)
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.Contains(t, fault.ErrorFields(err), tt.wantField)
		})
	}
}

func TestScoredPaperNeedsAReason(t *testing.T) {
	t.Parallel()
	p := research.ScoredPaper{RawPaper: research.RawPaper{ID: "doi:10.1/a", Title: "A", Source: "local"}, Score: 0.5}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(p.Validate()), "no reason")
	p.Reasons = []string{"  "}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(p.Validate()), "a blank reason")
	p.Reasons = []string{"matches \"a\" in title"}
	require.NoError(t, p.Validate())
}

func TestWorkflowStateChecksItsHistory(t *testing.T) {
	t.Parallel()
	good := research.SearchStrategy{Queries: []research.Query{{Text: "sleep"}}, Sources: []string{"local"}, MaxResultsPerSource: 5}
	tests := []struct {
		name    string
		history []research.IterationRecord
		ok      bool
	}{
		{"InOrder", []research.IterationRecord{{Iteration: 1, Strategy: good}, {Iteration: 2, Strategy: good}}, true},
		{"ZeroIteration", []research.IterationRecord{{Iteration: 0, Strategy: good}}, false},
		{"OutOfOrder", []research.IterationRecord{{Iteration: 2, Strategy: good}, {Iteration: 1, Strategy: good}}, false},
		{"InvalidStrategy", []research.IterationRecord{{Iteration: 1, Strategy: research.SearchStrategy{Sources: []string{"local"}, MaxResultsPerSource: 5}}}, false},
		{"InvalidFeedback", []research.IterationRecord{{Iteration: 1, Strategy: good, Feedback: &research.UserFeedback{MarkedRelevant: []string{"a"}, MarkedIrrelevant: []string{"a"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := research.WorkflowState{CurrentIteration: 2, History: tt.history}.Validate()
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
			}
		})
	}
}

// TestFiltersLearnedExcludeTerms: learned exclusions travel in their own
// snake_case field, left out when there are none, so strategies stored
// before it decode with every exclusion the researcher's.
func TestFiltersLearnedExcludeTerms(t *testing.T) {
	t.Parallel()
	var old research.Filters
	require.NoError(t, json.Unmarshal([]byte(`{"include_terms":["icu"],"exclude_terms":["children","mice"]}`), &old))
	require.Nil(t, old.LearnedExcludeTerms)
	require.Equal(t, []string{"children", "mice"}, old.ResearcherExcludeTerms())

	f := research.Filters{ExcludeTerms: []string{"children", "Cytokine", "endotoxin"}, LearnedExcludeTerms: []string{"cytokine", " endotoxin "}}
	b, err := json.Marshal(f)
	require.NoError(t, err)
	require.JSONEq(t, `{"exclude_terms":["children","Cytokine","endotoxin"],"learned_exclude_terms":["cytokine"," endotoxin "]}`, string(b))
	require.Equal(t, []string{"children"}, f.ResearcherExcludeTerms(), "terms compare ignoring case and spacing")

	b, err = json.Marshal(research.Filters{ExcludeTerms: []string{"x"}})
	require.NoError(t, err)
	require.NotContains(t, string(b), "learned")
}

// TestValidateSourcesNamesDisabledSources: a source Quarry has but this
// server has not enabled is named as such, with what is enabled, so the
// researcher does not hunt for a typo; a name Quarry does not know is
// unknown.
func TestValidateSourcesNamesDisabledSources(t *testing.T) {
	t.Parallel()
	s := research.SearchStrategy{Queries: []research.Query{{Text: "sleep"}}, Sources: []string{"local", "openalex", "nowhere"}, MaxResultsPerSource: 10}
	err := s.ValidateSources([]string{"local"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	require.Contains(t, fields["sources[1]"], `source "openalex" is not enabled on this server (enabled: local;`)
	require.Equal(t, `unknown source "nowhere"`, fields["sources[2]"])
	require.NotContains(t, fields, "sources[0]")
}

// TestWithPage: a next page adds to a source's counts and pages; a page
// that comes back empty though the total said more ends the paging (an
// API that serves only its first results) and keeps the total honest.
func TestWithPage(t *testing.T) {
	t.Parallel()
	r := research.SourceResult{Count: 25, Queries: []string{"q"}, QueryResults: []research.QueryResult{{Count: 25, Total: 5000}}}
	require.True(t, r.HasMore())
	r = r.WithPage(research.SourceResult{Count: 25, QueryResults: []research.QueryResult{{Count: 25, Total: 5000, Fetched: 25, Pages: 1}}})
	require.Equal(t, research.QueryResult{Count: 50, Total: 5000, Fetched: 50, Pages: 2}, r.QueryResults[0])
	require.Equal(t, 50, r.Count)
	require.True(t, r.HasMore())
	r = r.WithPage(research.SourceResult{QueryResults: []research.QueryResult{{Total: 5000, Pages: 1}}})
	require.Equal(t, research.QueryResult{Count: 50, Total: 5000, Fetched: 50, Pages: 3, End: true}, r.QueryResults[0])
	require.False(t, r.HasMore(), "an empty next page ends it")
	require.Equal(t, "50 shown of 5000 found", r.Found().String())
	require.Equal(t, 3, r.Pages())
}
