package named

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
)

// score is search.score: with {intent, papers, min?} → {papers}: each
// paper scored by the pipeline's relevance scorer, best first, those below
// min (0 to 1, default 0) left out.
func score(d Deps) Skill {
	return func(ctx context.Context, in In) (map[string]any, error) {
		with := in.With
		intent, err := arg[research.ParsedIntent](with, "intent", true)
		if err != nil {
			return nil, err
		}
		papers, err := arg[[]Paper](with, "papers", true)
		if err != nil {
			return nil, err
		}
		floor, err := arg[float64](with, "min", false)
		if err != nil {
			return nil, err
		}
		raws := make([]research.RawPaper, 0, len(papers))
		for _, p := range papers {
			raws = append(raws, p.raw())
		}
		scored, err := d.Scorer.Score(ctx, skills.ScoreInput{Intent: intent, Papers: raws})
		if err != nil {
			return nil, fmt.Errorf("score: %w", err)
		}
		if len(scored) != len(raws) {
			return nil, fault.Errorf(fault.EInternal, "the scorer returned %d papers for %d", len(scored), len(raws))
		}
		slices.SortStableFunc(scored, func(a, b research.ScoredPaper) int { return cmp.Compare(b.Score, a.Score) })
		ranked := []Paper{}
		for _, s := range scored {
			if s.Score < floor {
				continue
			}
			p := summary(s.RawPaper)
			p.Score = s.Score
			ranked = append(ranked, p)
		}
		return plain(map[string]any{"papers": ranked})
	}
}
