package skills_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/skills"
)

// TestIterationRecordJSON: runs stored before the search fields existed
// still decode, and a record without a search writes none of them.
func TestIterationRecordJSON(t *testing.T) {
	t.Parallel()
	old := `{"iteration":2,"strategy":{"queries":[{"text":"a"}],"sources":["x"],"year_range":{},"max_results_per_source":5,"filters":{}},` +
		`"result_count":7,"feedback":{"marked_relevant":["p"],"marked_irrelevant":[],"free_text_feedback":"f"}}`
	var r skills.IterationRecord
	require.NoError(t, json.Unmarshal([]byte(old), &r))
	require.Equal(t, 2, r.Iteration)
	require.Equal(t, 7, r.ResultCount)
	require.True(t, r.SearchedAt.IsZero())
	require.True(t, r.Searched(), "an old record with results was searched")
	require.Equal(t, []string{"p"}, r.Feedback.MarkedRelevant)

	b, err := json.Marshal(skills.IterationRecord{Iteration: 1})
	require.NoError(t, err)
	require.NotContains(t, string(b), "searched_at")
	require.NotContains(t, string(b), "dedup")
	require.False(t, skills.IterationRecord{Iteration: 1}.Searched())

	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	full := skills.IterationRecord{Iteration: 1, SearchedAt: at,
		Sources: map[string]skills.SourceResult{"x": {Count: 3, Queries: []string{"a"}}}, Dedup: skills.DedupStats{Input: 3, Output: 2, Merged: 1}}
	b, err = json.Marshal(full)
	require.NoError(t, err)
	require.Contains(t, string(b), `"searched_at":"2025-01-02T03:04:05Z"`)
	var back skills.IterationRecord
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, full, back)
}

// TestSourceResultWarnings: a source's warnings travel in their own JSON
// field, are left out when there are none (older records stay as they
// were), and a state recording them is valid.
func TestSourceResultWarnings(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(skills.SourceResult{Count: 2})
	require.NoError(t, err)
	require.JSONEq(t, `{"count":2}`, string(b))

	sr := skills.SourceResult{Count: 3, Warnings: []string{"PubMed did not run the query as written: terms not found, left out: zzz"}, Queries: []string{"sleep zzz"}}
	b, err = json.Marshal(sr)
	require.NoError(t, err)
	require.JSONEq(t, `{"count":3,"warnings":["PubMed did not run the query as written: terms not found, left out: zzz"],"queries":["sleep zzz"]}`, string(b))
	var back skills.SourceResult
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, sr, back)

	st := skills.WorkflowState{CurrentIteration: 1, History: []skills.IterationRecord{{Iteration: 1, SearchedAt: time.Now(),
		Strategy: skills.SearchStrategy{Queries: []skills.Query{{Text: "sleep zzz"}}, Sources: []string{"pubmed"}, MaxResultsPerSource: 5},
		Sources:  map[string]skills.SourceResult{"pubmed": sr}, ResultCount: 3}}}
	require.NoError(t, st.Validate())
	require.NoError(t, skills.PaperCollection{Sources: map[string]skills.SourceResult{"pubmed": sr}}.Validate())
}

// TestSourceResultQueryResults: each query's own result travels in
// query_results; a result stored before it existed (only the source's
// count) still decodes, and says it has no per-query results, so nobody
// reads the source's count as a query's.
func TestSourceResultQueryResults(t *testing.T) {
	t.Parallel()
	var old skills.SourceResult
	require.NoError(t, json.Unmarshal([]byte(`{"count":24,"error":"query 2: boom","queries":["a","b"]}`), &old))
	require.Equal(t, skills.SourceResult{Count: 24, Error: "query 2: boom", Queries: []string{"a", "b"}}, old)
	require.False(t, old.HasQueryResults())

	sr := skills.SourceResult{Count: 3, Error: "query 2: boom", Queries: []string{"a", "b"},
		QueryResults: []skills.QueryResult{{Count: 3}, {Error: "boom"}}}
	require.True(t, sr.HasQueryResults())
	b, err := json.Marshal(sr)
	require.NoError(t, err)
	require.JSONEq(t, `{"count":3,"error":"query 2: boom","queries":["a","b"],"query_results":[{"count":3},{"count":0,"error":"boom"}]}`, string(b))
	var back skills.SourceResult
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, sr, back)

	require.False(t, skills.SourceResult{Error: "not configured"}.HasQueryResults(), "a source sent nothing has no queries")
}

func TestUserFeedbackPaperNotes(t *testing.T) {
	t.Parallel()
	coll := skills.PaperCollection{Papers: []skills.ScoredPaper{{RawPaper: skills.RawPaper{ID: "a", Title: "A"}}}}
	long := strings.Repeat("é", skills.MaxPaperNote)
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
			err := skills.UserFeedback{PaperNotes: tt.notes}.ValidateAgainst(coll)
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
	p := skills.ScoredPaper{RawPaper: skills.RawPaper{ID: "doi:10.1/a", Title: "A", Source: "local"}, Score: 0.5}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(p.Validate()), "no reason")
	p.Reasons = []string{"  "}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(p.Validate()), "a blank reason")
	p.Reasons = []string{"matches \"a\" in title"}
	require.NoError(t, p.Validate())
}

func TestWorkflowStateChecksItsHistory(t *testing.T) {
	t.Parallel()
	good := skills.SearchStrategy{Queries: []skills.Query{{Text: "sleep"}}, Sources: []string{"local"}, MaxResultsPerSource: 5}
	tests := []struct {
		name    string
		history []skills.IterationRecord
		ok      bool
	}{
		{"InOrder", []skills.IterationRecord{{Iteration: 1, Strategy: good}, {Iteration: 2, Strategy: good}}, true},
		{"ZeroIteration", []skills.IterationRecord{{Iteration: 0, Strategy: good}}, false},
		{"OutOfOrder", []skills.IterationRecord{{Iteration: 2, Strategy: good}, {Iteration: 1, Strategy: good}}, false},
		{"InvalidStrategy", []skills.IterationRecord{{Iteration: 1, Strategy: skills.SearchStrategy{Sources: []string{"local"}, MaxResultsPerSource: 5}}}, false},
		{"InvalidFeedback", []skills.IterationRecord{{Iteration: 1, Strategy: good, Feedback: &skills.UserFeedback{MarkedRelevant: []string{"a"}, MarkedIrrelevant: []string{"a"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := skills.WorkflowState{CurrentIteration: 2, History: tt.history}.Validate()
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
	var old skills.Filters
	require.NoError(t, json.Unmarshal([]byte(`{"include_terms":["icu"],"exclude_terms":["children","mice"]}`), &old))
	require.Nil(t, old.LearnedExcludeTerms)
	require.Equal(t, []string{"children", "mice"}, old.ResearcherExcludeTerms())

	f := skills.Filters{ExcludeTerms: []string{"children", "Cytokine", "endotoxin"}, LearnedExcludeTerms: []string{"cytokine", " endotoxin "}}
	b, err := json.Marshal(f)
	require.NoError(t, err)
	require.JSONEq(t, `{"exclude_terms":["children","Cytokine","endotoxin"],"learned_exclude_terms":["cytokine"," endotoxin "]}`, string(b))
	require.Equal(t, []string{"children"}, f.ResearcherExcludeTerms(), "terms compare ignoring case and spacing")

	b, err = json.Marshal(skills.Filters{ExcludeTerms: []string{"x"}})
	require.NoError(t, err)
	require.NotContains(t, string(b), "learned")
}

// TestValidateSourcesNamesDisabledSources: a source Quarry has but this
// server has not enabled is named as such, with what is enabled, so the
// researcher does not hunt for a typo; a name Quarry does not know is
// unknown.
func TestValidateSourcesNamesDisabledSources(t *testing.T) {
	t.Parallel()
	s := skills.SearchStrategy{Queries: []skills.Query{{Text: "sleep"}}, Sources: []string{"local", "openalex", "nowhere"}, MaxResultsPerSource: 10}
	err := s.ValidateSources([]string{"local"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	fields := fault.ErrorFields(err)
	require.Contains(t, fields["sources[1]"], `source "openalex" is not enabled on this server (enabled: local;`)
	require.Equal(t, `unknown source "nowhere"`, fields["sources[2]"])
	require.NotContains(t, fields, "sources[0]")
}
