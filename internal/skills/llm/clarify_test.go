package llm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/llm"
)

// TestClarifier: the model's questions are taken when they validate (at
// most 3, 2–3 options each); an answer that fails twice, or a model that
// errors, falls back to the offline heuristics with a note.
func TestClarifier(t *testing.T) {
	t.Parallel()
	const q = "Does PD progression differ by exercise?"
	in := research.ParsedIntent{Topic: q, Concepts: []research.Concept{{Term: "PD"}, {Term: "exercise"}}}
	offline, err := offlineIntent(t).Clarify(context.Background(), q, in)
	require.NoError(t, err)
	require.NotEmpty(t, offline)
	tests := []struct {
		name         string
		steps        []step
		wantIDs      []string // nil: the offline questions
		wantRequests int
		wantRetryErr string
		wantNote     string
	}{
		{name: "Valid", steps: []step{answer("clarify_valid.json")}, wantIDs: []string{"acronym-pd", "years-asked"}, wantRequests: 1},
		{name: "Clear", steps: []step{answer("clarify_none.json")}, wantIDs: []string{}, wantRequests: 1},
		{name: "NotJSONThenValid", steps: []step{answer("not_json.txt"), answer("clarify_valid.json")}, wantIDs: []string{"acronym-pd", "years-asked"}, wantRequests: 2,
			wantRetryErr: "no JSON object"},
		{name: "FourOptionsTwice", steps: []step{answer("clarify_too_many_options.json")}, wantRequests: 2,
			wantRetryErr: "4 options, 2 to 3 are asked for", wantNote: "rejected twice"},
		{name: "FourQuestionsTwice", steps: []step{answer("clarify_four_questions.json")}, wantRequests: 2,
			wantRetryErr: "4 questions, at most 3", wantNote: "rejected twice"},
		{name: "HTTP500", steps: []step{failWith(500)}, wantRequests: 1, wantNote: "500"},
	}
	for _, kind := range kinds {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFake(t, kind, tt.steps...)
				var n notes
				got, err := llm.NewClarifier(f.provider(), offlineIntent(t)).Clarify(n.ctx(), q, in)
				require.NoError(t, err)
				require.NoError(t, research.ValidateQuestions(got))
				if tt.wantIDs == nil {
					require.Equal(t, offline, got)
				} else {
					ids := []string{}
					for _, q := range got {
						ids = append(ids, q.ID)
					}
					require.Equal(t, tt.wantIDs, ids)
				}
				prompts := f.prompts()
				require.Len(t, prompts, tt.wantRequests)
				require.Contains(t, prompts[0], q)
				if tt.wantRetryErr != "" {
					require.Contains(t, prompts[1], tt.wantRetryErr)
				}
				if tt.wantNote == "" {
					require.Empty(t, n.all())
					return
				}
				all := n.all()
				require.Len(t, all, 1)
				require.Equal(t, llm.SkillClarifier, all[0].Skill)
				require.Contains(t, all[0].Message, tt.wantNote)
			})
		}
	}
	off := offlineIntent(t)
	require.Same(t, off, llm.NewClarifier(nil, off), "no provider means the offline heuristics themselves")
}
