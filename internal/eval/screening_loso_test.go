package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLooPickNeverSeesHeldOut checks the fold's choice on a synthetic
// candidates × reviews matrix: a candidate that wins only because of the
// held-out review is never chosen for that fold, and is chosen when
// another review is held out.
func TestLooPickNeverSeesHeldOut(t *testing.T) {
	t.Parallel()
	values := []float64{1, 2, 3}
	use := []bool{true, true, true, true}
	figs := [][]screeningFig{
		{{50, 10}, {50, 10}, {50, 10}, {50, 10}}, // 1: steady
		{{49, 10}, {49, 10}, {49, 10}, {99, 10}}, // 2: wins only through review 3
		{{40, 10}, {40, 10}, {40, 10}, {40, 10}}, // 3: worse
	}
	require.Equal(t, 0, looPick(values, 1, figs, use, 3), "held-out review 3 must not decide its own fold")
	for held := range 3 {
		require.Equal(t, 1, looPick(values, 1, figs, use, held), "fold %d sees review 3", held)
	}
	// A held-out review's figures have no effect on its fold whatever they are.
	for _, v := range []float64{-1e9, 0, 1e9} {
		figs[0][2] = screeningFig{v, v}
		figs[1][2] = screeningFig{-v, -v}
		require.Equal(t, looPick(values, 1, figs, use, 2), looPick(values, 1, figs, use, 2))
		got := looPick(values, 1, figs, use, 2)
		require.Equal(t, 1, got)
	}
	// Reviews without includes do not count.
	require.Equal(t, 0, looPick(values, 1, figs, []bool{true, true, true, false}, -1))
}

// TestLooPickTies checks the tie rules: equal WSS@95 goes to the better
// RRF@10, equal both to the value nearest the default.
func TestLooPickTies(t *testing.T) {
	t.Parallel()
	values := []float64{0.05, 0.1, 0.2}
	use := []bool{true, true}
	same := []screeningFig{{60, 30}, {60, 30}}
	require.Equal(t, 1, looPick(values, 0.1, [][]screeningFig{same, same, same}, use, -1))
	require.Equal(t, 2, looPick(values, 0.1, [][]screeningFig{same, same, {{60, 31}, {60, 31}}}, use, -1))
	// 0.05 is half the default, 0.2 twice it: relative distance 0.5 < 1.
	require.Equal(t, 0, looPick(values, 0.1, [][]screeningFig{same, {{59, 30}, {59, 30}}, same}, use, -1))
}

// TestScreeningLOSOSharedData runs the leave-one-review-out harness on
// three small shared reviews with a one-constant grid.
func TestScreeningLOSOSharedData(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(screeningDataDir, "reviews.json")); err != nil {
		t.Skipf("shared screening data not found at %s (../shared/data is absent): %v", screeningDataDir, err)
	}
	consts := screeningConstants()[:1]
	var out bytes.Buffer
	res, err := ScreeningLOSOOf(context.Background(), screeningDataDir,
		[]string{"Donners_2021", "Muthu_2022", "Oud_2018"}, consts, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, res.Folds, 3)
	require.Contains(t, out.String(), "screening loso: wss95=")
	require.Contains(t, out.String(), "screening baseline: wss95=")
	for _, f := range res.Folds {
		require.Contains(t, consts[0].values, f.Chosen["svm_c"])
		require.Greater(t, f.WSS95, 25.0, f.Review)
	}
}
