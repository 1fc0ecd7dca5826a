package organize_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
	"quarry/internal/skills/organize"
)

func sp(id string, score float64, title, abstract string) research.ScoredPaper {
	return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: title, Abstract: abstract, Source: "t"}, Score: score, Reasons: []string{"test score"}}
}

// checkPartition asserts every paper is in exactly one group, groups are
// labelled with 1-4 words (plus list punctuation) and sorted by score.
func checkPartition(t interface {
	require.TestingT
	Helper()
}, papers []research.ScoredPaper, groups []research.Group) {
	t.Helper()
	score := map[string]float64{}
	for _, p := range papers {
		score[p.ID] = p.Score
	}
	seen := map[string]int{}
	for _, g := range groups {
		require.NotEmpty(t, strings.TrimSpace(g.Label))
		require.NotEmpty(t, g.PaperIDs)
		for i, id := range g.PaperIDs {
			seen[id]++
			if i > 0 {
				require.GreaterOrEqual(t, score[g.PaperIDs[i-1]], score[id], "sorted by score in %q", g.Label)
			}
		}
	}
	require.Len(t, seen, len(papers))
	for id, n := range seen {
		require.Equal(t, 1, n, "paper %s", id)
	}
	require.NoError(t, research.PaperCollection{Papers: papers, Groups: groups}.Validate())
}

func TestOrganizeSmall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		papers []research.ScoredPaper
		groups int
	}{
		{"Empty", nil, 0},
		{"One", []research.ScoredPaper{sp("a", 0.5, "Heart failure therapy", "")}, 1},
		{"Two", []research.ScoredPaper{sp("a", 0.2, "Heart failure", ""), sp("b", 0.9, "Soil bacteria", "")}, 1},
		{"NoWords", []research.ScoredPaper{sp("a", 0.2, "2019", ""), sp("b", 0.1, "the", "")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			groups, err := organize.Organizer{}.Organize(context.Background(), tt.papers)
			require.NoError(t, err)
			require.NotNil(t, groups)
			require.Len(t, groups, tt.groups)
			checkPartition(t, tt.papers, groups)
		})
	}
}

func TestOrganizeThemes(t *testing.T) {
	t.Parallel()
	var papers []research.ScoredPaper
	for i := range 6 {
		papers = append(papers,
			sp(fmt.Sprint("h", i), 0.9-float64(i)/100, fmt.Sprintf("Beta blockers in heart failure study %d", i),
				"Beta blockers reduce mortality in heart failure patients."),
			sp(fmt.Sprint("s", i), 0.5-float64(i)/100, fmt.Sprintf("Soil bacteria diversity survey %d", i),
				"Soil bacteria communities vary with soil moisture."))
	}
	groups, err := organize.Organizer{}.Organize(context.Background(), papers)
	require.NoError(t, err)
	checkPartition(t, papers, groups)
	require.Len(t, groups, 2)
	require.Equal(t, "h0", groups[0].PaperIDs[0], "the group of the best paper comes first")
	for _, g := range groups {
		prefix := g.PaperIDs[0][:1]
		for _, id := range g.PaperIDs {
			require.Equal(t, prefix, id[:1], "themes are not mixed in %q", g.Label)
		}
		n := len(strings.Fields(strings.ReplaceAll(g.Label, ",", " ")))
		require.True(t, n >= 2 && n <= 4, "label %q has %d words", g.Label, n)
	}
	require.Contains(t, groups[0].Label, "heart failure")
	require.Contains(t, groups[1].Label, "soil")
}

func TestOrganizeProperties(t *testing.T) {
	t.Parallel()
	vocab := []string{"heart", "failure", "soil", "bacteria", "images", "network", "trial", "gene", "children", "mortality",
		"proposed", "simple", "long", "short-term", "memory", "of", "BERT", "Heart", "risk", "bias", ","}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		var papers []research.ScoredPaper
		for i := range n {
			ws := rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 8).Draw(t, fmt.Sprint("w", i))
			score := rapid.Float64Range(0, 1).Draw(t, fmt.Sprint("s", i))
			papers = append(papers, sp(fmt.Sprint("p", i), score, strings.Join(ws, " "), ""))
		}
		a, err := organize.Organizer{}.Organize(context.Background(), papers)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, papers, a)
		for _, g := range a {
			if p := wordProblems(withoutNumber(g.Label)); len(p) > 0 {
				t.Fatalf("label %q: %q", g.Label, p)
			}
		}
		if len(a) > organize.MaxGroups {
			t.Fatalf("%d groups", len(a))
		}
		b, _ := organize.Organizer{}.Organize(context.Background(), slices.Clone(papers))
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("not deterministic")
		}
	})
}

// TestLabels pins what a label is made of, on two themes of four papers
// each: the theme's phrase as written, no filler words, acronyms in
// capitals, and no word only one paper writes outside its best title.
func TestLabels(t *testing.T) {
	t.Parallel()
	soil := func(i int) research.ScoredPaper {
		return sp(fmt.Sprint("s", i), 0.5-float64(i)/100, fmt.Sprintf("Soil bacteria diversity survey %d", i),
			"We propose a novel, simple approach. Results show soil bacteria communities vary with soil moisture.")
	}
	tests := []struct {
		name     string
		title    string
		abstract func(i int) string
		want     []string // in the label of the first theme
		not      []string // in no label
	}{
		{"PhraseAsWritten", "Long Short-Term Memory networks for speech %d",
			func(int) string { return "We propose long short-term memory networks. Results show gains." },
			[]string{"long short-term memory"}, []string{"propose", "results", "show"}},
		{"OfPhrase", "Assessing risk of bias in trials %d",
			func(int) string { return "A novel tool for the risk of bias of randomised trials." },
			[]string{"risk of bias"}, []string{"novel", "assessing"}},
		{"AcronymKept", "Pre-training deep bidirectional encoders %d",
			func(int) string { return "We started from BERT and fine-tuned BERT on a simple task." },
			[]string{"BERT"}, []string{"started", "simple", "bert"}},
		{"OnePaperWordLeftOut", "Protein structure prediction %d",
			func(i int) string {
				if i == 3 {
					return "Protein structure prediction in zebrafish."
				}
				return "Protein structure prediction from sequence."
			},
			[]string{"protein structure prediction"}, []string{"zebrafish"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var papers []research.ScoredPaper
			for i := range 4 {
				papers = append(papers, sp(fmt.Sprint("a", i), 0.9-float64(i)/100, fmt.Sprintf(tt.title, i), tt.abstract(i)), soil(i))
			}
			groups, err := organize.Organizer{}.Organize(context.Background(), papers)
			require.NoError(t, err)
			checkPartition(t, papers, groups)
			require.Len(t, groups, 2)
			require.Equal(t, "a0", groups[0].PaperIDs[0])
			for _, w := range tt.want {
				require.Contains(t, groups[0].Label, w)
			}
			for _, g := range groups {
				for _, term := range strings.Split(g.Label, ", ") {
					for _, w := range strings.Fields(term) {
						require.NotContains(t, tt.not, w, "label %q", g.Label)
					}
				}
			}
			t.Log(groups[0].Label, " / ", groups[1].Label)
			require.Contains(t, groups[1].Label, "soil bacteria")
		})
	}
}

// withoutNumber strips the " (2)" the organizer appends to a label an
// earlier group already has.
func withoutNumber(label string) string {
	if i := strings.LastIndex(label, " ("); i >= 0 && strings.HasSuffix(label, ")") {
		if _, err := strconv.Atoi(label[i+2 : len(label)-1]); err == nil {
			return label[:i]
		}
	}
	return label
}
