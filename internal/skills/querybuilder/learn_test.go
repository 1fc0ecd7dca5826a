package querybuilder_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/query"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/text"
)

// TestIssue16FeedbackIsUnderstood replays issue 16's defect 6: the free
// text "not only medical imaging" became -"medical imaging", removing the
// paper just marked relevant, while ImageNet and vision transformers were
// ignored; two papers marked irrelevant added -fast -glass to every
// query; one Viewstamped Replication paper marked relevant added
// (primary OR available OR copy). Each fails on the old code.
func TestIssue16FeedbackIsUnderstood(t *testing.T) {
	t.Parallel()
	vision := research.ParsedIntent{Topic: "self-supervised pretraining for image classification",
		Concepts: []research.Concept{{Term: "self-supervised pretraining"}, {Term: "image classification"}}}
	medical := paper("med", "Self-supervised pretraining for medical imaging classification",
		"Contrastive pretraining on unlabeled chest X-rays and medical imaging improves image classification.")
	glass1 := paper("g1", "Fast glass transition in metallic glass films", "Fast cooling of glass-forming alloys.")
	glass2 := paper("g2", "Fast crack growth in glass", "Glass fracture under fast loading.")
	vr := paper("vr", "Viewstamped Replication: A New Primary Copy Method to Support Highly-Available Distributed Systems",
		"One replica is the primary copy; the others are backups kept available by viewstamps.")
	coll := []research.RawPaper{medical.RawPaper, glass1.RawPaper, glass2.RawPaper, vr.RawPaper,
		paper("o1", "Masked autoencoders are scalable vision learners", "Masked image modelling on ImageNet.").RawPaper,
		paper("o2", "A simple framework for contrastive learning", "SimCLR learns representations by contrasting views.").RawPaper,
		paper("o3", "Momentum contrast for unsupervised visual representation learning", "MoCo builds a queue of negatives.").RawPaper,
	}
	in := skills.QueryInput{Intent: vision, Sources: []string{query.Local, query.OpenAlex}, Collection: coll,
		Marked: []research.ScoredPaper{medical, glass1, glass2, vr}}
	fb := research.UserFeedback{MarkedRelevant: []string{"med", "vr"}, MarkedIrrelevant: []string{"g1", "g2"},
		FreeTextFeedback: "Good start, but not only medical imaging: I also want ImageNet and vision transformers."}
	got := iterate(t, in, fb)[1]
	all := strings.Join(texts(got), "\n")
	require.NotContains(t, negated(t, got), "medical imaging", "the paper just marked relevant is not excluded")
	for _, neg := range negated(t, got) {
		require.False(t, strings.Contains(strings.ToLower(medical.Title+" "+medical.Abstract), neg), "excludes %q, which the relevant paper uses", neg)
	}
	require.Contains(t, all, "ImageNet")
	require.Contains(t, all, `"vision transformers"`)
	for _, w := range []string{"fast", "glass", "primary", "available", "copy"} {
		require.NotContains(t, strings.Fields(strings.NewReplacer("(", " ", ")", " ", "-", " ").Replace(all)), w, "learned %q from one or two papers: %s", w, all)
	}
	require.Empty(t, got.Filters.LearnedExcludeTerms)
}

// TestLearnedExclusionNeverRemovesARelevantPaper is the property: for
// random papers and random marks over them, no learned or read
// exclusion (every exclusion but the question's) occurs in the title or abstract of a paper marked relevant.
func TestLearnedExclusionNeverRemovesARelevantPaper(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	vocab := []string{"mice", "murine", "cytokine", "endotoxin", "lactate", "sepsis", "children", "ICU", "glass", "fast",
		"imaging", "medical", "trial", "cohort", "survival", "storm", "shock", "model", "models", "vital", "signs"}
	feedbackText := []string{"", "exclude mice", "not only medical imaging", "less on cytokine storms", "no endotoxin models",
		"without glass", "more on lactate", "Drop the murine stuff, focus on ICU cohorts."}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 14).Draw(t, "papers")
		var marked []research.ScoredPaper
		var coll []research.RawPaper
		var ids []string
		for i := range n {
			title := strings.Join(rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 5).Draw(t, "title"), " ")
			abstract := strings.Join(rapid.SliceOfN(rapid.SampledFrom(vocab), 0, 12).Draw(t, "abstract"), " ")
			p := paper(fmt.Sprintf("p%d", i), title, abstract)
			marked = append(marked, p)
			coll = append(coll, p.RawPaper)
			ids = append(ids, p.ID)
		}
		coll = append(coll, wards...)
		in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}, Marked: marked, Collection: coll}
		var rel []research.ScoredPaper
		for _, id := range ids {
			switch rapid.IntRange(0, 2).Draw(t, "mark "+id) {
			case 0:
				in.Feedback = append(in.Feedback, research.UserFeedback{MarkedRelevant: []string{id}})
			case 1:
				in.Feedback = append(in.Feedback, research.UserFeedback{MarkedIrrelevant: []string{id}})
			}
		}
		in.Feedback = append(in.Feedback, research.UserFeedback{FreeTextFeedback: rapid.SampledFrom(feedbackText).Draw(t, "free text")})
		current := map[string]bool{}
		for _, f := range in.Feedback {
			for _, id := range f.MarkedRelevant {
				current[id] = true
			}
			for _, id := range f.MarkedIrrelevant {
				current[id] = false
			}
		}
		for _, p := range marked {
			if current[p.ID] {
				rel = append(rel, p)
			}
		}
		got, err := b.BuildStrategy(context.Background(), in)
		require.NoError(t, err)
		for _, l := range got.Filters.ExcludeTerms {
			if text.ContainsFold(in.Intent.ExcludeTerms, l) {
				continue // the question's own exclusion, not learned
			}
			for _, p := range rel {
				words := text.Words(p.Title + " " + p.Abstract)
				for _, w := range text.Words(l) {
					require.False(t, slices.Contains(words, w) && len(text.Words(l)) == 1, "learned exclusion %q removes relevant paper %q", l, p.Title)
				}
				stems := text.Tokenize(p.Title + " " + p.Abstract)
				require.False(t, len(text.Tokenize(l)) > 0 && !slices.ContainsFunc(text.Tokenize(l), func(s string) bool { return !slices.Contains(stems, s) }),
					"learned exclusion %q is used by relevant paper %q", l, p.Title)
			}
		}
	})
}
