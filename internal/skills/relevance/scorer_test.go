package relevance_test

import (
	"context"
	"fmt"
	"math"
	"quarry/internal/research"
	"quarry/internal/skills/text"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/skills"
	"quarry/internal/skills/relevance"
)

func paper(id, title, abstract string) research.RawPaper {
	return research.RawPaper{ID: id, Title: title, Abstract: abstract, Source: "test"}
}

func corpus() []research.RawPaper {
	return []research.RawPaper{
		paper("bb", "Beta blockers after myocardial infarction", "Beta blockers reduce mortality in adults after myocardial infarction."),
		paper("hf", "Heart failure outcomes", "We studied beta blockers in heart failure patients."),
		paper("kids", "Beta blockers in children", "A trial of beta blockers in children with hypertension."),
		paper("soil", "Soil bacteria diversity", "Microbial communities in agricultural soil."),
		paper("ml", "Deep learning for images", "Convolutional networks classify images."),
	}
}

func scoreOf(t *testing.T, out []research.ScoredPaper, id string) research.ScoredPaper {
	t.Helper()
	for _, p := range out {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("paper %s not scored", id)
	return research.ScoredPaper{}
}

func TestScoreLexical(t *testing.T) {
	t.Parallel()
	intent := research.ParsedIntent{
		Topic:        "beta blockers after myocardial infarction",
		Concepts:     []research.Concept{{Term: "beta blockers", Synonyms: []string{"beta-adrenergic antagonists"}}},
		ExcludeTerms: []string{"children"},
	}
	out, err := relevance.Scorer{}.Score(context.Background(), skills.ScoreInput{Intent: intent, Papers: corpus()})
	require.NoError(t, err)
	require.Len(t, out, 5)
	for _, p := range out {
		require.NoError(t, p.Validate())
		require.NotEmpty(t, p.Reasons)
	}
	bb, hf, kids, soil := scoreOf(t, out, "bb"), scoreOf(t, out, "hf"), scoreOf(t, out, "kids"), scoreOf(t, out, "soil")
	require.Greater(t, bb.Score, hf.Score)
	require.Greater(t, hf.Score, soil.Score)
	require.Greater(t, bb.Score, kids.Score, "excluded term penalises")
	require.Zero(t, soil.Score)
	require.Contains(t, bb.Reasons, `matches "beta blockers" in title`)
	require.Contains(t, hf.Reasons, `matches "beta blockers" in abstract`)
	require.Contains(t, kids.Reasons, `contains excluded term "children"`)
	require.Equal(t, []string{"no terms of the question in title or abstract"}, soil.Reasons)
}

// TestScoreExcludedTopicWords: the topic is the question as typed, so it
// holds the words of its exclusions ("not in children"); they are not
// counted as wanted. A paper about children ranks below the same paper
// about adults, and its reasons do not say it matches "children".
func TestScoreExcludedTopicWords(t *testing.T) {
	t.Parallel()
	papers := []research.RawPaper{
		paper("adults", "Exercise and depression in adults", "A trial of exercise for depression in adults."),
		paper("kids", "Exercise and depression in children", "A trial of exercise for depression in children."),
		paper("soil", "Soil bacteria diversity", "Microbial communities in agricultural soil."),
	}
	intent := research.ParsedIntent{
		Topic:        "exercise and depression not in children",
		Concepts:     []research.Concept{{Term: "exercise"}, {Term: "depression"}},
		ExcludeTerms: []string{"children"},
	}
	out, err := relevance.Scorer{}.Score(context.Background(), skills.ScoreInput{Intent: intent, Papers: papers})
	require.NoError(t, err)
	adults, kids := scoreOf(t, out, "adults"), scoreOf(t, out, "kids")
	require.Greater(t, adults.Score, kids.Score)
	require.Contains(t, kids.Reasons, `contains excluded term "children"`)
	for _, r := range kids.Reasons {
		require.NotContains(t, r, `matches "children"`)
	}
}

// TestScoreMatchesHyphenatedSpelling: a question that writes a compound
// joined ("pretraining") matches papers that hyphenate it, as the library
// search does, and says so in the reasons.
func TestScoreMatchesHyphenatedSpelling(t *testing.T) {
	t.Parallel()
	papers := []research.RawPaper{
		paper("bert", "Pre-training of deep bidirectional transformers", "Language understanding."),
		paper("vit", "Transformers for image recognition", "Images as words."),
		paper("soil", "Soil bacteria diversity", "Microbial communities."),
	}
	intent := research.ParsedIntent{Topic: "pretraining transformers"}
	out, err := relevance.Scorer{}.Score(context.Background(), skills.ScoreInput{Intent: intent, Papers: papers})
	require.NoError(t, err)
	bert, vit := scoreOf(t, out, "bert"), scoreOf(t, out, "vit")
	require.Greater(t, bert.Score, vit.Score)
	require.Contains(t, bert.Reasons, `matches "pretraining" in title`)
}

func TestScoreLearnsFromMarks(t *testing.T) {
	t.Parallel()
	papers := []research.RawPaper{
		paper("a1", "Gut microbiome and depression", "Microbiome composition differs in patients with depression."),
		paper("a2", "Microbiome and mood disorders", "Gut bacteria are linked to mood and depression."),
		paper("b1", "Exercise therapy for depression", "Running reduces depression symptoms in adults."),
		paper("b2", "Exercise and anxiety", "Aerobic exercise reduces anxiety and depression."),
		paper("c1", "Gut microbiome in depression", "The gut microbiome of depressed patients was sequenced."),
		paper("c2", "Exercise programmes for depression", "Exercise programmes improve mood and depression."),
	}
	intent := research.ParsedIntent{Topic: "depression"}
	in := skills.ScoreInput{Intent: intent, Papers: papers, Relevant: papers[:2], Irrelevant: papers[2:4]}
	out, err := relevance.Scorer{}.Score(context.Background(), in)
	require.NoError(t, err)
	c1, c2 := scoreOf(t, out, "c1"), scoreOf(t, out, "c2")
	require.Greater(t, c1.Score, c2.Score, "the microbiome paper resembles the relevant marks")
	require.Contains(t, c1.Reasons, "similar to 2 papers you marked relevant")
	require.Contains(t, c2.Reasons, "resembles 2 papers you marked irrelevant")
}

// Displayed scores must read like confidence: a paper that matches the
// question's concepts in its title reads at least 0.6 even in a tiny
// collection, one with no word of the question reads about 0, and
// calibration keeps the order of the raw ranking.
func TestScoreCalibrated(t *testing.T) {
	t.Parallel()
	intent := research.ParsedIntent{
		Topic: "beta blockers after myocardial infarction in adults, randomised trials of mortality and reinfarction",
		Concepts: []research.Concept{
			{Term: "beta blockers", Synonyms: []string{"beta-adrenergic antagonists", "propranolol", "metoprolol"}},
			{Term: "myocardial infarction", Synonyms: []string{"heart attack"}},
		},
	}
	tests := []struct {
		name  string
		marks bool
	}{{"NoMarks", false}, {"WithMarks", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := skills.ScoreInput{Intent: intent, Papers: corpus()}
			if tt.marks {
				in.Relevant = corpus()[1:2]
				in.Irrelevant = corpus()[4:5]
			}
			out, err := relevance.Scorer{}.Score(context.Background(), in)
			require.NoError(t, err)
			require.GreaterOrEqual(t, scoreOf(t, out, "bb").Score, 0.6, "clear match")
			require.Less(t, scoreOf(t, out, "soil").Score, 0.1, "no match")
			require.Greater(t, scoreOf(t, out, "bb").Score, scoreOf(t, out, "kids").Score)
		})
	}
	// The order of the displayed scores is the order of the raw blend.
	papers := corpus()
	x := relevance.NewIndex(intent, papers)
	raw := x.Lexical()
	shown := x.Rank(nil, nil)
	for i := range papers {
		for j := range papers {
			require.Equal(t, raw[i] < raw[j], shown[i] < shown[j], "%s vs %s", papers[i].ID, papers[j].ID)
		}
	}
	require.Less(t, slices.Max(raw), 0.6, "the raw lexical scale is what read too low")
}

func TestScoreEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   skills.ScoreInput
		want int
	}{
		{"NoPapers", skills.ScoreInput{Intent: research.ParsedIntent{Topic: "x"}}, 0},
		{"EmptyIntent", skills.ScoreInput{Papers: corpus()}, 5},
		{"EmptyTexts", skills.ScoreInput{Intent: research.ParsedIntent{Topic: "beta"}, Papers: []research.RawPaper{paper("e", "", "")}}, 1},
		{"MarksOutsidePapers", skills.ScoreInput{Intent: research.ParsedIntent{Topic: "beta"}, Papers: corpus()[:2],
			Relevant: corpus()[2:3], Irrelevant: corpus()[3:]}, 2},
		{"MarkedBothWays", skills.ScoreInput{Intent: research.ParsedIntent{Topic: "beta"}, Papers: corpus(),
			Relevant: corpus()[:1], Irrelevant: corpus()[:1]}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := relevance.Scorer{}.Score(context.Background(), tt.in)
			require.NoError(t, err)
			require.Len(t, out, tt.want)
			for _, p := range out {
				require.False(t, math.IsNaN(p.Score))
				require.GreaterOrEqual(t, p.Score, 0.0)
				require.LessOrEqual(t, p.Score, 1.0)
			}
		})
	}
}

func TestScoreCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := relevance.Scorer{}.Score(ctx, skills.ScoreInput{Papers: corpus()})
	require.Error(t, err)
}

var vocabulary = []string{"beta", "blocker", "heart", "failure", "soil", "bacteria", "image", "network", "trial", "children", "mortality", "gene"}

func genPaper(id string) *rapid.Generator[research.RawPaper] {
	return rapid.Custom(func(t *rapid.T) research.RawPaper {
		words := func(label string, n int) string {
			ws := rapid.SliceOfN(rapid.SampledFrom(vocabulary), 0, n).Draw(t, label)
			return fmt.Sprint(ws)
		}
		return paper(id, words("title", 6), words("abstract", 20))
	})
}

func genInput(t *rapid.T) skills.ScoreInput {
	n := rapid.IntRange(0, 8).Draw(t, "n")
	var papers []research.RawPaper
	for i := range n {
		papers = append(papers, genPaper(fmt.Sprint("p", i)).Draw(t, fmt.Sprint("paper", i)))
	}
	in := skills.ScoreInput{
		Intent:   research.ParsedIntent{Topic: rapid.StringMatching(`[a-z ]{0,30}`).Draw(t, "topic")},
		Papers:   papers,
		Relevant: nil,
	}
	for i, p := range papers {
		switch rapid.IntRange(0, 2).Draw(t, fmt.Sprint("mark", i)) {
		case 1:
			in.Relevant = append(in.Relevant, p)
		case 2:
			in.Irrelevant = append(in.Irrelevant, p)
		}
	}
	return in
}

func TestScoreProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		a, err := relevance.Scorer{}.Score(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := relevance.Scorer{}.Score(context.Background(), in)
		if !slices.EqualFunc(a, b, func(x, y research.ScoredPaper) bool {
			return x.ID == y.ID && x.Score == y.Score && slices.Equal(x.Reasons, y.Reasons)
		}) {
			t.Fatalf("not deterministic")
		}
		for _, p := range a {
			if math.IsNaN(p.Score) || p.Score < 0 || p.Score > 1 {
				t.Fatalf("score %v out of [0,1]", p.Score)
			}
		}
	})
}

// A paper identical to a marked-relevant one must outrank a paper identical
// to a marked-irrelevant one when the question favours neither.
func TestScoreCopiesOfMarksProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		r := genPaper("rel").Draw(t, "rel")
		i := genPaper("irr").Draw(t, "irr")
		// The two must differ in which words they use, and have words at
		// all. The same words in title versus abstract are the same
		// evidence, and so can the same words in other numbers be: "blocker"
		// and "blocker blocker" are one L2-normalised TF-IDF vector.
		bag := func(p research.RawPaper) string {
			ws := text.Tokenize(p.Title + " " + p.Abstract)
			slices.Sort(ws)
			return strings.Join(slices.Compact(ws), " ")
		}
		if bag(r) == bag(i) || bag(r) == "" || bag(i) == "" {
			t.Skip("copies must differ and have words")
		}
		in.Intent.Topic = ""
		// Only these two marks: other random marks could contradict them
		// (the same words marked both ways), and then no order is "right".
		in.Relevant = []research.RawPaper{r}
		in.Irrelevant = []research.RawPaper{i}
		rc, ic := r, i
		rc.ID, ic.ID = "rel-copy", "irr-copy"
		in.Papers = append(in.Papers, rc, ic)
		out, err := relevance.Scorer{}.Score(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		var rs, is float64
		for _, p := range out {
			switch p.ID {
			case "rel-copy":
				rs = p.Score
			case "irr-copy":
				is = p.Score
			}
		}
		if rs <= is {
			t.Fatalf("copy of relevant scored %v, copy of irrelevant %v", rs, is)
		}
	})
}
