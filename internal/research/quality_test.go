package research_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
)

// TestSeverityBlocks is the quality gate's rule as a table: iterations
// 1–2 block every finding, 3–4 MUST and SHOULD, from 5 only MUST.
func TestSeverityBlocks(t *testing.T) {
	t.Parallel()
	const (
		must   = research.SeverityMust
		should = research.SeverityShould
		could  = research.SeverityCould
	)
	tests := []struct {
		sev       research.Severity
		iteration int
		want      bool
	}{
		{must, 0, true}, {should, 0, true}, {could, 0, true}, // below 1 counts as 1
		{must, 1, true}, {should, 1, true}, {could, 1, true},
		{must, 2, true}, {should, 2, true}, {could, 2, true},
		{must, 3, true}, {should, 3, true}, {could, 3, false},
		{must, 4, true}, {should, 4, true}, {could, 4, false},
		{must, 5, true}, {should, 5, false}, {could, 5, false},
		{must, 20, true}, {should, 20, false}, {could, 20, false},
		{"BOGUS", 20, true}, // an unknown severity is never waved through
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.sev.Blocks(tt.iteration), "%s at iteration %d", tt.sev, tt.iteration)
	}
}

// TestPropSeverityBlocksIsMonotone: a finding that does not block at
// iteration k never blocks at k+1, and a MUST always blocks.
func TestPropSeverityBlocksIsMonotone(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		sev := rapid.SampledFrom(append(research.Severities(), "other")).Draw(t, "severity")
		k := rapid.IntRange(-5, 1000).Draw(t, "iteration")
		if !sev.Blocks(k) && sev.Blocks(k+1) {
			t.Fatalf("%s does not block at %d but blocks at %d", sev, k, k+1)
		}
		if sev == research.SeverityMust && !sev.Blocks(k) {
			t.Fatalf("MUST does not block at %d", k)
		}
	})
}

func TestWithBlocksAndSummary(t *testing.T) {
	t.Parallel()
	fs := []research.Finding{
		{Rule: "a", Severity: research.SeverityMust, Message: "m"},
		{Rule: "b", Severity: research.SeverityCould, Message: "c"},
	}
	got := research.WithBlocks(fs, 3, true)
	require.True(t, got[0].Blocks)
	require.False(t, got[1].Blocks)
	require.False(t, fs[0].Blocks, "the input is not changed")
	require.Len(t, research.Blocking(got), 1)
	require.Empty(t, research.Blocking(research.WithBlocks(fs, 1, false)), "a gate not enforced blocks nothing")
	require.Equal(t, "1 finding blocks approval at iteration 3 (MUST: m)", research.BlockingSummary(research.Blocking(got), 3))
}
