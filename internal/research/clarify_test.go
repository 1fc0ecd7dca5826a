package research_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
)

func clarifyFixture() (research.ParsedIntent, []research.ClarifyingQuestion) {
	in := research.ParsedIntent{Topic: "CBT for insomnia", Concepts: []research.Concept{{Term: "CBT"}, {Term: "insomnia", Synonyms: []string{"sleeplessness"}}}}
	qs := []research.ClarifyingQuestion{
		{ID: "acronym-cbt", Kind: research.ClarifyAcronym, Term: "CBT", Text: "What does CBT stand for here?", Options: []research.ClarifyOption{
			{Label: "Cognitive behavioural therapy", Value: "cognitive behavioural therapy"},
			{Label: "Computer-based training", Value: "computer-based training"}}},
		{ID: "population", Kind: research.ClarifyPopulation, Text: "Who?", Other: true, Options: []research.ClarifyOption{
			{Label: "Adults", Value: "adults"}, {Label: "Any population"}}},
		{ID: "time_frame", Kind: research.ClarifyTimeFrame, Text: "Which years?", Other: true, Options: []research.ClarifyOption{
			{Label: "Last 5 years", YearRange: research.YearRange{From: 2020, To: 2025}}, {Label: "Any time"}}},
	}
	return in, qs
}

func TestApplyAnswers(t *testing.T) {
	t.Parallel()
	in, qs := clarifyFixture()
	require.NoError(t, research.ValidateQuestions(qs))

	got, err := research.ApplyAnswers(in, qs, research.ClarifyAnswers{"acronym-cbt": "cognitive behavioural therapy", "population": "Adults", "time_frame": "Last 5 years"})
	require.NoError(t, err)
	require.Equal(t, []research.Concept{
		{Term: "cognitive behavioural therapy", Synonyms: []string{"CBT"}},
		{Term: "insomnia", Synonyms: []string{"sleeplessness"}},
		{Term: "adults"},
	}, got.Concepts)
	require.Equal(t, research.YearRange{From: 2020, To: 2025}, got.YearRange)
	require.Equal(t, []research.Concept{{Term: "CBT"}, {Term: "insomnia", Synonyms: []string{"sleeplessness"}}}, in.Concepts, "the input is not changed")

	got, err = research.ApplyAnswers(in, qs, research.ClarifyAnswers{"population": "Any population", "time_frame": "between 2010 and 2015"})
	require.NoError(t, err)
	require.Equal(t, in.Concepts, got.Concepts, "any population adds nothing")
	require.Equal(t, research.YearRange{From: 2010, To: 2015}, got.YearRange, "an answer of one's own is read for years")

	got, err = research.ApplyAnswers(in, qs, nil)
	require.NoError(t, err)
	require.Equal(t, in, got, "no answers change nothing")

	_, err = research.ApplyAnswers(in, qs, research.ClarifyAnswers{"acronym-cbt": "Cognitive bias training", "nope": "x"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["answers.acronym-cbt"], `"Cognitive bias training" is not one of`)
	require.Equal(t, "no such question was asked", fault.ErrorFields(err)["answers.nope"])

	_, err = research.ApplyAnswers(in, qs, research.ClarifyAnswers{"time_frame": "recent ones"})
	require.Contains(t, fault.ErrorFields(err)["answers.time_frame"], "names no year")
}

func TestValidateQuestions(t *testing.T) {
	t.Parallel()
	opt := func(l string) research.ClarifyOption { return research.ClarifyOption{Label: l} }
	tests := []struct {
		name      string
		edit      func([]research.ClarifyingQuestion) []research.ClarifyingQuestion
		wantField string
	}{
		{"OK", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion { return q }, ""},
		{"None", func([]research.ClarifyingQuestion) []research.ClarifyingQuestion { return nil }, ""},
		{"FourQuestions", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion {
			x := q[1]
			x.ID = "other"
			return append(q, x)
		}, "questions"},
		{"OneOption", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion {
			q[1].Options = q[1].Options[:1]
			return q
		}, "questions[1].options"},
		{"FourOptions", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion {
			q[1].Options = []research.ClarifyOption{opt("a"), opt("b"), opt("c"), opt("d")}
			return q
		}, "questions[1].options"},
		{"SameLabel", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion {
			q[1].Options = []research.ClarifyOption{opt("a"), opt("A ")}
			return q
		}, "questions[1].options[1].label"},
		{"UnknownKind", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion { q[0].Kind = "mood"; return q }, "questions[0].kind"},
		{"AcronymWithoutTerm", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion { q[0].Term = ""; return q }, "questions[0].term"},
		{"SameID", func(q []research.ClarifyingQuestion) []research.ClarifyingQuestion { q[2].ID = q[1].ID; return q }, "questions[2].id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, fresh := clarifyFixture()
			err := research.ValidateQuestions(tt.edit(fresh))
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			require.Contains(t, fault.ErrorFields(err), tt.wantField)
		})
	}
}
