package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources"
)

// warningSource returns its papers with a warning, as PubMed does when
// esearch leaves terms out.
type warningSource struct{ poolSource }

func (s warningSource) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	papers, err := s.poolSource.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	return papers, &sources.Warning{Message: "terms left out: zzyzx"}
}

// TestSearchProgressNamesWarnings: the live progress line of a source that
// returned papers with a warning says so, not just its paper count.
func TestSearchProgressNamesWarnings(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	sk, _ := fakeSkills(warningSource{poolSource{"alpha"}})
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, nil)
	events, stop := eng.Events().Subscribe("")
	defer stop()
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sleep and memory consolidation"})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	var lines []string
	for len(events) > 0 {
		if ev := <-events; ev.Type == engine.EventProgress && strings.HasPrefix(ev.Message, "alpha: ") {
			lines = append(lines, ev.Message)
		}
	}
	require.NotEmpty(t, lines)
	last := lines[len(lines)-1]
	require.Contains(t, last, "alpha: 1 found", "what it found, worded as the review words it")
	require.Contains(t, last, "(warning: ")
	require.Contains(t, last, "zzyzx")
}
