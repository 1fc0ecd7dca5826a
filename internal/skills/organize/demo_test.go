package organize_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/library/demo"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/organize"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/skills/text"
	"quarry/internal/store"
)

// demoQuestions span the demo library's fields, so the label checks see
// machine learning, medicine, systems, the environment, biology,
// neuroscience and method papers, not one field's vocabulary. The last
// two gave labels of the audit that led to the current labeller ("term,
// long, partitioned", "type diabetes, early").
var demoQuestions = []string{
	"transformer language models pre-training",
	"deep learning for medical image segmentation",
	"statins for cardiovascular prevention",
	"distributed consensus and database replication",
	"climate change effects on crop yields and biodiversity",
	"heterogeneity and publication bias in meta-analysis",
	"gene expression sequencing",
	"sleep and memory consolidation",
	"insulin treatment diabetes",
}

// demoRun runs one question through the offline pipeline the way a real
// run's first iteration does (parse, build, search the local library,
// dedup, score) and returns what the organizer is given.
func demoRun(t *testing.T, src sources.Source, question string) []research.ScoredPaper {
	t.Helper()
	ctx := context.Background()
	now := func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) }
	intent, err := intent.New(now).ParseIntent(ctx, question)
	require.NoError(t, err)
	strategy, err := querybuilder.New().BuildStrategy(ctx, skills.QueryInput{Intent: intent, Sources: []string{src.Name()}})
	require.NoError(t, err)
	searcher, err := searcher.New([]sources.Source{src}, searcher.Options{})
	require.NoError(t, err)
	res, err := searcher.Search(ctx, strategy)
	require.NoError(t, err)
	papers, _, err := dedup.New().Dedup(ctx, res.Papers)
	require.NoError(t, err)
	scored, err := relevance.Scorer{}.Score(ctx, skills.ScoreInput{Intent: intent, Papers: papers})
	require.NoError(t, err)
	slices.SortStableFunc(scored, func(a, b research.ScoredPaper) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return scored
}

// demoSource is the local source over a temporary library seeded with the
// demo papers, as a fresh installation has.
func demoSource(t *testing.T) sources.Source {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "lib.db"), store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	papers, err := demo.Papers()
	require.NoError(t, err)
	i := 0
	_, err = library.Import(ctx, st, func() (library.Record, error) {
		if i == len(papers) {
			return library.Record{}, io.EOF
		}
		i++
		return library.Record{Line: i, Paper: papers[i-1], Origin: "demo"}, nil
	}, library.ImportOptions{})
	require.NoError(t, err)
	src, err := local.New(st)
	require.NoError(t, err)
	return src
}

// TestDemoLabels runs the organizer on real results from the demo library
// and checks what a researcher reading the labels relies on: every label
// word says something about the papers (not a stop word or an academic
// filler word like "proposed"), is written by several of the group's
// papers or by its best paper's title, appears once, and no two groups
// share a label. `go test -run TestDemoLabels -v` prints the labels.
func TestDemoLabels(t *testing.T) {
	t.Parallel()
	src := demoSource(t)
	for _, q := range demoQuestions {
		t.Run(q, func(t *testing.T) {
			papers := demoRun(t, src, q)
			require.NotEmpty(t, papers, "the demo library answers %q", q)
			groups, err := organize.Organizer{}.Organize(context.Background(), papers)
			require.NoError(t, err)
			checkPartition(t, papers, groups)
			byID := map[string]research.ScoredPaper{}
			for _, p := range papers {
				byID[p.ID] = p
			}
			t.Logf("%q: %d papers, %d groups (papers, label before → after, best paper)", q, len(papers), len(groups))
			before := organize.BaselineLabels(papers, groups)
			var was []string
			for i, g := range groups {
				t.Logf("  %2d  %-32s → %-40s [%s]", len(g.PaperIDs), before[i], g.Label, byID[g.PaperIDs[0]].Title)
				for _, p := range labelProblems(before[i], g, byID) {
					was = append(was, fmt.Sprintf("%q: %s", before[i], p))
				}
			}
			t.Logf("  before: %d problems", len(was))
			for _, p := range was {
				t.Logf("    %s", p)
			}
			labels := map[string]bool{}
			for _, g := range groups {
				require.False(t, labels[withoutNumber(g.Label)], "two groups labelled %q", g.Label)
				labels[withoutNumber(g.Label)] = true
				require.Empty(t, labelProblems(g.Label, g, byID), "label %q", g.Label)
			}
		})
	}
}

// labelProblems lists how a group's label breaks the rules listed on
// TestDemoLabels, for the current labeller (which must break none) and
// the baseline (to show the rules catch what the audit found).
func labelProblems(label string, g research.Group, byID map[string]research.ScoredPaper) []string {
	problems := wordProblems(label)
	if label == organize.OtherLabel {
		return problems
	}
	top := byID[g.PaperIDs[0]]
	for _, term := range strings.Split(label, ", ") {
		in := 0
		for _, id := range g.PaperIDs {
			p := byID[id]
			if containsPhrase(p.Title+"\n"+p.Abstract, term) {
				in++
			}
		}
		if in < 2 && !containsPhrase(top.Title, term) {
			problems = append(problems, fmt.Sprintf("%q is in %d of the group's papers and not in its best paper's title", term, in))
		}
	}
	return problems
}

// wordProblems lists the words of a label that say nothing: a stop word
// other than "of" inside a phrase, academic filler, a word that names
// nothing standing alone, a word repeated.
func wordProblems(label string) []string {
	if label == organize.OtherLabel {
		return nil
	}
	var problems []string
	seen := map[string]bool{}
	for _, term := range strings.Split(label, ", ") {
		fields := strings.Fields(strings.ToLower(term))
		if len(fields) == 0 {
			problems = append(problems, "empty term")
			continue
		}
		if len(fields) == 1 && organize.IsWeak(fields[0]) && !organize.IsGeneric(fields[0]) {
			problems = append(problems, fmt.Sprintf("%q names no theme alone", term))
		}
		for i, w := range fields {
			inner := i > 0 && i < len(fields)-1
			if text.IsStopword(w) && !(inner && w == "of") {
				problems = append(problems, fmt.Sprintf("stop word %q", w))
			}
			if organize.IsGeneric(w) {
				problems = append(problems, fmt.Sprintf("generic word %q", w))
			}
			for _, s := range text.Tokenize(w) {
				if seen[s] {
					problems = append(problems, fmt.Sprintf("%q repeated", w))
				}
				seen[s] = true
			}
		}
	}
	return problems
}

// containsPhrase reports whether s has the words of term, stemmed, next
// to each other, as a person reading the paper would find the term.
func containsPhrase(s, term string) bool {
	want, have := text.Tokenize(term), text.Tokenize(s)
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
