package eval_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/eval"
)

// dedupDataDir is the shared benchmark data; see its README section 1.
const dedupDataDir = "/work/shared/data/dedup"

func TestDedupSharedData(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(dedupDataDir, "stroke.records.csv.gz")); err != nil {
		t.Skipf("dedup benchmark data not present at %s (%v); skipping the quality check", dedupDataDir, err)
	}
	var out bytes.Buffer
	sum, err := eval.Dedup(context.Background(), dedupDataDir, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, `^dedup: precision=\d\.\d{4} recall=\d\.\d{4} f1=\d\.\d{4}$`, lines[len(lines)-1])
	require.GreaterOrEqual(t, sum.Precision, 0.995, "pairwise precision over the labelled sets")
	require.GreaterOrEqual(t, sum.Recall, 0.95, "pairwise recall over the labelled sets")
	names := map[string]bool{}
	for _, ds := range sum.Datasets {
		names[ds.Name] = true
		if ds.Name == "copper" {
			require.True(t, ds.RecordLevel, "copper has flags, not groups")
		}
	}
	require.True(t, names["cytology_screening"] && names["stroke"] && names["special_cases"], "all labelled sets read: %v", names)
}
