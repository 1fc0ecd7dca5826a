package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/report"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestMarkdownEscapesMarkup: text the report copies from data (question,
// titles, feedback, notes, filters, source names, errors, warnings, file
// names, who started the run) reaches the Markdown with <, > and & escaped,
// so a renderer shows it as text instead of running it; queries stay
// verbatim inside code spans, where a renderer never reads markup.
func TestMarkdownEscapesMarkup(t *testing.T) {
	t.Parallel()
	const evil = "<script>alert(1)</script>"
	const escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
	paper := research.ScoredPaper{RawPaper: research.RawPaper{ID: "doi:10.1/x", Title: "Title " + evil}}
	rs := pipeline.RunState{
		Question:   "question " + evil,
		Collection: &research.PaperCollection{Papers: []research.ScoredPaper{paper}},
		Notes:      []research.Note{{Skill: "query_builder", Message: "note " + evil}},
		Workflow: research.WorkflowState{AccumulatedPapers: []research.ScoredPaper{paper}, History: []research.IterationRecord{
			{Iteration: 1, ResultCount: 1, SearchedAt: at1,
				Strategy: research.SearchStrategy{
					Queries: []research.Query{{Text: "query " + evil}, {Text: "second"}},
					Sources: []string{"openalex", "src " + evil},
					Filters: research.Filters{IncludeTerms: []string{"include " + evil}},
					Files:   []research.AttachedFile{{ID: "f1", Name: "file " + evil + ".ris", Records: 1}},
				},
				Sources: map[string]research.SourceResult{
					"openalex": {Count: 1, Queries: []string{"query " + evil, "second"}, Warnings: []string{"warning " + evil},
						QueryResults: []research.QueryResult{{Count: 1}, {Error: "query error " + evil}}},
					"src " + evil: {Error: "source error " + evil, Queries: []string{"q"}},
					research.FileSourceName(research.AttachedFile{Name: "file " + evil + ".ris"}): {Count: 1},
				},
				Dedup: research.DedupStats{Input: 1, Output: 1},
				Feedback: &research.UserFeedback{MarkedRelevant: []string{paper.ID},
					FreeTextFeedback: "feedback " + evil + "\nsecond line " + evil}},
		}},
	}
	var buf bytes.Buffer
	require.NoError(t, report.SearchStrategyMarkdown(&buf, report.RunInfo{ID: "r1", StartedBy: "who " + evil, Status: "completed"}, rs))
	md := buf.String()

	// Outside code (where a renderer reads markup) no tag survives.
	prose := regexp.MustCompile("(?s)```text\n.*?\n```|`[^`\n]*`").ReplaceAllString(md, "")
	require.NotContains(t, prose, "<", md)
	require.NotContains(t, prose, ">script", md)
	for _, label := range []string{"question ", "Title ", "feedback ", "second line ", "note ", "include ", "src ",
		"source error ", "query error ", "warning ", "file ", "who "} {
		require.Contains(t, md, label+escaped, "%q is escaped and readable", label)
	}
	// A query is shown exactly as sent, in a code span.
	require.Contains(t, md, "`query "+evil+"`")
	require.False(t, strings.Contains(md, "&amp;lt;"), "escaped once")
}
