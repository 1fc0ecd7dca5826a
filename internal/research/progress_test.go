package research_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
)

func marks(pairs ...string) []research.Mark {
	var out []research.Mark
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, research.Mark{PaperID: pairs[i], Mark: pairs[i+1]})
	}
	return out
}

// TestGainCurve: one step per paper's first decisive mark, in mark order;
// marking again never adds a step; each paper counts by its current mark.
func TestGainCurve(t *testing.T) {
	t.Parallel()
	type pt = research.GainPoint
	tests := []struct {
		name   string
		events []research.Mark
		want   []research.GainPoint
	}{
		{"None", nil, []research.GainPoint{}},
		{"UnsureOnly", marks("a", "unsure", "b", "unsure"), []research.GainPoint{}},
		{"InOrder", marks("a", "relevant", "b", "irrelevant", "c", "relevant"),
			[]pt{{1, 1}, {2, 1}, {3, 2}}},
		{"UnsureFirstStepsAtDecisive", marks("a", "unsure", "b", "irrelevant", "a", "relevant"),
			[]pt{{1, 0}, {2, 1}}},
		{"MarkedTwiceCountsOnce", marks("a", "relevant", "a", "relevant", "b", "irrelevant", "a", "relevant"),
			[]pt{{1, 1}, {2, 1}}},
		{"RelevantThenIrrelevantLowers", marks("a", "relevant", "b", "relevant", "a", "irrelevant"),
			[]pt{{1, 0}, {2, 1}}},
		{"IrrelevantThenRelevantRaises", marks("a", "irrelevant", "b", "irrelevant", "a", "relevant"),
			[]pt{{1, 1}, {2, 1}}},
		{"BackToUnsureKeepsStepNotRelevant", marks("a", "relevant", "b", "relevant", "a", "unsure"),
			[]pt{{1, 0}, {2, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, research.GainCurve(tt.events))
		})
	}
}

// TestGainCurveProperties: for any sequence of mark events, x goes up one
// paper a step, 0 ≤ y ≤ x, y never falls, the curve has one step per
// paper ever marked relevant or irrelevant, and its last y is the number
// of papers whose current mark is relevant.
func TestGainCurveProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		nPapers := rapid.IntRange(1, 30).Draw(t, "papers")
		n := rapid.IntRange(0, 120).Draw(t, "events")
		var events []research.Mark
		current := map[string]string{}
		decided := map[string]bool{}
		for i := range n {
			id := fmt.Sprintf("p%d", rapid.IntRange(0, nPapers-1).Draw(t, fmt.Sprintf("paper%d", i)))
			m := rapid.SampledFrom([]string{research.MarkRelevant, research.MarkIrrelevant, research.MarkUnsure}).Draw(t, fmt.Sprintf("mark%d", i))
			events = append(events, research.Mark{PaperID: id, Mark: m})
			current[id] = m
			if m != research.MarkUnsure {
				decided[id] = true
			}
		}
		relevantNow := 0
		for _, m := range current {
			if m == research.MarkRelevant {
				relevantNow++
			}
		}
		curve := research.GainCurve(events)
		if len(curve) != len(decided) {
			t.Fatalf("%d steps for %d papers screened", len(curve), len(decided))
		}
		prev := research.GainPoint{}
		for i, p := range curve {
			if p.Screened != i+1 {
				t.Fatalf("step %d has x = %d", i, p.Screened)
			}
			if p.Relevant < prev.Relevant || p.Relevant > prev.Relevant+1 {
				t.Fatalf("y goes from %d to %d at x = %d", prev.Relevant, p.Relevant, p.Screened)
			}
			if p.Relevant < 0 || p.Relevant > p.Screened {
				t.Fatalf("y = %d outside [0, x = %d]", p.Relevant, p.Screened)
			}
			prev = p
		}
		if prev.Relevant != relevantNow {
			t.Fatalf("final y = %d, papers marked relevant now = %d", prev.Relevant, relevantNow)
		}
	})
}
