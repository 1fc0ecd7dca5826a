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
	return func(ctx context.Context, in In) (map[string]any, error) {
		with := in.With
		papers, err := arg[[]Paper](with, "papers", true)
		if err != nil {
			return nil, err
		}
		raws := make([]research.RawPaper, 0, len(papers))
		for _, p := range papers {
			raws = append(raws, p.raw())
		}
		out, _, err := d.Dedup.Dedup(ctx, raws)
		if err != nil {
			return nil, fmt.Errorf("deduplicate: %w", err)
		}
		merged := make([]Paper, 0, len(out))
		for _, p := range out {
			merged = append(merged, summary(p))
		}
		return plain(map[string]any{"papers": merged, "merged": len(papers) - len(merged)})
	}
}
