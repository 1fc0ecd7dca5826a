package llm_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/llm"
)

const question = "Does mindfulness reduce anxiety in adolescents? Exclude adults. Since 2015"

func offlineIntent(t *testing.T) *intent.Parser {
	t.Helper()
	return intent.New(func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) })
}

func TestIntentParser(t *testing.T) {
	t.Parallel()
	valid := research.ParsedIntent{
		Topic: "mindfulness interventions for anxiety in adolescents",
		Concepts: []research.Concept{
			{Term: "mindfulness", Synonyms: []string{"meditation", "mindfulness-based intervention"}},
			{Term: "anxiety", Synonyms: []string{"anxiety disorders"}},
			{Term: "adolescents", Synonyms: []string{"teenagers", "youth"}},
		},
		YearRange:     research.YearRange{From: 2015},
		ExcludeTerms:  []string{"adults"},
		FieldsOfStudy: []string{"Psychology", "Medicine"},
		StudyTypes:    []string{"randomized controlled trial"},
	}
	tests := []struct {
		name         string
		steps        []step
		edit         func(*llm.Config)
		want         *research.ParsedIntent // nil: the offline parser's answer
		wantRequests int
		wantRetryErr string // in the second prompt
		wantNote     string // in the note; "" means no note
	}{
		{name: "Valid", steps: []step{answer("intent_valid.json")}, want: &valid, wantRequests: 1},
		{name: "FencedAnswer", steps: []step{answer("fenced_intent.txt")}, wantRequests: 1, want: &research.ParsedIntent{
			Topic: "sleep and memory", Concepts: []research.Concept{{Term: "sleep", Synonyms: []string{"slumber"}}, {Term: "memory consolidation"}}}},
		{name: "InvalidJSONThenValid", steps: []step{answer("not_json.txt"), answer("intent_valid.json")}, want: &valid, wantRequests: 2,
			wantRetryErr: "the answer contains no JSON object"},
		{name: "InvalidTwice", steps: []step{answer("intent_reversed_years.json")}, wantRequests: 2,
			wantRetryErr: "year_range.from: from (2024) is after to (2010)", wantNote: "rejected twice"},
		{name: "HTTP500", steps: []step{failWith(500)}, wantRequests: 1, wantNote: "500"},
		{name: "HTTP429AfterRetries", steps: []step{failWith(429)}, edit: func(c *llm.Config) { c.MaxRetries = 1 }, wantRequests: 2, wantNote: "429"},
		{name: "Timeout", steps: []step{hang(2 * time.Second)}, edit: func(c *llm.Config) { c.Timeout = 100 * time.Millisecond }, wantRequests: 1, wantNote: "could not be used"},
	}
	for _, kind := range kinds {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFake(t, kind, tt.steps...)
				var edits []func(*llm.Config)
				if tt.edit != nil {
					edits = append(edits, tt.edit)
				}
				var n notes
				ip := llm.NewIntentParser(f.provider(edits...), offlineIntent(t))
				got, err := ip.ParseIntent(n.ctx(), question)
				require.NoError(t, err)
				require.NoError(t, got.Validate())

				want := tt.want
				if want == nil {
					off, err := offlineIntent(t).ParseIntent(context.Background(), question)
					require.NoError(t, err)
					want = &off
				}
				require.Equal(t, *want, got)

				prompts := f.prompts()
				require.Len(t, prompts, tt.wantRequests)
				require.Contains(t, prompts[0], question)
				if tt.wantRetryErr != "" {
					require.NotContains(t, prompts[0], "rejected")
					require.Contains(t, prompts[1], "Your previous answer was rejected")
					require.Contains(t, prompts[1], tt.wantRetryErr)
				}
				if tt.wantNote == "" {
					require.Empty(t, n.all())
					return
				}
				got2 := n.all()
				require.Len(t, got2, 1)
				require.Equal(t, llm.SkillIntentParser, got2[0].Skill)
				require.Contains(t, got2[0].Message, kind+"/"+testModel)
				require.Contains(t, got2[0].Message, tt.wantNote)
				require.Contains(t, got2[0].Message, "offline intent parser")
			})
		}
	}
}

func TestIntentParserOfflineAndBadInput(t *testing.T) {
	t.Parallel()
	off := offlineIntent(t)
	require.Same(t, off, llm.NewIntentParser(nil, off), "no provider means the offline parser itself")

	f := newFake(t, llm.ProviderOpenAI, answer("intent_valid.json"))
	var n notes
	_, err := llm.NewIntentParser(f.provider(), off).ParseIntent(n.ctx(), "   ")
	require.Error(t, err, "an empty question is the caller's error, not a reason to ask the model")
	require.Empty(t, f.requests())
	require.Empty(t, n.all())
}

func TestIntentParserCancelledContextDoesNotFallBack(t *testing.T) {
	t.Parallel()
	f := newFake(t, llm.ProviderAnthropic, hang(5*time.Second))
	var n notes
	ctx, cancel := context.WithTimeout(n.ctx(), 100*time.Millisecond)
	defer cancel()
	_, err := llm.NewIntentParser(f.provider(), offlineIntent(t)).ParseIntent(ctx, question)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, n.all(), "a cancelled step is not a fallback")
}
