package querybuilder_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"quarry/internal/eval"
	"quarry/internal/research"
	"quarry/internal/shareddata"
	"quarry/internal/skills"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/query"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/text"
)

// exclusionLifts are the lifts TestLearnedTermsOnScreeningData chooses
// among for learned exclusions.
var exclusionLifts = []float64{2, 3, 4, 6}

// TestLearnedTermsOnScreeningData measures learning from marks on the
// labelled screening reviews (shared data) and chooses the lift a learned
// exclusion needs by leave-one-review-out. It runs only with
// QUARRY_LEARNED_CHECK=1 (a minute or two on two cores). For each review,
// 20 simulated iterations draw a collection (60 excluded records and up
// to 6 included ones), mark 3 included relevant and 10 excluded
// irrelevant, build, and measure each learned term on the review's
// records that were NOT in the collection: the share of unseen included
// records an exclusion would remove (lost) and of unseen excluded ones
// (removed), and how much more common an expansion term is among unseen
// included records than among unseen excluded ones. A review's score for
// a lift is the exclusions' removed - 2*lost per iteration (a relevant
// paper lost costs twice an irrelevant one removed; no exclusion scores
// 0); each review's held-out score is at the lift best on the other
// eleven.
func TestLearnedTermsOnScreeningData(t *testing.T) {
	if testing.Short() || os.Getenv("QUARRY_LEARNED_CHECK") == "" {
		t.Skip("set QUARRY_LEARNED_CHECK=1 to measure learned terms on the screening benchmark")
	}
	dir := shareddata.Dir("screening")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no screening data at %s", dir)
	}
	names, err := eval.ScreeningReviewNames(dir)
	require.NoError(t, err)
	score := make([][]float64, len(names)) // review × lift
	for ri, name := range names {
		rev, err := eval.ReadScreeningReview(dir, name)
		require.NoError(t, err)
		q := rev.Question
		for utf8.RuneCountInString(q) > research.MaxQuestionLength {
			q = q[:len(q)/2]
		}
		in0, err := intent.New(nil).ParseIntent(context.Background(), q)
		require.NoError(t, err)
		stems := make([]map[string]bool, len(rev.Records))
		var inc, exc []int
		for i, r := range rev.Records {
			stems[i] = map[string]bool{}
			for _, s := range text.Tokenize(r.Paper.Title + " " + r.Paper.Abstract) {
				stems[i][s] = true
			}
			if r.Included {
				inc = append(inc, i)
			} else {
				exc = append(exc, i)
			}
		}
		score[ri] = make([]float64, len(exclusionLifts))
		for li, lift := range exclusionLifts {
			b := querybuilder.NewWithExclusionLift(lift)
			rng := rand.New(rand.NewPCG(1, uint64(ri)))
			inc, exc := slices.Clone(inc), slices.Clone(exc)
			var lost, removed, expLift, net float64
			var ne, nx int
			const iterations = 20
			for range iterations {
				rng.Shuffle(len(inc), func(i, j int) { inc[i], inc[j] = inc[j], inc[i] })
				rng.Shuffle(len(exc), func(i, j int) { exc[i], exc[j] = exc[j], exc[i] })
				seen := map[int]bool{}
				in := skills.QueryInput{Intent: in0, Sources: []string{query.Local}}
				var fb research.UserFeedback
				add := func(i int, rel, mark bool) {
					p := rev.Records[i].Paper
					p.ID = fmt.Sprintf("r%d", i)
					seen[i] = true
					in.Collection = append(in.Collection, p)
					if !mark {
						return
					}
					in.Marked = append(in.Marked, research.ScoredPaper{RawPaper: p, Score: 0.5})
					if rel {
						fb.MarkedRelevant = append(fb.MarkedRelevant, p.ID)
					} else {
						fb.MarkedIrrelevant = append(fb.MarkedIrrelevant, p.ID)
					}
				}
				for k, i := range inc[:min(6, len(inc))] {
					add(i, true, k < 3)
				}
				for k, i := range exc[:min(60, len(exc))] {
					add(i, false, k < 10)
				}
				in.Feedback = []research.UserFeedback{fb}
				s, err := b.BuildStrategy(context.Background(), in)
				require.NoError(t, err)
				share := func(idx []int, term string) float64 {
					ts := text.Tokenize(term)
					n, hit := 0, 0
					for _, i := range idx {
						if seen[i] {
							continue
						}
						n++
						if len(ts) > 0 && !slices.ContainsFunc(ts, func(s string) bool { return !stems[i][s] }) {
							hit++
						}
					}
					return float64(hit) / float64(max(n, 1))
				}
				for _, l := range s.Filters.Learned {
					switch l.Use {
					case research.LearnedExclude:
						lo, re := share(inc, l.Term), share(exc, l.Term)
						lost, removed, net = lost+lo, removed+re, net+re-2*lo
						ne++
					case research.LearnedExpand:
						expLift += (share(inc, l.Term) + 0.01) / (share(exc, l.Term) + 0.01)
						nx++
					}
				}
			}
			score[ri][li] = net / iterations
			t.Logf("%s lift=%g: exclusions=%d included_lost=%.3f excluded_removed=%.3f score=%.4f | expansions=%d included/excluded=%.2f",
				name, lift, ne, lost/float64(max(ne, 1)), removed/float64(max(ne, 1)), score[ri][li], nx, expLift/float64(max(nx, 1)))
		}
	}
	var heldOut float64
	chosen := map[float64]int{}
	for ri := range names {
		best, bestSum := 0, 0.0
		for li := range exclusionLifts {
			sum := 0.0
			for rj := range names {
				if rj != ri {
					sum += score[rj][li]
				}
			}
			if li == 0 || sum > bestSum {
				best, bestSum = li, sum
			}
		}
		chosen[exclusionLifts[best]]++
		heldOut += score[ri][best]
		t.Logf("held out %s: lift %g chosen on the others, score %.4f", names[ri], exclusionLifts[best], score[ri][best])
	}
	t.Logf("leave-one-review-out: lifts chosen %v, mean held-out score %.4f", chosen, heldOut/float64(len(names)))
}
