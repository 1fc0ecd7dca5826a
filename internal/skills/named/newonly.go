package named

import (
	"context"
)

// newOnly is papers.new_only: with {papers, seen} → {papers, seen, count}:
// the papers whose IDs are not in seen (a list of IDs), and seen with
// theirs added, so a living review shows each paper once across rounds.
func newOnly(_ context.Context, with map[string]any) (map[string]any, error) {
	papers, err := arg[[]Paper](with, "papers", true)
	if err != nil {
		return nil, err
	}
	seen, err := arg[[]string](with, "seen", false)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(seen))
	for _, id := range seen {
		known[id] = true
	}
	fresh := []Paper{}
	for _, p := range papers {
		if !known[p.ID] {
			known[p.ID] = true
			fresh = append(fresh, p)
			seen = append(seen, p.ID)
		}
	}
	if seen == nil {
		seen = []string{}
	}
	return plain(map[string]any{"papers": fresh, "seen": seen, "count": len(fresh)})
}
