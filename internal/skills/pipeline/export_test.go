package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
)

func paper(id, title string) skills.ScoredPaper {
	return skills.ScoredPaper{RawPaper: skills.RawPaper{ID: id, Title: title, Venue: "Journal of Tests"}, Score: 0.5}
}

func TestExportRecords(t *testing.T) {
	t.Parallel()
	a, b, c, d := paper("a", "A"), paper("b", "B"), paper("c", "C"), paper("d", "D")
	a.ArxivID, a.Venue = "2101.00001", "arXiv"
	notes := map[string]string{"a": "fits; check n", "b": "wrong population", "x": "not exported"}
	done := pipeline.RunState{
		Collection:       &skills.PaperCollection{Papers: []skills.ScoredPaper{a, b, c}},
		Final:            &skills.PaperCollection{Papers: []skills.ScoredPaper{a, b, c, d}},
		Workflow:         skills.WorkflowState{AccumulatedPapers: []skills.ScoredPaper{a, d}, PaperNotes: notes},
		MarkedIrrelevant: []skills.ScoredPaper{b},
	}
	running := done
	running.Final = nil
	fresh := pipeline.RunState{}

	type row struct{ id, mark, note, typ string }
	tests := []struct {
		name     string
		rs       pipeline.RunState
		set      string
		want     []row
		wantCode string
	}{
		{"FinalLeavesOutIrrelevant", done, pipeline.ExportFinal, []row{
			{"a", biblio.Relevant, "fits; check n", biblio.Preprint}, {"c", "", "", biblio.Article}, {"d", biblio.Relevant, "", biblio.Article}}, ""},
		{"FinalWhileRunning", running, pipeline.ExportFinal, nil, engine.EInvalid},
		{"Accumulated", running, pipeline.ExportAccumulated, []row{
			{"a", biblio.Relevant, "fits; check n", biblio.Preprint}, {"d", biblio.Relevant, "", biblio.Article}}, ""},
		{"AccumulatedNone", fresh, pipeline.ExportAccumulated, []row{}, ""},
		{"Review", running, pipeline.ExportReview, []row{
			{"a", biblio.Relevant, "fits; check n", biblio.Preprint}, {"b", biblio.Irrelevant, "wrong population", biblio.Article}, {"c", "", "", biblio.Article}}, ""},
		{"ReviewBeforeSearch", fresh, pipeline.ExportReview, nil, engine.EInvalid},
		{"UnknownSet", done, "everything", nil, engine.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recs, err := pipeline.ExportRecords(tt.rs, tt.set)
			require.Equal(t, tt.wantCode, engine.ErrorCode(err), "%v", err)
			if tt.wantCode != "" {
				require.NotEmpty(t, engine.ErrorMessage(err))
				require.Contains(t, engine.ErrorFields(err), "set")
				return
			}
			got := make([]row, 0, len(recs))
			for _, r := range recs {
				got = append(got, row{r.Paper.ID, r.Mark, r.Note, r.Type})
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestPaperType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    skills.RawPaper
		want string
	}{
		{"ArxivOnly", skills.RawPaper{ArxivID: "2101.00001"}, biblio.Preprint},
		{"ArxivVenue", skills.RawPaper{Venue: "arXiv (Cornell University)"}, biblio.Preprint},
		{"ArxivDOI", skills.RawPaper{DOI: "10.48550/arXiv.2101.00001", Venue: "arXiv"}, biblio.Preprint},
		{"PublishedPreprint", skills.RawPaper{ArxivID: "2101.00001", DOI: "10.1000/x", Venue: "Journal of X"}, biblio.Article},
		{"BioRxiv", skills.RawPaper{DOI: "10.1101/2020.01.01.1", Venue: "bioRxiv"}, biblio.Preprint},
		{"Proceedings", skills.RawPaper{DOI: "10.1145/1", Venue: "Proceedings of the VLDB Endowment"}, biblio.Conference},
		{"Journal", skills.RawPaper{Venue: "Journal of Sleep Research"}, biblio.Article},
		{"VolumeOnly", skills.RawPaper{Venue: "Nature", Volume: "12"}, biblio.Article},
		{"PubMed", skills.RawPaper{PMID: "123"}, biblio.Article},
		{"Unknown", skills.RawPaper{Title: "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, pipeline.PaperType(tt.p))
		})
	}
}

// TestFinalCollectionLeavesOutIrrelevant: a paper marked irrelevant at the
// last review is not in the final collection (a researcher exporting their
// final set does not want rejected papers), while papers marked relevant
// and unmarked ones are, with the marks and notes exported alongside.
func TestFinalCollectionLeavesOutIrrelevant(t *testing.T) {
	t.Parallel()
	sk, _ := fakeSkills(fixedSource{"alpha"})
	var a, b string
	rs := drive(t, sk, pipeline.Options{}, func(_ engine.Checkpoint, p *skills.ResultPayload) engine.Decision {
		if p == nil {
			return engine.Decision{Action: engine.Approve}
		}
		a, b = p.Collection.Papers[0].ID, p.Collection.Papers[1].ID
		return engine.Decision{Action: engine.Approve, RevisedData: mustJSON(t, skills.UserFeedback{
			MarkedRelevant: []string{a}, MarkedIrrelevant: []string{b}, PaperNotes: map[string]string{a: "keep", b: "off topic"}})}
	})
	require.NotNil(t, rs.Final)
	require.NoError(t, rs.Final.Validate())
	_, ok := rs.Final.Paper(b)
	require.False(t, ok, "the paper marked irrelevant is left out")
	for _, g := range rs.Final.Groups {
		require.NotContains(t, g.PaperIDs, b)
	}
	require.Len(t, rs.Final.Papers, len(rs.Collection.Papers)-1)
	require.Equal(t, []string{b}, []string{rs.MarkedIrrelevant[0].ID}, "the state still lists it apart")

	recs, err := pipeline.ExportRecords(rs, pipeline.ExportFinal)
	require.NoError(t, err)
	require.Len(t, recs, len(rs.Final.Papers))
	require.Equal(t, a, recs[0].Paper.ID)
	require.Equal(t, biblio.Relevant, recs[0].Mark)
	require.Equal(t, "keep", recs[0].Note)
	review, err := pipeline.ExportRecords(rs, pipeline.ExportReview)
	require.NoError(t, err)
	require.Equal(t, biblio.Irrelevant, review[1].Mark)
	require.Equal(t, "off topic", review[1].Note)
}
