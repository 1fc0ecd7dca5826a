package named

import (
	"context"
	"fmt"

	"quarry/internal/research"
)

// dedup is search.dedup: with {papers} → {papers, merged}: the pipeline's
// deduplicator's records of one paper merged into one; merged counts the
// records it removed.
func dedup(d Deps) Skill {
	return func(ctx context.Context, with map[string]any) (map[string]any, error) {
		in, err := arg[[]Paper](with, "papers", true)
		if err != nil {
			return nil, err
		}
		raws := make([]research.RawPaper, 0, len(in))
		for _, p := range in {
			raws = append(raws, p.raw())
		}
		out, _, err := d.Dedup.Dedup(ctx, raws)
		if err != nil {
			return nil, fmt.Errorf("deduplicate: %w", err)
		}
		papers := make([]Paper, 0, len(out))
		for _, p := range out {
			papers = append(papers, summary(p))
		}
		return plain(map[string]any{"papers": papers, "merged": len(in) - len(papers)})
	}
}
