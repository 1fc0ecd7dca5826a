package embed_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/embed/embedtest"
)

// flat scores every paper 0.5, except those titled "excluded" 0.
type flat struct{}

func (flat) Score(_ context.Context, in skills.ScoreInput) ([]research.ScoredPaper, error) {
	out := make([]research.ScoredPaper, len(in.Papers))
	for i, p := range in.Papers {
		out[i] = research.ScoredPaper{RawPaper: p, Score: 0.5, Reasons: []string{"flat"}}
		if p.Title == "excluded" {
			out[i].Score = 0
		}
	}
	return out, nil
}

func scoreInput() skills.ScoreInput {
	return skills.ScoreInput{
		Intent: research.ParsedIntent{Topic: "cars"},
		Papers: []research.RawPaper{
			{ID: "a", Title: "Protein folding kinetics", Abstract: "Folding rates."},
			{ID: "b", Title: "Automobile crash tests", Abstract: "Vehicle safety ratings."},
			{ID: "c", Title: "excluded", Abstract: "Automobile automobile."},
		},
	}
}

// TestScorerAddsMeaning: a paper close in meaning to the question (by the
// fake's construction, sharing no word with it) scores above one that is
// not; marks pull toward the relevant papers; a ruled-out paper stays at
// 0; vectors are asked once per text.
func TestScorerAddsMeaning(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewServer(t)
	c := newClient(t, srv.URL, embed.Config{Model: "fake"})
	sc := embed.NewScorer(c, flat{})
	got, err := sc.Score(context.Background(), scoreInput())
	require.NoError(t, err)
	require.Greater(t, got[1].Score, got[0].Score)
	require.Zero(t, got[2].Score)
	require.Contains(t, got[1].Reasons[1], "with the question")
	for _, p := range got {
		require.NoError(t, p.Validate())
	}

	in := scoreInput()
	in.Intent.Topic = "studies"
	in.Relevant = []research.RawPaper{{ID: "r", Title: "Protein folding", Abstract: "Kinetics of folding."}}
	texts := srv.Texts()
	got, err = sc.Score(context.Background(), in)
	require.NoError(t, err)
	require.Greater(t, got[0].Score, got[1].Score, "the marks pull toward protein folding")
	require.Contains(t, got[0].Reasons[1], "papers marked relevant")
	require.Equal(t, 2, srv.Texts()-texts, "only the new question and the marked paper were embedded")
}

// TestScorerWithoutProviderOrServer: offline, the inner scorer itself;
// with the server failing, its scores unchanged.
func TestScorerWithoutProviderOrServer(t *testing.T) {
	t.Parallel()
	require.Equal(t, skills.Scorer(flat{}), embed.NewScorer(nil, flat{}))
	srv := embedtest.NewServer(t)
	srv.Fail = func(int) int { return http.StatusInternalServerError }
	sc := embed.NewScorer(newClient(t, srv.URL, embed.Config{Model: "fake"}), flat{})
	got, err := sc.Score(context.Background(), scoreInput())
	require.NoError(t, err)
	want, _ := flat{}.Score(context.Background(), scoreInput())
	require.Equal(t, want, got)
}
