package eval_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/eval"
	"quarry/internal/skills/dedup"
)

// TestDedupLOSOSharedData runs the leave-one-set-out choice of the
// matcher's thresholds over the shared sets: every held-out set keeps
// precision 1 with thresholds chosen without it, and the thresholds chosen
// on all sets are the defaults the product uses.
func TestDedupLOSOSharedData(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(dedupDataDir, "stroke.records.csv.gz")); err != nil {
		t.Skipf("dedup benchmark data not present at %s (%v)", dedupDataDir, err)
	}
	var out bytes.Buffer
	res, err := eval.DedupLOSO(context.Background(), dedupDataDir, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, `^dedup loso: precision=\d\.\d{4} recall=\d\.\d{4}$`, lines[len(lines)-1])
	require.Len(t, res.Folds, 4)
	for _, f := range res.Folds {
		require.Equal(t, 1.0, f.Score.Precision, "held-out %s", f.HeldOut)
	}
	require.Equal(t, 1.0, res.Precision)
	require.GreaterOrEqual(t, res.Recall, 0.99)
	require.Equal(t, dedup.DefaultThresholds(), res.AllSets, "the defaults are what the sets choose")
}

// TestDedupLOSOChoosesWithoutTheHeldOutSet builds two sets in which only a
// loose title threshold finds the duplicates: each fold chooses on the
// other set, and the output names every fold.
func TestDedupLOSOChoosesWithoutTheHeldOutSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	header := "ID,title,year,author,pages,volume,number,ENTRYTYPE,journal,dup_group\n"
	writeGz(t, filepath.Join(dir, "a.records.csv.gz"), header+
		"a1,\"Mirror therapy for arm function after stroke in older adults\",2011,\"Muller, K\",,,,article,Stroke,a1\n"+
		"a2,\"Mirror therapy for arm functions after strokes in elderly adults\",2011,\"Muller, K\",,,,article,Stroke,a1\n")
	writeGz(t, filepath.Join(dir, "b.records.csv.gz"), header+
		"b1,\"Treadmill training for walking after stroke in older adults\",2012,\"Roe, R\",,,,article,Stroke,b1\n"+
		"b2,\"Treadmill training for walkings after strokes in elderly adults\",2012,\"Roe, R\",,,,article,Stroke,b1\n")
	var out bytes.Buffer
	res, err := eval.DedupLOSO(context.Background(), dir, &out)
	require.NoError(t, err)
	require.Len(t, res.Folds, 2)
	for _, f := range res.Folds {
		require.Less(t, f.Chosen.TitleSim, dedup.DefaultThresholds().TitleSim, "the other set asks for a looser threshold (%s)", f.HeldOut)
		require.Equal(t, 1.0, f.Score.Recall, f.HeldOut)
	}
	require.Contains(t, out.String(), "loso: held_out=a ")
	require.Contains(t, out.String(), "loso: held_out=b ")
	require.Contains(t, out.String(), "loso: TitleSim candidates")

	_, err = eval.DedupLOSO(context.Background(), t.TempDir(), &out)
	require.Error(t, err, "fewer than two sets cannot be left out in turn")
}

func writeGz(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	gz := gzip.NewWriter(f)
	_, err = gz.Write([]byte(content))
	require.NoError(t, err)
	require.NoError(t, gz.Close())
	require.NoError(t, f.Close())
}
