package eval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/shareddata"
)

var screeningDataDir = shareddata.Dir("screening")

// Floors the full run must keep: a regression guard a little under what
// the scorer reaches today (mean 58.4, ACE 75.5 with ties broken by the
// fixed random order; 58.5 mean over tie seeds 1-5, ACE 75.5 for every
// seed). Both targets are reached: mean ≥ 55, and ACE ≥ 75 (495 papers
// screened to 95% recall; 75 needs at most 508), which the ACE floor
// keeps. History:
// ACE went 71.5 -> 68.5 when the classifier moved to unstemmed naive Bayes,
// back to 71.2 when its unigrams kept stop words, to 74.1 (mean 54.0 ->
// 57.2) with the collection's background as pseudo-irrelevant papers and
// a linear SVM averaged with naive Bayes, and to 74.2 (mean 57.5) when
// irrelevant marks began to count before the first relevant one, and to
// 74.8 (mean 58.2) with a more regularised SVM (C 0.11 -> 0.02), and to
// 75.5 (mean 58.4) with the plain hinge loss at C 0.1.
const (
	screeningFloorMean = 58.0
	screeningFloorACE  = 75.0
)

func TestScreeningQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		meta screeningMeta
		want string
	}{
		{"TitleAndCriteria", screeningMeta{ReviewTitle: "T", EligibilityCriteria: "C", ReviewAbstract: "A"}, "T\nC"},
		{"TitleAndAbstract", screeningMeta{ReviewTitle: "T", ReviewAbstract: "A"}, "T\nA"},
		{"TitleOnly", screeningMeta{ReviewTitle: " T ", Topic: "x"}, "T"},
		{"CamelTopic", screeningMeta{Topic: "ACEInhibitors"}, "ACE Inhibitors"},
		{"PlainTopic", screeningMeta{Topic: "Beta Blockers"}, "Beta Blockers"},
		{"Acronym", screeningMeta{Topic: "ADHD"}, "ADHD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, screeningQuestion(tt.meta))
		})
	}
}

// TestDoubleBalance checks ASReview's double balance as expected weights:
// the resampled training set keeps its size, the relevant marks get a
// larger share than class balance would give them while they are rare, and
// at least one relevant and two irrelevant places are kept.
func TestDoubleBalance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		n1, n0 int
		w1     float64 // 0: only the general properties are checked
	}{
		{"OneInTen", 1, 9, 6.687},
		{"FewRelevant", 3, 200, 0},
		{"Even", 50, 50, 0},
		{"TooFewForTwoIrrelevant", 2, 1, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w1, w0 := doubleBalance(tt.n1, tt.n0)
			n := float64(tt.n1 + tt.n0)
			require.InDelta(t, n, w1*float64(tt.n1)+w0*float64(tt.n0), 1e-9, "size kept")
			require.GreaterOrEqual(t, w1*float64(tt.n1), 1.0)
			if tt.w1 != 0 {
				require.InDelta(t, tt.w1, w1, 1e-3)
			}
			if tt.n1 < tt.n0 {
				require.Greater(t, w1/w0, float64(tt.n0)/float64(tt.n1), "more than class balance")
			}
		})
	}
}

func TestScreeningTop(t *testing.T) {
	t.Parallel()
	scores := []float64{0.1, 0.9, 0.5, 0.9, 0.7}
	byIndex := []int{0, 1, 2, 3, 4}
	require.Equal(t, []int{1, 3, 4}, screeningTop(scores, byIndex, make([]bool, 5), 3))
	require.Equal(t, []int{3, 1, 4}, screeningTop(scores, []int{4, 3, 2, 1, 0}, make([]bool, 5), 3), "ties follow the tie order")
	require.Equal(t, []int{4, 2}, screeningTop(scores, byIndex, []bool{false, true, false, true, false}, 2))
	require.Equal(t, []int{0}, screeningTop(scores, byIndex, []bool{false, true, true, true, true}, 10))
	order := screeningTieOrder(50, 0)
	require.Equal(t, order, screeningTieOrder(50, 0), "fixed seed")
	require.ElementsMatch(t, byIndex, screeningTieOrder(5, 0), "a permutation")
}

// A review whose included papers alone use the question's words is found
// in the first batch: the metrics must then follow from the formulas.
func TestSimulateScreeningMetrics(t *testing.T) {
	t.Parallel()
	rev := ScreeningReview{Name: "synthetic", Question: "emicizumab pharmacokinetics"}
	for i := range 100 {
		r := ScreeningRecord{Paper: research.RawPaper{ID: fmt.Sprint(i), Title: fmt.Sprintf("Unrelated topic number %d", i),
			Abstract: "Soil bacteria and weather."}}
		if i%20 == 7 {
			r = ScreeningRecord{Included: true, Paper: research.RawPaper{ID: fmt.Sprint(i),
				Title: "Emicizumab pharmacokinetics in adults", Abstract: "Pharmacokinetics of emicizumab."}}
		}
		rev.Records = append(rev.Records, r)
	}
	res, err := SimulateScreening(context.Background(), rev)
	require.NoError(t, err)
	require.Equal(t, 100, res.Records)
	require.Equal(t, 5, res.Included)
	require.Equal(t, 5, res.ScreenedTo95, "all five included ranked first")
	require.InDelta(t, 90.0, res.WSS95, 1e-9)
	require.InDelta(t, 100.0, res.RRF10, 1e-9)
	require.Equal(t, 1, res.Iterations)
	// asreview-insights reads the 4th include (4/5 <= 0.95 < 5/5), found
	// at index 3; the rounded random line 5i/99 reaches 4 at index 70.
	require.InDelta(t, 67.0, res.WSS95Insights, 1e-9)
}

// TestWSSInsights checks the asreview-insights definition on orders worked
// out by hand from its algorithm.
func TestWSSInsights(t *testing.T) {
	t.Parallel()
	// 3 includes in 10: k = 2 (2/3 <= 0.95), found at index 2; the random
	// line round(i/3) reaches 2 at i = 5 (5/3 = 1.67 rounds to 2).
	order := []bool{true, false, true, false, false, false, false, false, false, true}
	require.InDelta(t, 30.0, wssInsights(order, 10, 3), 1e-9)
	// Worst order: the includes last. k = 2 is found at index 8, after the
	// random line: negative work saved.
	worst := []bool{false, false, false, false, false, false, false, true, true, true}
	require.InDelta(t, -30.0, wssInsights(worst, 10, 3), 1e-9)
	// 20 includes: 19/20 is exactly 0.95, so k = 19, not 20.
	twenty := make([]bool, 100)
	for i := range 20 {
		twenty[i] = true
	}
	// round(20i/99) reaches 19 at i = 92 (18.59); the 19th include is at 18.
	require.InDelta(t, 74.0, wssInsights(twenty, 100, 20), 1e-9)
	require.Zero(t, wssInsights(nil, 0, 0))
}

func TestScreeningReadsCSV(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := "record_id,title,abstract,label_included\n1,\"A, title\",\"multi\nline\",1\n2,Other,,0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Tiny.csv"), []byte(csv), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "reviews.json"), []byte(`{"Tiny":{"topic":"Titles"}}`), 0o600))
	var out bytes.Buffer
	sum, err := Screening(context.Background(), dir, &out)
	require.NoError(t, err)
	require.Len(t, sum.Reviews, 1)
	require.Equal(t, 2, sum.Reviews[0].Records)
	require.Equal(t, 1, sum.Reviews[0].Included)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], "Tiny: records=2 included=1 "), lines[0])
	// One include in two records, found first: insights reads it at index
	// 0 against the random line's index 1, so (1-0)/2 = 50%.
	require.Contains(t, lines[0], " wss95_insights=50.0")
	require.Equal(t, "insights: mean_wss95=50.0 (asreview-insights definition)", lines[1])
	require.Regexp(t, `^screening: mean_wss95=-?\d+\.\d mean_rrf10=\d+\.\d$`, lines[2])

	_, err = Screening(context.Background(), filepath.Join(dir, "missing"), &out)
	require.Error(t, err)
}

// TestScreeningSharedData runs the benchmark on the shared review sets:
// three small reviews in -short mode, all of them (about 8 s; under a minute with -race) otherwise.
func TestScreeningSharedData(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(screeningDataDir, "reviews.json")); err != nil {
		t.Skipf("shared screening data not found at %s: %v", screeningDataDir, err)
	}
	var out bytes.Buffer
	if testing.Short() {
		sum, err := ScreeningOf(context.Background(), screeningDataDir,
			[]string{"Donners_2021", "Muthu_2022", "Oud_2018"}, &out)
		require.NoError(t, err)
		t.Log("\n" + out.String())
		for _, r := range sum.Reviews {
			require.Greater(t, r.WSS95, 25.0, r.Review)
		}
		return
	}
	sum, err := Screening(context.Background(), screeningDataDir, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, sum.Reviews, 12)
	require.GreaterOrEqual(t, sum.MeanWSS95, screeningFloorMean)
	for _, r := range sum.Reviews {
		if r.Review == "Cohen_2006_ACEInhibitors" {
			require.GreaterOrEqual(t, r.WSS95, screeningFloorACE)
		}
	}
}
