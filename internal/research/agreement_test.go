package research_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
)

// table builds two raters' labels from a contingency table: cells[i] is
// how many items rater a labelled la[i] and rater b labelled lb[i].
func table(cells ...any) (a, b map[string]string) {
	a, b = map[string]string{}, map[string]string{}
	id := 0
	for i := 0; i+2 < len(cells); i += 3 {
		la, lb, n := cells[i].(string), cells[i+1].(string), cells[i+2].(int)
		for range n {
			key := fmt.Sprintf("p%d", id)
			a[key], b[key] = la, lb
			id++
		}
	}
	return a, b
}

func TestCohenKappaTextbook(t *testing.T) {
	t.Parallel()
	// The classic 2×2 table of 50 items: po = (20+15)/50 = 0.7; a says yes
	// to 25, b to 30, so pe = 0.5·0.6 + 0.5·0.4 = 0.5; κ = 0.2/0.5 = 0.4.
	a, b := table("yes", "yes", 20, "yes", "no", 5, "no", "yes", 10, "no", "no", 15)
	got := research.CohenKappa(a, b)
	require.Equal(t, 50, got.Items)
	require.Equal(t, 35, got.Agreed)
	require.InDelta(t, 70.0, got.Percent, 1e-12)
	require.True(t, got.KappaDefined)
	require.InDelta(t, 0.4, got.Kappa, 1e-12)
}

func TestCohenKappaThreeLabels(t *testing.T) {
	t.Parallel()
	// 10 items; a: include 4, exclude 5, unsure 1; b: include 3, exclude 5,
	// unsure 2; agreed 3+4+1 = 8. po = 0.8, pe = (4·3+5·5+1·2)/100 = 0.39,
	// κ = 0.41/0.61.
	a, b := table(
		"include", "include", 3, "include", "exclude", 1,
		"exclude", "exclude", 4, "exclude", "unsure", 1,
		"unsure", "unsure", 1,
	)
	got := research.CohenKappa(a, b)
	require.Equal(t, research.Agreement{Items: 10, Agreed: 8, Percent: 80, Kappa: 41.0 / 61.0, KappaDefined: true}, got)
}

func TestCohenKappaCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b map[string]string
		want research.Agreement
	}{
		{"Empty", nil, nil, research.Agreement{}},
		{"NoCommonItems", map[string]string{"p1": "include"}, map[string]string{"p2": "include"}, research.Agreement{}},
		{"PerfectTwoLabels",
			map[string]string{"p1": "include", "p2": "exclude", "p3": "exclude"},
			map[string]string{"p1": "include", "p2": "exclude", "p3": "exclude"},
			research.Agreement{Items: 3, Agreed: 3, Percent: 100, Kappa: 1, KappaDefined: true}},
		// Both said exclude to everything: po = pe = 1, kappa is 0/0.
		{"OneSharedLabel",
			map[string]string{"p1": "exclude", "p2": "exclude"},
			map[string]string{"p1": "exclude", "p2": "exclude"},
			research.Agreement{Items: 2, Agreed: 2, Percent: 100}},
		{"OppositeEverywhere",
			map[string]string{"p1": "include", "p2": "exclude"},
			map[string]string{"p1": "exclude", "p2": "include"},
			research.Agreement{Items: 2, Agreed: 0, Percent: 0, Kappa: -1, KappaDefined: true}},
		// a always excludes, b splits: agreement is what chance gives.
		{"OneRaterConstant",
			map[string]string{"p1": "exclude", "p2": "exclude"},
			map[string]string{"p1": "exclude", "p2": "include"},
			research.Agreement{Items: 2, Agreed: 1, Percent: 50, Kappa: 0, KappaDefined: true}},
		// Each uses one label, different ones: pe = 0, po = 0.
		{"DifferentConstants",
			map[string]string{"p1": "exclude", "p2": "exclude"},
			map[string]string{"p1": "include", "p2": "include"},
			research.Agreement{Items: 2, Agreed: 0, Percent: 0, Kappa: 0, KappaDefined: true}},
		// Items only one rater labelled, and empty labels, do not count.
		{"OnlyCommonItems",
			map[string]string{"p1": "include", "p2": "exclude", "p3": "include", "p4": ""},
			map[string]string{"p1": "include", "p2": "exclude", "p5": "exclude", "p4": "exclude"},
			research.Agreement{Items: 2, Agreed: 2, Percent: 100, Kappa: 1, KappaDefined: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, research.CohenKappa(tt.a, tt.b))
		})
	}
}

// naiveKappa is the textbook formula in floating point, to check the
// integer arithmetic against.
func naiveKappa(a, b map[string]string) (float64, bool) {
	var n, agreed float64
	ma, mb := map[string]float64{}, map[string]float64{}
	for id, la := range a {
		lb, ok := b[id]
		if !ok || la == "" || lb == "" {
			continue
		}
		n++
		if la == lb {
			agreed++
		}
		ma[la]++
		mb[lb]++
	}
	if n == 0 {
		return 0, false
	}
	po, pe := agreed/n, 0.0
	for l := range ma {
		pe += ma[l] / n * mb[l] / n
	}
	if pe == 1 {
		return 0, false
	}
	return (po - pe) / (1 - pe), true
}

// TestCohenKappaProperties: for any two raters, kappa lies in [−1, 1] and
// is 1 exactly when they agree everywhere, Percent lies in [0, 100], the
// result does not depend on which rater is a, and renaming the labels
// (the same way for both) changes nothing.
func TestCohenKappaProperties(t *testing.T) {
	t.Parallel()
	labels := []string{"include", "exclude", "unsure", ""}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "items")
		a, b := map[string]string{}, map[string]string{}
		for i := range n {
			id := fmt.Sprintf("p%d", i)
			// Skew the draws so constant raters and near-agreement occur.
			if rapid.IntRange(0, 9).Draw(t, "inA") > 0 {
				a[id] = rapid.SampledFrom(labels).Draw(t, "la")
			}
			if rapid.IntRange(0, 9).Draw(t, "inB") > 0 {
				if la, ok := a[id]; ok && rapid.Bool().Draw(t, "copy") {
					b[id] = la
				} else {
					b[id] = rapid.SampledFrom(labels).Draw(t, "lb")
				}
			}
		}
		got := research.CohenKappa(a, b)

		require.LessOrEqual(t, got.Agreed, got.Items)
		require.GreaterOrEqual(t, got.Percent, 0.0)
		require.LessOrEqual(t, got.Percent, 100.0)
		if got.KappaDefined {
			require.LessOrEqual(t, got.Kappa, 1.0)
			require.GreaterOrEqual(t, got.Kappa, -1.0)
			require.Equal(t, got.Agreed == got.Items, got.Kappa == 1, "kappa is 1 only for perfect agreement")
		} else {
			require.Zero(t, got.Kappa)
		}
		want, defined := naiveKappa(a, b)
		require.Equal(t, defined, got.KappaDefined)
		require.InDelta(t, want, got.Kappa, 1e-9)

		require.Equal(t, got, research.CohenKappa(b, a), "symmetric")

		perm := rapid.Permutation([]string{"x", "y", "z"}).Draw(t, "names")
		rename := map[string]string{"include": perm[0], "exclude": perm[1], "unsure": perm[2], "": ""}
		ra, rb := map[string]string{}, map[string]string{}
		for id, l := range a {
			ra[id] = rename[l]
		}
		for id, l := range b {
			rb[id] = rename[l]
		}
		require.Equal(t, got, research.CohenKappa(ra, rb), "label names do not matter")
	})
}

func TestCohenKappaNaN(t *testing.T) {
	t.Parallel()
	a, b := table("exclude", "exclude", 1000)
	got := research.CohenKappa(a, b)
	require.False(t, math.IsNaN(got.Kappa), "undefined kappa is reported as such, not as NaN")
	require.False(t, got.KappaDefined)
}
