package named

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// keep is papers.keep: with {kept, batch, pick?} → {kept, count,
// ignored}: kept with the batch's papers added, all of them, or with pick
// (what a person typed at a gate) only those it names, by position in the
// batch (1 is the first) or by ID, separated by spaces or commas. A word
// that names no paper of the batch is listed in ignored rather than
// failing the stage, so a typo costs one paper, not the screening. A
// paper already kept is not added twice.
func keep(_ context.Context, with map[string]any) (map[string]any, error) {
	kept, err := arg[[]Paper](with, "kept", false)
	if err != nil {
		return nil, err
	}
	b, err := arg[[]Paper](with, "batch", true)
	if err != nil {
		return nil, err
	}
	pick, err := arg[string](with, "pick", false)
	if err != nil {
		return nil, err
	}
	chosen, ignored := b, []string{}
	if words := strings.FieldsFunc(pick, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }); len(words) > 0 {
		chosen = nil
		for _, w := range words {
			i := slices.IndexFunc(b, func(p Paper) bool { return p.ID == w })
			if n, err := strconv.Atoi(w); err == nil && i < 0 {
				i = n - 1
			}
			if i < 0 || i >= len(b) {
				ignored = append(ignored, w)
				continue
			}
			chosen = append(chosen, b[i])
		}
	}
	for _, p := range chosen {
		if !slices.ContainsFunc(kept, func(k Paper) bool { return k.ID == p.ID }) {
			p.Position = 0 // a place in a batch, not in what is kept
			kept = append(kept, p)
		}
	}
	return plain(map[string]any{"kept": nonNil(kept), "count": len(kept), "ignored": ignored})
}
