package eval

import (
	"context"
	"fmt"
	"io"
	"strings"

	"quarry/internal/skills/sources/local"
)

// searchGrid is every tuning the leave-one-review-out selection tries: the
// ranked retrieval's constants that were chosen by looking at results,
// each over its plausible range.
func searchGrid() []local.Tuning {
	var out []local.Tuning
	base := local.DefaultTuning()
	for _, tw := range []float64{3, 8, 12, 20} {
		for _, ww := range []float64{0.5, 1, 1.5, 2.5} {
			for _, decay := range []float64{0.5, 1, 2} {
				for _, fbw := range []float64{0.5, 1, 1.5} {
					t := base
					t.TitleWeight, t.WordsWeight, t.ConceptDecay, t.FeedbackWeight = tw, ww, decay, fbw
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// searchObjective is what the selection maximises for a review: the mean
// of its recall at 100 and at 500, the two cuts the benchmark reports.
func searchObjective(r SearchResult) float64 { return (r.Recall[1] + r.Recall[2]) / 2 }

// SearchLOSO chooses the ranked retrieval's tuning leave-one-review-out:
// for each review, the tuning of searchGrid with the best mean objective
// over the other reviews, measured on the held-out one. It prints each
// fold's choice and the held-out recall, then "search loso: recall@100=…
// recall@500=… bm25_recall@100=… bm25_recall@500=…".
func SearchLOSO(ctx context.Context, dir string, out io.Writer) (SearchSummary, error) {
	grid := searchGrid()
	sums, err := searchTunings(ctx, dir, out, grid, false, SearchLibrary{})
	if err != nil {
		return SearchSummary{}, err
	}
	held := SearchSummary{Pool: sums[0].Pool, Library: sums[0].Library}
	for r, rev := range sums[0].Reviews {
		best, bestScore := 0, -1.0
		for g, s := range sums {
			var score float64
			for o, other := range s.Reviews {
				if o != r && other.Included > 0 {
					score += searchObjective(other)
				}
			}
			if score > bestScore+1e-12 {
				best, bestScore = g, score
			}
		}
		res := sums[best].Reviews[r]
		held.Reviews = append(held.Reviews, res)
		fmt.Fprintf(out, "fold %s: %s held-out%s\n", rev.Review, formatTuning(grid[best]), formatRecalls("recall", res.Recall))
	}
	held.MeanRecall = meanOver(held.Reviews, func(r SearchResult) []float64 { return r.Recall })
	held.MeanBM25 = meanOver(held.Reviews, func(r SearchResult) []float64 { return r.BM25 })
	best, bestScore := 0, -1.0
	for g, s := range sums {
		var score float64
		for _, r := range s.Reviews {
			if r.Included > 0 {
				score += searchObjective(r)
			}
		}
		if score > bestScore+1e-12 {
			best, bestScore = g, score
		}
	}
	fmt.Fprintf(out, "all reviews choose: %s (in-sample recall@100=%.4f recall@500=%.4f)\n", formatTuning(grid[best]), sums[best].MeanRecall[1], sums[best].MeanRecall[2])
	fmt.Fprintf(out, "search loso: recall@100=%.4f recall@500=%.4f bm25_recall@100=%.4f bm25_recall@500=%.4f\n",
		held.MeanRecall[1], held.MeanRecall[2], held.MeanBM25[1], held.MeanBM25[2])
	return held, nil
}

func formatTuning(t local.Tuning) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TitleWeight=%g WordsWeight=%g ConceptDecay=%g FeedbackWeight=%g", t.TitleWeight, t.WordsWeight, t.ConceptDecay, t.FeedbackWeight)
	return b.String()
}
