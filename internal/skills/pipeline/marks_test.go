package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

func ids(ps []research.ScoredPaper) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// TestSetsOf: papers are separated by their current mark, the stored one
// first, else the one the run's decisions recorded; unsure is not
// screened; a paper marked relevant in an earlier iteration stays
// relevant though the last search did not find it again.
func TestSetsOf(t *testing.T) {
	t.Parallel()
	a, b, c, d, e := paper("a", "A"), paper("b", "B"), paper("c", "C"), paper("d", "D"), paper("old", "Old")
	final := research.PaperCollection{Papers: []research.ScoredPaper{a, b, c, d}}
	rs := pipeline.RunState{Final: &final,
		Workflow:         research.WorkflowState{AccumulatedPapers: []research.ScoredPaper{e, a}, PaperNotes: map[string]string{"a": "kept"}},
		MarkedIrrelevant: []research.ScoredPaper{paper("x", "X")}}
	marks := []research.Mark{
		{PaperID: "b", Mark: research.MarkIrrelevant, Reason: "population"},
		{PaperID: "c", Mark: research.MarkUnsure, Note: "check"},
		{PaperID: "d", Mark: research.MarkRelevant},
	}
	s := pipeline.SetsOf(rs, marks)
	require.Equal(t, []string{"old", "a", "d"}, ids(s.Relevant))
	require.Equal(t, []string{"c"}, ids(s.NotScreened))
	require.Equal(t, []string{"b", "x"}, ids(s.Irrelevant))
	require.Equal(t, map[string]string{"old": "relevant", "a": "relevant", "b": "irrelevant", "c": "unsure", "d": "relevant", "x": "irrelevant"}, s.Marks)
	require.Equal(t, map[string]string{"a": "kept", "c": "check"}, s.Notes)
	require.Equal(t, map[string]string{"b": "population"}, s.Reasons)

	// Before any mark nothing is relevant: the run's papers are unscreened.
	s = pipeline.SetsOf(pipeline.RunState{Final: &final}, nil)
	require.Empty(t, s.Relevant)
	require.Len(t, s.NotScreened, 4)
}

// TestMergeMarks: stored marks join a decision's feedback for the papers it
// does not name; what it names wins; papers outside the review are left
// out; the decision's own feedback is not changed.
func TestMergeMarks(t *testing.T) {
	t.Parallel()
	coll := research.PaperCollection{Papers: []research.ScoredPaper{paper("a", "A"), paper("b", "B"), paper("c", "C")}}
	fb := research.UserFeedback{MarkedIrrelevant: []string{"a"}, FreeTextFeedback: "more", PaperNotes: map[string]string{"a": "mine"}}
	marks := []research.Mark{
		{PaperID: "a", Mark: research.MarkRelevant, Note: "stored"},
		{PaperID: "b", Mark: research.MarkRelevant, Note: "fits"},
		{PaperID: "c", Mark: research.MarkUnsure},
		{PaperID: "gone", Mark: research.MarkRelevant},
	}
	got := pipeline.MergeMarks(fb, marks, coll)
	require.Equal(t, research.UserFeedback{MarkedRelevant: []string{"b"}, MarkedIrrelevant: []string{"a"}, FreeTextFeedback: "more",
		PaperNotes: map[string]string{"a": "mine", "b": "fits"}}, got)
	require.Equal(t, map[string]string{"a": "mine"}, fb.PaperNotes)
	require.NoError(t, got.ValidateAgainst(coll))
}
