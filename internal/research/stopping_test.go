package research_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
)

// curve builds a synthetic gain curve from a screening order written as
// runs: "10R 180I" is ten relevant papers, then 180 irrelevant; "5RI" is
// relevant, irrelevant five times over.
func curve(t *testing.T, spec string) []research.GainPoint {
	t.Helper()
	var labels []bool
	for _, run := range strings.Fields(spec) {
		i := strings.IndexFunc(run, func(r rune) bool { return r == 'R' || r == 'I' })
		require.Positive(t, i, "run %q needs a count", run)
		n := 0
		for _, d := range run[:i] {
			n = n*10 + int(d-'0')
		}
		for range n {
			for _, c := range run[i:] {
				labels = append(labels, c == 'R')
			}
		}
	}
	out := make([]research.GainPoint, len(labels))
	y := 0
	for i, rel := range labels {
		if rel {
			y++
		}
		out[i] = research.GainPoint{Screened: i + 1, Relevant: y}
	}
	return out
}

// TestKneeOf checks the knee method on synthetic curves: it needs 150
// screened papers, asks for a slope ratio of 156 − min(relevant, 150),
// and finds the knee where the curve bends.
func TestKneeOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		spec      string
		applies   bool
		found     bool
		knee      research.GainPoint
		ratio     float64 // 0: not checked
		threshold float64
		stop      bool
	}{
		// A sharp knee, but only 120 screened: the rule does not apply.
		{"BelowScale", "40R 80I", false, true, research.GainPoint{Screened: 40, Relevant: 40}, 1 / (1.0 / 80), 116, false},
		{"Empty", "", false, false, research.GainPoint{}, 0, 156, false},
		// Nothing relevant: no knee, no suggestion to stop.
		{"NothingRelevant", "200I", true, false, research.GainPoint{}, 0, 156, false},
		// 150 relevant found: the plain ratio of 6 applies, and a long
		// irrelevant tail far exceeds it.
		{"ManyRelevantLongTail", "150RI 300I", true, true, research.GainPoint{Screened: 299, Relevant: 150}, (150.0 / 299) / (1.0 / 301), 6, true},
		// Few relevant: ten in the first twenty, then 180 irrelevant. The
		// ratio at the knee (19, 10) is 95, below 156 − 10 = 146: keep on.
		{"FewRelevantShortTail", "10RI 180I", true, true, research.GainPoint{Screened: 19, Relevant: 10}, (10.0 / 19) / (1.0 / 181), 146, false},
		// The same with 400 irrelevant after: ratio 211 ≥ 146, stop.
		{"FewRelevantLongTail", "10RI 400I", true, true, research.GainPoint{Screened: 19, Relevant: 10}, (10.0 / 19) / (1.0 / 401), 146, true},
		// A straight line (every other paper relevant) bends nowhere.
		{"Straight", "150RI", true, true, research.GainPoint{}, 0, 6, false},
		// 149 screened is still below the scale; 150 is at it.
		{"JustBelow", "20R 129I", false, true, research.GainPoint{Screened: 20, Relevant: 20}, 1 / (1.0 / 129), 136, false},
		{"AtScale", "20R 130I", true, true, research.GainPoint{Screened: 20, Relevant: 20}, 1 / (1.0 / 130), 136, false},
		{"AtScaleStops", "20R 130I 20I", true, true, research.GainPoint{Screened: 20, Relevant: 20}, 1 / (1.0 / 150), 136, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := research.KneeOf(curve(t, tt.spec))
			require.Equal(t, tt.applies, k.Applies, "applies")
			require.Equal(t, tt.found, k.Found, "knee found")
			require.Equal(t, tt.stop, k.Stop, "stop (ratio %.1f, threshold %.0f)", k.Ratio, k.Threshold)
			require.InDelta(t, tt.threshold, k.Threshold, 1e-9)
			if tt.knee != (research.GainPoint{}) {
				require.Equal(t, tt.knee, k.At)
			}
			if tt.ratio != 0 {
				require.InDelta(t, tt.ratio, k.Ratio, 1e-6)
			}
			if tt.name == "Straight" {
				require.Less(t, k.Ratio, 1.2, "a straight line has a ratio near 1")
			}
			s := k.Suggestion()
			require.Equal(t, research.RuleKnee, s.Rule)
			require.Equal(t, k.Stop, s.Stop)
			require.NotEmpty(t, s.Advice)
			if !k.Applies {
				require.Contains(t, s.Advice, "does not apply yet")
				require.Contains(t, s.Advice, "150")
			}
		})
	}
}

// TestWindowOf checks "no relevant paper in the last k screened".
func TestWindowOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    string
		k       int
		applies bool
		stop    bool
		advice  string
	}{
		{"Empty", "", 5, false, false, "does not apply yet: it looks back on 5 screened papers, and 0 are screened so far."},
		{"BelowK", "1R 3I", 5, false, false, "does not apply yet: it looks back on 5 screened papers, and 4 are screened so far."},
		{"GapOfK", "1R 5I", 5, true, true, "the last relevant paper was the 1st of 6 screened, 5 papers ago"},
		{"GapBelowK", "1R 4I", 5, true, false, "keep screening: the last relevant paper was the 1st of 5 screened, 4 papers ago"},
		{"RecentRelevant", "1R 3I 1R 2I", 5, true, false, "the 5th of 7 screened, 2 papers ago"},
		{"LastIsRelevant", "6I 1R", 5, true, false, "the 7th of 7 screened, 0 papers ago"},
		{"NoneRelevant", "5I", 5, true, true, "none of the 5 screened papers is relevant"},
		{"DefaultK", "1R 49I", 0, true, false, "keep screening"},
		{"DefaultKStops", "1R 50I", 0, true, true, "the 1st of 51 screened, 50 papers ago"},
		{"FirstRelevantLate", "22I 1R 50I", 50, true, true, "the 23rd of 73 screened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := research.WindowOf(curve(t, tt.spec), tt.k)
			k := tt.k
			if k == 0 {
				k = research.DefaultStopWindow
			}
			require.Equal(t, research.RuleWindow(k), s.Rule)
			require.Equal(t, tt.applies, s.Applies, s.Advice)
			require.Equal(t, tt.stop, s.Stop, s.Advice)
			require.Contains(t, s.Advice, tt.advice)
		})
	}
}
