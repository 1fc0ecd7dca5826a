package report_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/report"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestNoSourceSearchedSaysWhy: "none yet" only while the run can still
// search; a run that ended before any search (its only strategy rejected)
// says it ended first, and one that searched only an attached file says
// none.
func TestNoSourceSearchedSaysWhy(t *testing.T) {
	t.Parallel()
	rejected := research.IterationRecord{Iteration: 1,
		Strategy: research.SearchStrategy{Queries: []research.Query{{Text: "sleep"}}, Sources: []string{"openalex"}},
		Feedback: &research.UserFeedback{FreeTextFeedback: "wrong population"}}
	fileOnly := research.IterationRecord{Iteration: 1, SearchedAt: at1, ResultCount: 2,
		Strategy: research.SearchStrategy{Files: []research.AttachedFile{{ID: "f1", Name: "t1.ris", Records: 2}}},
		Sources:  map[string]research.SourceResult{research.FileSourceName(research.AttachedFile{ID: "f1", Name: "t1.ris"}): {Count: 2}}}
	tests := []struct {
		name   string
		status string
		state  research.WorkflowState
		want   string
	}{
		{"Waiting", "waiting", research.WorkflowState{}, "none yet"},
		{"RejectedThenEnded", "completed", research.WorkflowState{History: []research.IterationRecord{rejected}, IsComplete: true}, "none: the run ended before searching"},
		{"CanceledBeforeSearching", "canceled", research.WorkflowState{}, "none: the run ended before searching"},
		{"EndedNoStatusGiven", "", research.WorkflowState{History: []research.IterationRecord{rejected}, IsComplete: true}, "none: the run ended before searching"},
		{"OnlyAFileSearched", "completed", research.WorkflowState{History: []research.IterationRecord{fileOnly}, IsComplete: true}, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, report.SearchStrategyMarkdown(&buf, report.RunInfo{ID: "r", Status: tt.status},
				pipeline.RunState{Question: "sleep", Workflow: tt.state}))
			require.Contains(t, buf.String(), "- Databases and sources searched: "+tt.want+"\n")
		})
	}
}
