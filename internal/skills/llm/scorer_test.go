package llm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/relevance"
)

// llmScores are the scores and reasons of answers/scores_first_five.json.
var llmScores = []struct {
	score  float64
	reason string
}{
	{0.95, "Randomised trial of mindfulness for anxious adolescents."},
	{0.1, "About adults, which the researcher excluded."},
	{0.7, "School-based mindfulness, anxiety is a secondary outcome."},
	{0.4, "Meditation and stress, not anxiety."},
	{0, "Unrelated: crop yields."},
}

func scoreInput(t *testing.T, n int) skills.ScoreInput {
	t.Helper()
	in, err := offlineIntent(t).ParseIntent(context.Background(), question)
	require.NoError(t, err)
	topics := []string{"mindfulness training for adolescent anxiety", "mindfulness for anxious adults", "school mindfulness and wellbeing", "meditation and stress", "crop yields under drought"}
	var papers []research.RawPaper
	for i := range n {
		papers = append(papers, research.RawPaper{
			ID: fmt.Sprintf("doi:10.1/p%02d", i+1), Title: fmt.Sprintf("Paper %02d: %s", i+1, topics[i%len(topics)]),
			Year: 2016 + i%8, Venue: "Journal of Tests", Abstract: strings.Repeat("We study "+topics[i%len(topics)]+". ", 3), Source: "openalex",
		})
	}
	return skills.ScoreInput{Intent: in, Papers: papers,
		Relevant: []research.RawPaper{{ID: "r1", Title: "A marked relevant trial of mindfulness"}}}
}

func offlineScores(t *testing.T, in skills.ScoreInput) []research.ScoredPaper {
	t.Helper()
	out, err := relevance.Scorer{}.Score(context.Background(), in)
	require.NoError(t, err)
	return out
}

func TestScorerBatchesAndKeepsFallbackForMissing(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			in := scoreInput(t, 25) // two batches: 20 + 5
			f := newFake(t, kind, answer("scores_first_five.json"))
			var n notes
			got, err := llm.NewScorer(f.provider(), relevance.Scorer{}).Score(n.ctx(), in)
			require.NoError(t, err)
			off := offlineScores(t, in)
			require.Len(t, got, 25)
			for i, p := range got {
				require.Equal(t, in.Papers[i], p.RawPaper, "papers keep their order and metadata")
				require.NoError(t, p.Validate())
				switch {
				case i < 5 || i >= 20: // answered: first five of each batch
					k := i % 20
					require.InDelta(t, llmScores[k].score, p.Score, 1e-9, "paper %d", i)
					require.Equal(t, []string{llmScores[k].reason}, p.Reasons)
				default: // missing from the first batch's answer
					require.Equal(t, off[i], p, "paper %d keeps the offline score", i)
				}
			}

			prompts := f.prompts()
			require.Len(t, prompts, 2)
			sizes := map[int]bool{}
			for _, p := range prompts {
				require.Contains(t, p, "Topic: "+in.Intent.Topic)
				require.Contains(t, p, "marked relevant:\n  A marked relevant trial of mindfulness")
				require.Contains(t, p, "[1] ")
				sizes[strings.Count(p, "\n[")] = true
			}
			require.Equal(t, map[int]bool{20: true, 5: true}, sizes)

			ns := n.all()
			require.Len(t, ns, 1)
			require.Equal(t, llm.SkillScorer, ns[0].Skill)
			require.Contains(t, ns[0].Message, "left 15 of 25 papers unscored")
		})
	}
}

func TestScorerFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		steps        []step
		edit         func(*llm.Config)
		wantLLM      bool // all five papers carry the model's scores
		wantRequests int
		wantRetryErr []string
		wantNote     string
	}{
		{name: "Valid", steps: []step{answer("scores_first_five.json")}, wantLLM: true, wantRequests: 1},
		{name: "OutOfRangeThenValid", steps: []step{answer("scores_out_of_range.json"), answer("scores_first_five.json")}, wantLLM: true, wantRequests: 2,
			wantRetryErr: []string{"score 1.7 is outside [0,1]", "paper number 9 is not between 1 and 5"}},
		{name: "InvalidTwice", steps: []step{answer("scores_out_of_range.json")}, wantRequests: 2,
			wantRetryErr: []string{"outside [0,1]"}, wantNote: "1 of 1 scoring batches failed"},
		{name: "NotJSONTwice", steps: []step{answer("not_json.txt")}, wantRequests: 2, wantRetryErr: []string{"no JSON object"}, wantNote: "rejected twice"},
		{name: "HTTP500", steps: []step{failWith(500)}, wantRequests: 1, wantNote: "500"},
		{name: "HTTP429AfterRetries", steps: []step{failWith(429)}, edit: func(c *llm.Config) { c.MaxRetries = 2 }, wantRequests: 3, wantNote: "429"},
		{name: "Timeout", steps: []step{hang(2 * time.Second)}, edit: func(c *llm.Config) { c.Timeout = 100 * time.Millisecond }, wantRequests: 1, wantNote: "offline scorer was used"},
	}
	for _, kind := range kinds {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				in := scoreInput(t, 5)
				f := newFake(t, kind, tt.steps...)
				var edits []func(*llm.Config)
				if tt.edit != nil {
					edits = append(edits, tt.edit)
				}
				var n notes
				got, err := llm.NewScorer(f.provider(edits...), relevance.Scorer{}).Score(n.ctx(), in)
				require.NoError(t, err)
				if tt.wantLLM {
					for i, p := range got {
						require.InDelta(t, llmScores[i].score, p.Score, 1e-9)
						require.Equal(t, []string{llmScores[i].reason}, p.Reasons)
					}
				} else {
					require.Equal(t, offlineScores(t, in), got)
				}
				prompts := f.prompts()
				require.Len(t, prompts, tt.wantRequests)
				for _, e := range tt.wantRetryErr {
					require.Contains(t, prompts[1], e)
				}
				if tt.wantNote == "" {
					require.Empty(t, n.all())
					return
				}
				ns := n.all()
				require.Len(t, ns, 1)
				require.Equal(t, llm.SkillScorer, ns[0].Skill)
				require.Contains(t, ns[0].Message, tt.wantNote)
			})
		}
	}
}

func TestScorerNoPapersNoRequest(t *testing.T) {
	t.Parallel()
	f := newFake(t, llm.ProviderOpenAI, answer("scores_first_five.json"))
	in := scoreInput(t, 0)
	got, err := llm.NewScorer(f.provider(), relevance.Scorer{}).Score(context.Background(), in)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Empty(t, f.requests())
	require.Equal(t, relevance.Scorer{}, llm.NewScorer(nil, relevance.Scorer{}))
}
