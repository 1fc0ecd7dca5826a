package named

import (
	"context"

	"quarry/internal/fault"
)

// batch is papers.batch: with {papers, screened, size} → {batch,
// screened, remaining}: the next size papers (default 10) whose IDs are
// not in screened, in order, each with its position in the batch; screened with theirs added; and how many
// are left after this batch. An empty batch means everything is screened.
func batch(_ context.Context, with map[string]any) (map[string]any, error) {
	papers, err := arg[[]Paper](with, "papers", true)
	if err != nil {
		return nil, err
	}
	screened, err := arg[[]string](with, "screened", false)
	if err != nil {
		return nil, err
	}
	size, err := arg[int](with, "size", false)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		size = 10
	}
	if size < 0 {
		return nil, fault.Errorf(fault.EInvalid, "with.size must be positive")
	}
	done := make(map[string]bool, len(screened))
	for _, id := range screened {
		done[id] = true
	}
	next, remaining := []Paper{}, 0
	for _, p := range papers {
		switch {
		case done[p.ID]:
		case len(next) < size:
			done[p.ID] = true
			p.Position = len(next) + 1
			next = append(next, p)
			screened = append(screened, p.ID)
		default:
			remaining++
		}
	}
	if screened == nil {
		screened = []string{}
	}
	return plain(map[string]any{"batch": nonNil(next), "screened": screened, "remaining": remaining})
}
