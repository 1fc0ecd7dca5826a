package handlers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
)

// TestGroupsOfOrdersGroupsByBestScore: the review shows themes best first
// (by their best paper's score, then label), whatever order the collection
// lists them in, "Other" included; it used to keep the collection's order.
func TestGroupsOfOrdersGroupsByBestScore(t *testing.T) {
	paper := func(id string, score float64) research.ScoredPaper {
		return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: id}, Score: score}
	}
	c := research.PaperCollection{
		Papers: []research.ScoredPaper{
			paper("a", 0.2), paper("b", 0.9), paper("c", 0.5), paper("d", 0.5), paper("e", 0.95), paper("f", 0.1),
		},
		Groups: []research.Group{
			{Label: "low", PaperIDs: []string{"a", "f"}},
			{Label: "zeta", PaperIDs: []string{"c"}},
			{Label: "high", PaperIDs: []string{"f", "b"}},
			{Label: "alpha", PaperIDs: []string{"d"}},
		},
	}
	var labels []string
	for _, g := range groupsOf(c) {
		labels = append(labels, g.Label)
	}
	require.Equal(t, []string{"Other", "high", "alpha", "zeta", "low"}, labels)
}
