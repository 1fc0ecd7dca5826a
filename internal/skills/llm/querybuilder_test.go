package llm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/query"
	"quarry/internal/skills/querybuilder"
)

var querySources = []string{query.OpenAlex, query.PubMed, query.Arxiv, query.Local}

func queryInput(t *testing.T) skills.QueryInput {
	t.Helper()
	in, err := offlineIntent(t).ParseIntent(context.Background(), question)
	require.NoError(t, err)
	return skills.QueryInput{Intent: in, Sources: querySources, MaxResultsPerSource: 30}
}

// wantQueries is what the wrapper must make of the model's raw texts:
// canonical text, rendered for each source, duplicates removed.
func wantQueries(t *testing.T, raw ...string) []research.Query {
	t.Helper()
	var out []research.Query
	for _, r := range raw {
		a, err := query.Parse(r)
		require.NoError(t, err)
		out = append(out, research.Query{Text: a.String(), PerSource: query.RenderAll(a, querySources)})
	}
	return out
}

func TestQueryBuilder(t *testing.T) {
	t.Parallel()
	// query_valid.json's second query leaves out the intent's exclusion
	// "adults": the builder negates it in every query all the same.
	validQs := []string{"mindfulness (adolescents OR teenagers) anxiety -adults", `(meditation OR mindfulness) youth "anxiety disorders" -adults`}
	otherQs := []string{`"mindfulness-based intervention" (adolescents OR youth) anxiety NOT adults`}
	tests := []struct {
		name         string
		steps        []step
		previous     []string // answers whose strategies were searched before
		wantQs       []string // nil: the offline builder's strategy
		wantRequests int
		wantRetryErr string
		wantNote     string
	}{
		{name: "Valid", steps: []step{answer("query_valid.json")}, wantQs: validQs, wantRequests: 1},
		{name: "BadSyntaxThenValid", steps: []step{answer("query_bad_syntax.json"), answer("query_valid.json")}, wantQs: validQs, wantRequests: 2,
			wantRetryErr: "queries[0]"},
		{name: "RepeatThenNew", previous: validQs, steps: []step{answer("query_valid.json"), answer("query_other.json")}, wantQs: otherQs, wantRequests: 2,
			wantRetryErr: "already searched in iteration 1"},
		{name: "RepeatTwice", previous: validQs, steps: []step{answer("query_valid.json")}, wantRequests: 2,
			wantRetryErr: "already searched in iteration 1", wantNote: "rejected twice"},
		{name: "NotJSONTwice", steps: []step{answer("not_json.txt")}, wantRequests: 2, wantRetryErr: "no JSON object", wantNote: "rejected twice"},
		{name: "HTTP500", steps: []step{failWith(500)}, wantRequests: 1, wantNote: "500"},
	}
	for _, kind := range kinds {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				in := queryInput(t)
				if tt.previous != nil {
					prev := research.SearchStrategy{Queries: wantQueries(t, tt.previous...), Sources: querySources, YearRange: in.Intent.YearRange,
						MaxResultsPerSource: 30, Filters: research.Filters{ExcludeTerms: in.Intent.ExcludeTerms, FieldsOfStudy: in.FieldsOfStudy, StudyTypes: in.Intent.StudyTypes}}
					require.NoError(t, prev.Validate())
					in.Previous = []research.SearchStrategy{prev}
				}
				f := newFake(t, kind, tt.steps...)
				var n notes
				got, err := llm.NewQueryBuilder(f.provider(), querybuilder.New()).BuildStrategy(n.ctx(), in)
				require.NoError(t, err)
				require.NoError(t, got.ValidateSources(querySources))
				for _, p := range in.Previous {
					require.NotEqual(t, p.Queries, got.Queries, "must never repeat an earlier strategy")
				}
				if tt.wantQs != nil {
					require.Equal(t, wantQueries(t, tt.wantQs...), got.Queries)
					require.Equal(t, querySources, got.Sources)
					require.Equal(t, 30, got.MaxResultsPerSource)
					require.Equal(t, in.Intent.YearRange, got.YearRange)
					require.Equal(t, in.Intent.ExcludeTerms, got.Filters.ExcludeTerms)
				} else {
					off, err := querybuilder.New().BuildStrategy(context.Background(), in)
					require.NoError(t, err)
					require.Equal(t, off, got)
				}

				prompts := f.prompts()
				require.Len(t, prompts, tt.wantRequests)
				require.Contains(t, prompts[0], "Topic: "+in.Intent.Topic)
				if tt.previous != nil {
					require.Contains(t, prompts[0], "Iteration 1 searched:")
					require.Contains(t, prompts[0], wantQueries(t, tt.previous[0])[0].Text)
				}
				if tt.wantRetryErr != "" {
					require.Contains(t, prompts[1], "Validation error")
					require.Contains(t, prompts[1], tt.wantRetryErr)
				}
				if tt.wantNote == "" {
					require.Empty(t, n.all())
					return
				}
				ns := n.all()
				require.Len(t, ns, 1)
				require.Equal(t, llm.SkillQueryBuilder, ns[0].Skill)
				require.Contains(t, ns[0].Message, tt.wantNote)
			})
		}
	}
}

func TestQueryBuilderPromptCarriesFeedback(t *testing.T) {
	t.Parallel()
	in := queryInput(t)
	in.Feedback = []research.UserFeedback{{
		MarkedRelevant:   []string{"p1"},
		MarkedIrrelevant: []string{"p2"},
		FreeTextFeedback: "more on school-based programmes",
		AddTerms:         []string{"school"},
	}}
	in.RemovedLearnedTerms = []string{"yoga"}
	in.Marked = []research.ScoredPaper{
		{RawPaper: research.RawPaper{ID: "p1", Title: "Mindfulness in schools: a cluster RCT"}},
		{RawPaper: research.RawPaper{ID: "p2", Title: "Yoga for older adults"}},
	}
	f := newFake(t, llm.ProviderOpenAI, answer("query_valid.json"))
	got, err := llm.NewQueryBuilder(f.provider(), querybuilder.New()).BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.Contains(t, got.Filters.IncludeTerms, "school", "an added term becomes an include filter, as offline")
	p := f.prompts()[0]
	for _, s := range []string{"more on school-based programmes", "Add terms: school", "marked relevant:\n  Mindfulness in schools: a cluster RCT", "marked irrelevant:\n  Yoga for older adults",
		"removed these exclusions; do not exclude them: yoga"} {
		require.Contains(t, p, s)
	}
}

func TestQueryBuilderBadInputIsFallbacksError(t *testing.T) {
	t.Parallel()
	in := queryInput(t)
	in.Sources = nil
	f := newFake(t, llm.ProviderOpenAI, answer("query_valid.json"))
	var n notes
	_, err := llm.NewQueryBuilder(f.provider(), querybuilder.New()).BuildStrategy(n.ctx(), in)
	_, offErr := querybuilder.New().BuildStrategy(context.Background(), in)
	require.Error(t, offErr)
	require.Equal(t, offErr, err)
	require.Empty(t, f.requests())
	require.Empty(t, n.all())

	off := querybuilder.New()
	require.Same(t, off, llm.NewQueryBuilder(nil, off))
}

// TestQueryBuilderKeepsFiltersWithinTheLimits: include and exclude terms
// of several reviews add up past MaxFilterTerms, and the question's terms,
// fields of study and study types are not bounded; the strategy keeps the
// first within each limit and is still the model's. Before, its base
// strategy was invalid and every such build fell back to the offline
// builder.
func TestQueryBuilderKeepsFiltersWithinTheLimits(t *testing.T) {
	t.Parallel()
	in := queryInput(t)
	var add, excl []string
	for r := range 3 {
		f := research.UserFeedback{}
		for i := range research.MaxFeedbackTerms {
			f.AddTerms = append(f.AddTerms, fmt.Sprintf("added%d x%d", r, i))
			f.ExcludeTerms = append(f.ExcludeTerms, fmt.Sprintf("excluded%d x%d", r, i))
		}
		add, excl = append(add, f.AddTerms...), append(excl, f.ExcludeTerms...)
		in.Feedback = append(in.Feedback, f)
	}
	in.Intent.IncludeTerms = append(in.Intent.IncludeTerms, strings.Repeat("x", research.MaxTermLength+1))
	in.Intent.StudyTypes = make([]string, research.MaxStudyTypes+1)
	in.FieldsOfStudy = make([]string, research.MaxFieldsOfStudy+1)
	for i := range in.FieldsOfStudy {
		in.FieldsOfStudy[i] = fmt.Sprintf("field %d", i)
		if i < len(in.Intent.StudyTypes) {
			in.Intent.StudyTypes[i] = fmt.Sprintf("study type %d", i)
		}
	}
	f := newFake(t, kinds[0], answer("query_valid.json"))
	var n notes
	got, err := llm.NewQueryBuilder(f.provider(), querybuilder.New()).BuildStrategy(n.ctx(), in)
	require.NoError(t, err)
	require.Len(t, f.prompts(), 1, "the model was asked")
	require.Empty(t, n.all(), "and its strategy kept, no fallback")
	require.NoError(t, got.ValidateSources(querySources))
	require.Equal(t, add[:research.MaxFilterTerms], got.Filters.IncludeTerms)
	require.Len(t, got.Filters.ExcludeTerms, research.MaxFilterTerms)
	require.Equal(t, in.Intent.ExcludeTerms, got.Filters.ExcludeTerms[:len(in.Intent.ExcludeTerms)], "the question's exclusions first")
	require.Equal(t, excl[0], got.Filters.ExcludeTerms[len(in.Intent.ExcludeTerms)])
	require.Equal(t, in.FieldsOfStudy[:research.MaxFieldsOfStudy], got.Filters.FieldsOfStudy)
	require.Equal(t, in.Intent.StudyTypes[:research.MaxStudyTypes], got.Filters.StudyTypes)
}
