package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// TestResultPayloadPaperIDs: a review lists the papers it shows (this
// iteration's collection, not the accumulated ones shown before), which
// the store records as the papers the run showed.
func TestResultPayloadPaperIDs(t *testing.T) {
	t.Parallel()
	p := pipeline.ResultPayload{
		Collection: research.PaperCollection{Papers: []research.ScoredPaper{
			{RawPaper: research.RawPaper{ID: "doi:10.1093/sleep/26.2.117"}}, {RawPaper: research.RawPaper{ID: "t:abc"}},
		}},
		AccumulatedPapers: []research.ScoredPaper{{RawPaper: research.RawPaper{ID: "old"}}},
	}
	require.Equal(t, []string{"doi:10.1093/sleep/26.2.117", "t:abc"}, p.PaperIDs())
	require.Empty(t, pipeline.ResultPayload{}.PaperIDs())
}
