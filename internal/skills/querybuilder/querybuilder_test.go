package querybuilder_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/query"
	"quarry/internal/skills/querybuilder"
)

func sepsisIntent() research.ParsedIntent {
	return research.ParsedIntent{
		Topic: "deep learning for sepsis prediction in the ICU, not in children, since 2018",
		Concepts: []research.Concept{
			{Term: "deep learning", Synonyms: []string{"neural network"}},
			{Term: "sepsis", Synonyms: []string{"septic shock"}},
			{Term: "icu"},
		},
		YearRange:     research.YearRange{From: 2018},
		ExcludeTerms:  []string{"children"},
		FieldsOfStudy: []string{"Medicine"},
	}
}

func texts(s research.SearchStrategy) []string {
	var out []string
	for _, q := range s.Queries {
		out = append(out, q.Text)
	}
	return out
}

// TestBuildStrategyFieldsOfStudy: the fields a strategy restricts the
// search to come from the input (a strategy the researcher confirmed),
// never from the intent's guess.
func TestBuildStrategyFieldsOfStudy(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.SemanticScholar}}
	got, err := b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.Empty(t, got.Filters.FieldsOfStudy)
	in.FieldsOfStudy = []string{"Computer Science"}
	got, err = b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, []string{"Computer Science"}, got.Filters.FieldsOfStudy)
}

func TestBuildStrategyFirstIteration(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local, query.PubMed, " ", query.Local}}
	got, err := b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.NoError(t, got.ValidateSources(query.Sources()))
	require.Equal(t, []string{
		`("deep learning" OR "neural network") (sepsis OR "septic shock") (icu OR "intensive care unit" OR "critical care") -(children OR paediatric OR pediatric OR child OR childhood)`,
		`("deep learning" OR "neural network") (sepsis OR "septic shock") -(children OR paediatric OR pediatric OR child OR childhood)`,
	}, texts(got), "a focused query with every concept and a broad one with the top two; the exclusion takes its synonyms")
	require.Equal(t, []string{query.Local, query.PubMed}, got.Sources, "sources trimmed and de-duplicated in order")
	require.Equal(t, research.YearRange{From: 2018}, got.YearRange)
	require.Equal(t, research.DefaultMaxResultsPerSource, got.MaxResultsPerSource)
	require.Equal(t, []string{"children"}, got.Filters.ExcludeTerms)
	require.Empty(t, got.Filters.FieldsOfStudy, "the intent's guessed fields never filter by themselves")
	require.Equal(t,
		`("deep learning"[tiab] OR "neural network"[tiab]) AND (sepsis[tiab] OR "septic shock"[tiab]) NOT children[tiab] NOT paediatric[tiab] NOT pediatric[tiab] NOT child[tiab] NOT childhood[tiab]`,
		got.Queries[1].PerSource[query.PubMed])
	for _, q := range got.Queries {
		ast, err := query.Parse(q.Text)
		require.NoError(t, err)
		require.Equal(t, q.Text, ast.String(), "Text is canonical")
		require.Equal(t, query.RenderAll(ast, got.Sources), q.PerSource)
	}
}

func TestBuildStrategyStudyTypesOnlyInFocused(t *testing.T) {
	t.Parallel()
	in := skills.QueryInput{Intent: research.ParsedIntent{
		Topic:      "statins and stroke, RCTs",
		Concepts:   []research.Concept{{Term: "statins"}, {Term: "stroke"}},
		StudyTypes: []string{"randomized controlled trial"},
	}, Sources: []string{query.OpenAlex}, MaxResultsPerSource: 50}
	got, err := querybuilder.New().BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, []string{
		`(statins OR statin OR "hmg-coa reductase inhibitors") (stroke OR "cerebrovascular accident") ("randomized controlled trial" OR rct OR "randomised controlled trial" OR "randomized clinical trial")`,
		`(statins OR statin OR "hmg-coa reductase inhibitors") (stroke OR "cerebrovascular accident")`,
	}, texts(got))
	require.Equal(t, 50, got.MaxResultsPerSource)
}

func TestBuildStrategyErrors(t *testing.T) {
	t.Parallel()
	ok := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}}
	tests := []struct {
		name string
		edit func(*skills.QueryInput)
	}{
		{"NoTopic", func(in *skills.QueryInput) { in.Intent.Topic = "" }},
		{"NoConcepts", func(in *skills.QueryInput) { in.Intent.Concepts = nil }},
		{"NoSources", func(in *skills.QueryInput) { in.Sources = []string{" "} }},
		{"NegativeMax", func(in *skills.QueryInput) { in.MaxResultsPerSource = -1 }},
		{"MaxTooLarge", func(in *skills.QueryInput) { in.MaxResultsPerSource = research.MaxResultsLimit + 1 }},
		{"BadFeedback", func(in *skills.QueryInput) {
			in.Feedback = []research.UserFeedback{{MarkedRelevant: []string{"a"}, MarkedIrrelevant: []string{"a"}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := ok
			in.Intent = sepsisIntent()
			tt.edit(&in)
			_, err := querybuilder.New().BuildStrategy(context.Background(), in)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
		})
	}
}

func paper(id, title, abstract string) research.ScoredPaper {
	return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: title, Abstract: abstract, Source: query.Local}, Score: 0.5}
}

func TestBuildStrategyRelevanceFeedback(t *testing.T) {
	t.Parallel()
	marked := []research.ScoredPaper{
		paper("r1", "Early sepsis detection with recurrent neural networks", "We train a recurrent model on vital signs and lactate to detect sepsis early in the ICU."),
		paper("r2", "Recurrent deep learning on vital signs predicts septic shock", "Vital signs and lactate feed a recurrent network; early warning improves."),
		paper("r3", "Sepsis in the ICU: a recurrent approach", "Vital signs time series."),
		paper("x1", "Sepsis in mice: a deep learning study of cytokine storms", "Mouse models and cytokine profiles; cytokine storms in mice."),
		paper("x2", "Cytokine profiles of septic mice", "Cytokine release in mice after infection."),
		paper("x3", "Cytokine storms in mice with septic shock", "Mice given endotoxin show cytokine storms."),
	}
	in := skills.QueryInput{
		Intent:     sepsisIntent(),
		Sources:    []string{query.Local, query.Crossref},
		Marked:     marked,
		Collection: wards,
		Feedback: []research.UserFeedback{{
			MarkedRelevant:   []string{"r1", "r2", "r3"},
			MarkedIrrelevant: []string{"x1", "x2", "x3"},
			AddTerms:         []string{"early warning"},
			ExcludeTerms:     []string{"case report"},
			FreeTextFeedback: "More about lactate monitoring, please. Exclude pneumonia; these are not relevant.",
		}},
	}
	first, err := querybuilder.New().BuildStrategy(context.Background(), skills.QueryInput{Intent: sepsisIntent(), Sources: in.Sources})
	require.NoError(t, err)
	in.Previous = []research.SearchStrategy{first}

	got, err := querybuilder.New().BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.NoError(t, got.Validate())
	require.Len(t, got.Queries, 3)
	focused, expansion := got.Queries[0].Text, got.Queries[2].Text
	require.Contains(t, focused, `"early warning"`, "AddTerms are required in the focused query")
	require.NotContains(t, focused, "lactate", "free text 'more about X' is searched for, not required everywhere")
	for _, neg := range []string{`-"case report"`, `-pneumonia`, `-cytokine`, `-mice`, `-(children`} {
		require.Contains(t, strings.Join(texts(got), "\n"), neg)
	}
	require.NotContains(t, focused, "relevant", "'not relevant' judges papers, it names no topic")
	require.Contains(t, expansion, `("lactate monitoring" OR recurrent OR signs OR vital)`, "the free text's wanted term, then words of every relevant paper")
	require.NotContains(t, expansion, "sepsis OR", "terms already in the strategy are not added again")
	require.Equal(t, []string{"children", "case report", "pneumonia", "cytokine", "mice"}, got.Filters.ExcludeTerms)
	require.Equal(t, []string{"pneumonia", "cytokine", "mice"}, got.Filters.LearnedExcludeTerms, "read in the free text and learned from x1-x3, listed apart")
	require.Equal(t, []string{"early warning"}, got.Filters.IncludeTerms)
	require.Equal(t, []research.LearnedTerm{
		{Term: "pneumonia", Use: research.LearnedExclude, Feedback: in.Feedback[0].FreeTextFeedback},
		{Term: "cytokine", Use: research.LearnedExclude, Papers: []string{"x1", "x2", "x3"}},
		{Term: "mice", Use: research.LearnedExclude, Papers: []string{"x1", "x2", "x3"}},
		{Term: "lactate monitoring", Use: research.LearnedExpand, Feedback: in.Feedback[0].FreeTextFeedback},
		{Term: "recurrent", Use: research.LearnedExpand, Papers: []string{"r1", "r2", "r3"}},
		{Term: "signs", Use: research.LearnedExpand, Papers: []string{"r1", "r2", "r3"}},
		{Term: "vital", Use: research.LearnedExpand, Papers: []string{"r1", "r2", "r3"}},
	}, got.Filters.Learned, "each learned term says where it came from")
	require.NotContains(t, got.Queries[2].PerSource[query.Crossref], "cytokine", "crossref drops exclusions")
}

func TestBuildStrategyLaterMarkWins(t *testing.T) {
	t.Parallel()
	marked := []research.ScoredPaper{
		paper("a", "Lactate clearance in septic shock", "Lactate clearance guides resuscitation."),
		paper("b", "Lactate-guided therapy in sepsis", "Serial lactate clearance as a target."),
		paper("c", "Lactate clearance and mortality", "Lactate clearance predicted survival."),
	}
	in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}, Marked: marked, Collection: wards,
		Feedback: []research.UserFeedback{{MarkedIrrelevant: []string{"a", "b", "c"}}, {MarkedRelevant: []string{"a", "b", "c"}}}}
	got, err := querybuilder.New().BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.NotContains(t, got.Filters.ExcludeTerms, "lactate")
	require.Contains(t, got.Queries[len(got.Queries)-1].Text, "lactate")
}

func TestBuildStrategyNeverRepeats(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	in := skills.QueryInput{Intent: research.ParsedIntent{Topic: "zebrafish", Concepts: []research.Concept{{Term: "zebrafish"}}}, Sources: []string{query.Arxiv}}
	seen := map[string]bool{}
	for i := 0; i < 60; i++ {
		got, err := b.BuildStrategy(context.Background(), in)
		require.NoError(t, err)
		require.NoError(t, got.Validate())
		key := fmt.Sprintf("%v|%d", texts(got), got.MaxResultsPerSource)
		require.False(t, seen[key], "iteration %d repeated %s", i, key)
		seen[key] = true
		in.Previous = append(in.Previous, got)
	}
	// The first repeat broadens by asking for more results, 25 at a time.
	require.Equal(t, 25, in.Previous[0].MaxResultsPerSource)
	require.Equal(t, 50, in.Previous[1].MaxResultsPerSource)
}

func TestBuildStrategyRepeatWithEditedSpacingIsStillARepeat(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}}
	first, err := b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	edited := first
	edited.Queries = nil
	for _, q := range first.Queries {
		edited.Queries = append(edited.Queries, research.Query{Text: strings.ReplaceAll(q.Text, " ", "   ")})
	}
	in.Previous = []research.SearchStrategy{edited}
	got, err := b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, len(first.Queries)+1, len(got.Queries), "broadened with the top concept alone")
	require.Equal(t, `("deep learning" OR "neural network") -(children OR paediatric OR pediatric OR child OR childhood)`, got.Queries[len(got.Queries)-1].Text)
}

func genIntent() *rapid.Generator[research.ParsedIntent] {
	vocab := []string{"sepsis", "deep learning", "children", "covid-19", "heart attack", "ml", "OR", "-x", `a"b`, "title:x", "zebrafish", "quality of life", "NOT", "(", "lactate"}
	return rapid.Custom(func(t *rapid.T) research.ParsedIntent {
		in := research.ParsedIntent{Topic: "topic"}
		for _, c := range rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 5).Draw(t, "concepts") {
			in.Concepts = append(in.Concepts, research.Concept{Term: c, Synonyms: rapid.SliceOfN(rapid.SampledFrom(vocab), 0, 3).Draw(t, "syn")})
		}
		in.ExcludeTerms = rapid.SliceOfN(rapid.SampledFrom(vocab), 0, 3).Draw(t, "excl")
		in.StudyTypes = rapid.SliceOfN(rapid.SampledFrom([]string{"randomized controlled trial", "survey", "benchmark"}), 0, 2).Draw(t, "studies")
		if rapid.Bool().Draw(t, "years") {
			from := rapid.IntRange(1990, 2025).Draw(t, "from")
			in.YearRange = research.YearRange{From: from, To: rapid.IntRange(from, 2030).Draw(t, "to")}
		}
		return in
	})
}

func TestBuildStrategyProperty(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	vocab := []string{"lactate", "vital signs", "mice", "cytokine", "recurrent", "sepsis", "children"}
	rapid.Check(t, func(t *rapid.T) {
		in := skills.QueryInput{
			Intent:              genIntent().Draw(t, "intent"),
			Sources:             rapid.SliceOfN(rapid.SampledFrom(append(query.Sources(), "future_source")), 1, research.MaxSources).Draw(t, "sources"), // 8 distinct names are over MaxSources
			MaxResultsPerSource: rapid.SampledFrom([]int{0, 1, 25, 999, 1000}).Draw(t, "max"),
		}
		var ids []string
		for i := 0; i < rapid.IntRange(0, 6).Draw(t, "papers"); i++ {
			words := rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 8).Draw(t, "words")
			id := fmt.Sprintf("p%d", i)
			ids = append(ids, id)
			in.Marked = append(in.Marked, paper(id, strings.Join(words[:1], " "), strings.Join(words, " ")))
		}
		iterations := rapid.IntRange(1, 6).Draw(t, "iterations")
		for it := 0; it < iterations; it++ {
			got, err := b.BuildStrategy(context.Background(), in)
			require.NoError(t, err)
			require.NoError(t, got.Validate())
			want := append([]string(nil), got.Sources...)
			sort.Strings(want)
			for _, q := range got.Queries {
				var keys []string
				for k := range q.PerSource {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				require.Equal(t, want, keys, "PerSource has exactly the strategy's sources")
				_, err := query.Parse(q.Text)
				require.NoError(t, err, q.Text)
			}
			for i, p := range in.Previous {
				require.NotEqual(t, fmt.Sprint(p.Queries, p.Sources, p.YearRange, p.MaxResultsPerSource, p.Filters),
					fmt.Sprint(got.Queries, got.Sources, got.YearRange, got.MaxResultsPerSource, got.Filters), "equals previous strategy %d", i)
			}
			again, err := b.BuildStrategy(context.Background(), in)
			require.NoError(t, err)
			require.Equal(t, got, again, "deterministic")
			in.Previous = append(in.Previous, got)
			if len(ids) > 0 && rapid.Bool().Draw(t, "feedback") {
				split := rapid.IntRange(0, len(ids)).Draw(t, "split")
				in.Feedback = append(in.Feedback, research.UserFeedback{
					MarkedRelevant: ids[:split], MarkedIrrelevant: ids[split:],
					FreeTextFeedback: rapid.SampledFrom([]string{"", "more about lactate", "exclude mice", "not relevant"}).Draw(t, "free"),
				})
			}
		}
	})
}

func TestBroadQueryLoosensALonePhrase(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	in := skills.QueryInput{
		Intent: research.ParsedIntent{Topic: "statins for cardiovascular prevention", Concepts: []research.Concept{
			{Term: "cardiovascular prevention"},
			{Term: "statins", Synonyms: []string{"statin"}},
		}},
		Sources: []string{"local"},
	}
	s, err := b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, s.Queries, 3, "a focused, a broad and an any-of query")
	require.Contains(t, s.Queries[0].Text, `"cardiovascular prevention"`, "focused keeps the phrase")
	require.NotContains(t, s.Queries[1].Text, `"cardiovascular prevention"`, "broad drops the adjacency")
	require.Contains(t, s.Queries[1].Text, "cardiovascular")
	require.Contains(t, s.Queries[1].Text, "prevention")
	require.Equal(t, "(cardiovascular OR prevention OR statins OR statin)", s.Queries[2].Text,
		"three required terms: the same terms OR-ed, ranked by the source")
}

// A question of plain words used to become one phrase query and one query
// requiring every word, so a library of Transformer papers answered
// "transformer language models pretraining" with nothing (they say
// "pre-training"). The any-of query finds them, ranked by how many words
// match; exclusions still apply to it.
func TestAnyOfQueryWhenBroadRequiresThreeTerms(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	s, err := b.BuildStrategy(context.Background(), skills.QueryInput{
		Intent: research.ParsedIntent{Topic: "transformer language models pretraining",
			Concepts:     []research.Concept{{Term: "transformer language models pretraining"}},
			ExcludeTerms: []string{"vision"}},
		Sources: []string{query.Local},
	})
	require.NoError(t, err)
	require.Equal(t, []string{
		`"transformer language models pretraining" -vision`,
		`transformer language models pretraining -vision`,
		`(transformer OR language OR models OR pretraining) -vision`,
	}, texts(s))
	require.Equal(t, `("transformer" OR "language" OR "models" OR "pretraining") NOT "vision"`, s.Queries[2].PerSource[query.Local])

	two, err := b.BuildStrategy(context.Background(), skills.QueryInput{
		Intent:  research.ParsedIntent{Topic: "sleep memory", Concepts: []research.Concept{{Term: "sleep"}, {Term: "memory"}}},
		Sources: []string{query.Local},
	})
	require.NoError(t, err)
	for _, q := range two.Queries {
		require.NotContains(t, q.Text, " OR ", "two required terms need no any-of query")
	}
}

// TestBuildStrategyStaysWithinTheLimits: whatever the input (many
// concepts with long terms and many synonyms, many include and exclude
// terms in the question and in every review, free text full of "exclude
// X", many fields of study and study types, terms longer than a strategy
// may hold), every strategy built passes
// research's validation, so the strategy checkpoint never refuses what
// the researcher did not write. Before, the include and exclude terms of
// several reviews added up past MaxFilterTerms and a query built from
// them past MaxQueryTerms.
func TestBuildStrategyStaysWithinTheLimits(t *testing.T) {
	t.Parallel()
	b := querybuilder.New()
	word := rapid.StringMatching(`[a-z]{3,9}`)
	// Terms the built-in synonym table knows bring up to five more terms each.
	known := rapid.SampledFrom([]string{"children", "cancer", "antibiotics", "vaccination", "covid-19", "telemedicine",
		"adolescents", "quality of life", "elderly", "sepsis", "remote work", "randomized controlled trial", "opioids"})
	phrase := rapid.OneOf(known, rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(word, 1, 4).Draw(t, "words"), " ")
	}))
	// The question's lists are not validated: a quoted phrase can be longer
	// than any term a strategy may hold.
	anyLength := rapid.OneOf(phrase, rapid.Custom(func(t *rapid.T) string {
		return strings.Repeat(word.Draw(t, "long"), research.MaxTermLength)[:rapid.IntRange(research.MaxTermLength-1, 3*research.MaxTermLength).Draw(t, "length")]
	}))
	// A concept's synonyms (a model's intent) may be longer still: six
	// of them in four concepts are then longer than a query may be.
	synonym := rapid.OneOf(anyLength, rapid.Custom(func(t *rapid.T) string {
		return strings.Repeat(word.Draw(t, "long"), research.MaxQueryLength/2)[:rapid.IntRange(research.MaxQueryLength/10, research.MaxQueryLength/3).Draw(t, "length")]
	}))
	rapid.Check(t, func(t *rapid.T) {
		in := skills.QueryInput{
			Intent: research.ParsedIntent{
				Topic:        strings.Join(rapid.SliceOfN(word, 1, 300).Draw(t, "topic"), " "),
				IncludeTerms: rapid.SliceOfN(anyLength, 0, 40).Draw(t, "include"),
				ExcludeTerms: rapid.SliceOfN(anyLength, 0, 40).Draw(t, "exclude"),
				StudyTypes:   rapid.SliceOfN(anyLength, 0, 3*research.MaxStudyTypes).Draw(t, "studies"),
			},
			Sources:       query.Sources(),
			FieldsOfStudy: rapid.SliceOfN(anyLength, 0, 2*research.MaxFieldsOfStudy).Draw(t, "fields"),
		}
		for range rapid.IntRange(1, 12).Draw(t, "concepts") {
			n := rapid.IntRange(1, 80).Draw(t, "term length") // loosened into n words
			term := strings.Join(rapid.SliceOfN(word, n, n).Draw(t, "term"), " ")
			in.Intent.Concepts = append(in.Intent.Concepts, research.Concept{Term: term, Synonyms: rapid.SliceOfN(synonym, 0, 10).Draw(t, "synonyms")})
		}
		for i := range rapid.IntRange(0, 6).Draw(t, "reviews") {
			var free strings.Builder
			for range rapid.IntRange(0, 200).Draw(t, "cues") {
				fmt.Fprintf(&free, "exclude %s, more about %s. ", anyLength.Draw(t, "less"), anyLength.Draw(t, "more"))
			}
			in.Feedback = append(in.Feedback, research.UserFeedback{
				AddTerms:         rapid.SliceOfN(phrase, research.MaxFeedbackTerms/2, research.MaxFeedbackTerms).Draw(t, "add"),
				ExcludeTerms:     rapid.SliceOfN(phrase, research.MaxFeedbackTerms/2, research.MaxFeedbackTerms).Draw(t, "excl"),
				FreeTextFeedback: free.String()[:min(free.Len(), 10000)],
			})
			require.NoError(t, in.Feedback[i].Validate())
		}
		got, err := b.BuildStrategy(context.Background(), in)
		require.NoError(t, err)
		require.NoError(t, got.ValidateSources(query.Sources()))
		for _, l := range got.Filters.LearnedExcludeTerms {
			require.Contains(t, got.Filters.ExcludeTerms, l, "a learned exclusion is one of the exclusions")
		}
	})
}

// TestQuestionWords: the strategy records the question's content words
// (stop words, numbers and single letters left out, each once, in order)
// for the library to rank by, at most research.MaxQuestionWords.
func TestQuestionWords(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"dialectical", "behaviour", "therapy", "adults", "borderline", "personality", "disorder", "rcts"},
		querybuilder.QuestionWords("Dialectical behaviour therapy for adults with borderline personality disorder: therapy in 2 of 3 RCTs? A"))
	long := strings.Repeat("word ", 10)
	for i := range 2 * research.MaxQuestionWords {
		long += fmt.Sprintf("w%dx ", i)
	}
	require.Len(t, querybuilder.QuestionWords(long), research.MaxQuestionWords)
}
