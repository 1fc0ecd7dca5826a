package dedup_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
	"quarry/internal/skills/dedup"
)

// drawPaper draws a journal record from a small pool, so that near-equal
// titles, shared authors and clashing volumes, issues and pages are
// common, with the spellings exports give them.
func drawPaper(t *rapid.T, label string) research.RawPaper {
	base := rapid.SampledFrom([]string{
		"Mirror therapy for arm function after stroke",
		"Mirror therapy for arm function after stroke: a randomised controlled trial",
		"Treadmill training and walking after stroke in older adults living at home",
		"Editor's comments",
		"Reply",
		"Phase 2 trial of early mobilisation after acute stroke",
		"Phase 3 trial of early mobilisation after acute stroke",
	}).Draw(t, label+"/title")
	title := rapid.SampledFrom([]func(string) string{
		func(s string) string { return s },
		strings.ToUpper,
		func(s string) string { return s + "." },
		func(s string) string { return s + " [Review] [33 refs]" },
		func(s string) string { return "Editorial: " + s },
		func(s string) string { return s + " (vol 12, pg 345, 2011)" },
		func(s string) string { return s[:len(s)*3/4] },
		func(s string) string { return "[" + s + "]" },
		func(s string) string { return "Wirkung der Spiegeltherapie nach Schlaganfall [" + s + "]" },
	}).Draw(t, label+"/spelling")(base)
	return research.RawPaper{
		Title:   title,
		Year:    rapid.IntRange(2010, 2012).Draw(t, label+"/year"),
		Venue:   rapid.SampledFrom([]string{"", "Stroke", "Clinical Rehabilitation", "Clin Rehabil"}).Draw(t, label+"/venue"),
		Volume:  rapid.SampledFrom([]string{"", "12", "13"}).Draw(t, label+"/volume"),
		Issue:   rapid.SampledFrom([]string{"", "1", "2", "1-2"}).Draw(t, label+"/issue"),
		Pages:   rapid.SampledFrom([]string{"", "1", "100-110", "110", "200-210", "e123", "S42"}).Draw(t, label+"/pages"),
		Authors: rapid.SampledFrom([][]string{nil, {"Muller, K."}, {"Muller K", "Roe R"}, {"Roe, R."}, {"Stroke Trial Group"}}).Draw(t, label+"/authors"),
	}
}

// numRange reads "100-110" as 100, 110 and "110" as 110, 110; 0, 0 for
// e-locators and supplement pages.
func numRange(s string) (int, int) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		hi = lo
	}
	var a, b int
	for _, c := range lo {
		if c < '0' || c > '9' {
			return 0, 0
		}
		a = a*10 + int(c-'0')
	}
	for _, c := range hi {
		b = b*10 + int(c-'0')
	}
	return a, b
}

// TestPropExplainIsSymmetric: which record comes first never changes the
// verdict.
func TestPropExplainIsSymmetric(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		a, b := drawPaper(t, "a"), drawPaper(t, "b")
		ab, ba := dedup.Explain(a, b), dedup.Explain(b, a)
		require.Equal(t, strings.SplitN(ab, ":", 2)[0], strings.SplitN(ba, ":", 2)[0], "%q / %q", ab, ba)
	})
}

// TestPropConflictingPlaceNeverMerges: two records without identifiers
// whose volumes differ, whose issues differ, or whose numeric page ranges
// are apart are never one record, whatever their titles and authors.
func TestPropConflictingPlaceNeverMerges(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		a, b := drawPaper(t, "a"), drawPaper(t, "b")
		alo, ahi := numRange(a.Pages)
		blo, bhi := numRange(b.Pages)
		ailo, aihi := numRange(a.Issue)
		bilo, bihi := numRange(b.Issue)
		clash := a.Volume != "" && b.Volume != "" && a.Volume != b.Volume ||
			ailo != 0 && bilo != 0 && (aihi < bilo || bihi < ailo) ||
			alo != 0 && blo != 0 && (ahi < blo || bhi < alo)
		if !clash {
			return
		}
		got := dedup.Explain(a, b)
		require.False(t, strings.HasPrefix(got, "duplicate"), "%+v\n%+v\n%s", a, b, got)
		an, err := dedup.Analyze(context.Background(), []research.RawPaper{a, b})
		require.NoError(t, err)
		require.Len(t, an.Clusters, 2)
	})
}

// TestPropAnalyzeIsAPartitionAndStable: the clusters cover every record
// once, do not depend on the input order, and each cluster analysed again
// on its own is still one cluster (deduplicating is idempotent on what it
// found). No cluster holds two records whose places contradict each other.
func TestPropAnalyzeIsAPartitionAndStable(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "n")
		papers := make([]research.RawPaper, n)
		for i := range papers {
			papers[i] = drawPaper(t, "p")
			papers[i].ID = "r" + string(rune('a'+i))
		}
		a, err := dedup.Analyze(context.Background(), papers)
		require.NoError(t, err)
		var seen []int
		for _, c := range a.Clusters {
			require.True(t, slices.IsSorted(c))
			seen = append(seen, c...)
		}
		slices.Sort(seen)
		require.Len(t, seen, n)
		for i, x := range seen {
			require.Equal(t, i, x)
		}

		// Reversed input, same partition (by ID).
		rev := slices.Clone(papers)
		slices.Reverse(rev)
		b, err := dedup.Analyze(context.Background(), rev)
		require.NoError(t, err)
		require.ElementsMatch(t, partition(papers, a.Clusters), partition(rev, b.Clusters))

		for _, c := range a.Clusters {
			sub := make([]research.RawPaper, len(c))
			for i, m := range c {
				sub[i] = papers[m]
			}
			again, err := dedup.Analyze(context.Background(), sub)
			require.NoError(t, err)
			require.Len(t, again.Clusters, 1, "cluster %v split when analysed alone", c)
			for x := range sub {
				for y := x + 1; y < len(sub); y++ {
					p, q := sub[x], sub[y]
					require.False(t, p.Volume != "" && q.Volume != "" && p.Volume != q.Volume, "volumes %q and %q in one cluster", p.Volume, q.Volume)
				}
			}
		}
	})
}

// partition names each cluster by its sorted member IDs.
func partition(papers []research.RawPaper, clusters [][]int) []string {
	var out []string
	for _, c := range clusters {
		ids := make([]string, len(c))
		for i, m := range c {
			ids[i] = papers[m].ID
		}
		slices.Sort(ids)
		out = append(out, strings.Join(ids, ","))
	}
	return out
}
