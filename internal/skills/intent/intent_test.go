package intent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/intent"
)

// june2025 is the fixed clock relative years are read against.
func june2025() time.Time { return time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC) }

func conceptTerms(in research.ParsedIntent) []string {
	var out []string
	for _, c := range in.Concepts {
		out = append(out, c.Term)
	}
	return out
}

func synonymsOf(in research.ParsedIntent, term string) []string {
	for _, c := range in.Concepts {
		if c.Term == term {
			return c.Synonyms
		}
	}
	return nil
}

func TestParseIntentQuestions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		question     string
		concepts     []string // must be present (order is by rank, not tested)
		absent       []string // must not be concepts
		years        research.YearRange
		exclude      []string
		studyTypes   []string
		firstField   string
		synonymsFor  string
		wantSynonyms []string
	}{
		{
			name:     "MedicineACEInhibitors",
			question: "What is the effect of ACE inhibitors on mortality in elderly patients with heart failure since 2018?",
			concepts: []string{"ace inhibitors", "heart failure"}, absent: []string{"patients", "effect", "2018"},
			years: research.YearRange{From: 2018}, firstField: "Medicine",
			synonymsFor: "elderly", wantSynonyms: []string{"older adults", "older people", "geriatric"},
		},
		{
			name:     "MedicineSepsisDeepLearning",
			question: "Deep learning for sepsis prediction in the ICU, excluding animal studies, 2015–2020",
			concepts: []string{"deep learning", "sepsis", "icu"}, absent: []string{"animal studies", "2015"},
			years: research.YearRange{From: 2015, To: 2020}, exclude: []string{"animal studies"}, firstField: "Medicine",
			synonymsFor: "icu", wantSynonyms: []string{"intensive care unit", "critical care"},
		},
		{
			name:     "MedicineRCTNotInChildren",
			question: "RCTs of mindfulness-based interventions for anxiety in adolescents, not in children",
			concepts: []string{"mindfulness-based interventions", "anxiety", "adolescents"}, absent: []string{"children", "rcts"},
			exclude: []string{"children"}, studyTypes: []string{"randomized controlled trial"}, firstField: "Psychology",
		},
		{
			name:     "MedicineHeartAttackPlural",
			question: "Do statins reduce heart attacks in women? Meta-analysis of cohort studies before 2010",
			concepts: []string{"statins", "heart attacks", "women"},
			years:    research.YearRange{To: 2009}, studyTypes: []string{"meta-analysis", "cohort study"}, firstField: "Medicine",
			synonymsFor: "heart attacks", wantSynonyms: []string{"myocardial infarction", "acute myocardial infarction"},
		},
		{
			name:     "MedicineCovidQuoted",
			question: `Long-term "quality of life" after COVID-19 hospitalisation in the last 3 years`,
			concepts: []string{"quality of life", "covid-19"},
			years:    research.YearRange{From: 2022, To: 2025}, firstField: "Medicine",
			synonymsFor: "covid-19", wantSynonyms: []string{"sars-cov-2", "coronavirus disease 2019", "covid"},
		},
		{
			name:     "CSLLMCodeReview",
			question: "large language models for code review published after 2021",
			concepts: []string{"large language models", "code review"},
			years:    research.YearRange{From: 2022}, firstField: "Computer Science",
			synonymsFor: "large language models", wantSynonyms: []string{"llm", "foundation model"},
		},
		{
			name:     "CSBenchmarksWithout",
			question: "machine learning benchmarks for tabular data without deep learning",
			concepts: []string{"machine learning", "tabular data"}, absent: []string{"deep learning", "benchmarks"},
			exclude: []string{"deep learning"}, studyTypes: []string{"benchmark"}, firstField: "Computer Science",
		},
		{
			name:     "CSFederatedBetween",
			question: "Federated learning privacy attacks between 2019 and 2023 except surveys",
			concepts: []string{"federated learning", "privacy attacks"},
			years:    research.YearRange{From: 2019, To: 2023}, exclude: []string{"surveys"}, firstField: "Computer Science",
		},
		{
			name:     "CSDecade",
			question: "How has technical debt in open source software been measured in the 2010s?",
			concepts: []string{"technical debt", "open source software"},
			years:    research.YearRange{From: 2010, To: 2019}, firstField: "Computer Science",
		},
		{
			name:     "SocialMinimumWage",
			question: "impact of minimum wage increases on unemployment between 2000 and 2010",
			concepts: []string{"minimum wage", "unemployment"}, absent: []string{"impact", "increases"},
			years: research.YearRange{From: 2000, To: 2010}, firstField: "Economics",
		},
		{
			name:     "SocialRemoteWork",
			question: "Does remote work affect employee productivity? Systematic reviews from the past decade",
			concepts: []string{"remote work", "employee productivity"},
			years:    research.YearRange{From: 2015, To: 2025}, studyTypes: []string{"systematic review"}, firstField: "Business",
			synonymsFor: "remote work", wantSynonyms: []string{"telework", "working from home", "telecommuting"},
		},
		{
			name:     "SocialBullyingQualitative",
			question: "Qualitative interviews on cyberbullying among teenagers in 2019",
			concepts: []string{"cyberbullying", "teenagers"},
			years:    research.YearRange{From: 2019, To: 2019}, studyTypes: []string{"qualitative study"},
		},
		{
			name:     "EducationOnline",
			question: "Effectiveness of online learning for university students, other than MOOCs, since 2020",
			concepts: []string{"online learning", "university", "students"},
			years:    research.YearRange{From: 2020}, exclude: []string{"moocs"}, firstField: "Education",
		},
		{
			name:       "EnvironmentClimate",
			question:   "climate change effects on crop yields in sub-saharan africa, case-control or cross-sectional",
			concepts:   []string{"climate change", "crop yields", "sub-saharan africa"},
			studyTypes: []string{"case-control study", "cross-sectional study"}, firstField: "Environmental Science",
		},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := p.ParseIntent(context.Background(), tt.question)
			require.NoError(t, err)
			require.NoError(t, got.Validate())
			require.Equal(t, strings.TrimRight(tt.question, "?"), got.Topic)
			terms := conceptTerms(got)
			for _, c := range tt.concepts {
				require.Contains(t, terms, c)
			}
			for _, c := range tt.absent {
				require.NotContains(t, terms, c)
			}
			require.LessOrEqual(t, len(terms), 6)
			require.Equal(t, tt.years, got.YearRange)
			require.Equal(t, tt.exclude, got.ExcludeTerms)
			require.Equal(t, tt.studyTypes, got.StudyTypes)
			if tt.firstField != "" {
				require.NotEmpty(t, got.FieldsOfStudy)
				require.Equal(t, tt.firstField, got.FieldsOfStudy[0])
			}
			if tt.synonymsFor != "" {
				require.Equal(t, tt.wantSynonyms, synonymsOf(got, tt.synonymsFor))
			}
		})
	}
}

func TestParseIntentYearRanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		phrase string
		want   research.YearRange
	}{
		{"since 2018", research.YearRange{From: 2018}},
		{"from 2018", research.YearRange{From: 2018}},
		{"after 2015", research.YearRange{From: 2016}},
		{"published after 2015", research.YearRange{From: 2016}},
		{"before 2010", research.YearRange{To: 2009}},
		{"prior to 2010", research.YearRange{To: 2009}},
		{"until 2012", research.YearRange{To: 2012}},
		{"2015–2020", research.YearRange{From: 2015, To: 2020}},
		{"2015-2020", research.YearRange{From: 2015, To: 2020}},
		{"2015 - 2020", research.YearRange{From: 2015, To: 2020}},
		{"from 2015 to 2020", research.YearRange{From: 2015, To: 2020}},
		{"between 2015 and 2020", research.YearRange{From: 2015, To: 2020}},
		{"between 2020 and 2015", research.YearRange{From: 2015, To: 2020}},
		{"in 2019", research.YearRange{From: 2019, To: 2019}},
		{"in the last 5 years", research.YearRange{From: 2020, To: 2025}},
		{"over the past five years", research.YearRange{From: 2020, To: 2025}},
		{"in the last decade", research.YearRange{From: 2015, To: 2025}},
		{"in the past year", research.YearRange{From: 2024, To: 2025}},
		{"in the 1990s", research.YearRange{From: 1990, To: 1999}},
		{"since 2015 and before 2020", research.YearRange{From: 2015, To: 2019}},
		{"", research.YearRange{}},
		{"with 2000 participants", research.YearRange{}},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		t.Run(tt.phrase, func(t *testing.T) {
			t.Parallel()
			got, err := p.ParseIntent(context.Background(), "sepsis mortality "+tt.phrase)
			require.NoError(t, err)
			require.Equal(t, tt.want, got.YearRange)
			require.Equal(t, []string{"sepsis", "mortality"}, conceptTerms(got)[:2])
			for _, c := range conceptTerms(got) {
				require.NotRegexp(t, `\d`, c, "a year or number must not become part of a concept")
			}
		})
	}
}

func TestParseIntentClockIsInjected(t *testing.T) {
	t.Parallel()
	p := intent.New(func() time.Time { return time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC) })
	got, err := p.ParseIntent(context.Background(), "battery recycling in the last 2 years")
	require.NoError(t, err)
	require.Equal(t, research.YearRange{From: 2029, To: 2031}, got.YearRange)
}

func TestParseIntentExclusions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		want     []string
	}{
		{"sepsis not in children", []string{"children"}},
		{"sepsis excluding animal studies", []string{"animal studies"}},
		{"sepsis excluding studies in animals", []string{"animals"}},
		// A word that only frames a question elsewhere ("reviews") is what
		// to leave out when nothing else follows the cue.
		{"machine learning, excluding reviews", []string{"reviews"}},
		{"machine learning except reviews and editorials", []string{"reviews", "editorials"}},
		{"machine learning, not reviews", []string{"reviews"}},
		{"machine learning excluding studies", nil},
		{"obesity interventions without surgery", []string{"surgery"}},
		{"obesity interventions except bariatric surgery, in adults", []string{"bariatric surgery"}},
		{"vaccination hesitancy excluding covid-19 and not among health workers", []string{"covid-19", "health workers"}},
		{"sepsis biomarkers", nil},
		{`large language models for code generation without "prompt engineering" published after 2020`, []string{"prompt engineering"}},
		{`sleep and memory excluding "rodent studies"`, []string{"rodent studies"}},
		{`transformers not "recurrent networks"`, []string{"recurrent networks"}},
		{"transformers not RNN", []string{"rnn"}},
		{"effects of exercise on mood, not anxiety", []string{"anxiety"}},
		{"why do patients not adhere to medication", nil},
		{"exercise improves not only mood but sleep", nil},
		{"sleep not  , memory", nil},
		// Every phrase of a list after a cue is left out, not just the
		// first: "or children" must not become a required concept.
		{"mindfulness for anxiety but not in adolescents or children", []string{"adolescents", "children"}},
		{"exercise for depression, not in children or adolescents", []string{"children", "adolescents"}},
		{"sepsis excluding children and adolescents", []string{"children", "adolescents"}},
		{"sepsis excluding children, adolescents", []string{"children", "adolescents"}},
		{"sepsis excluding children, adolescents, or infants", []string{"children", "adolescents", "infants"}},
		{"sepsis, not in children nor adolescents", []string{"children", "adolescents"}},
		{"transformers not RNNs or LSTMs", []string{"rnns", "lstms"}},
		{"effects of exercise on mood, not anxiety, not sleep", []string{"anxiety", "sleep"}},
		// What follows a list's joiner or comma stays in the question when it
		// starts a new clause rather than naming one more thing to leave out.
		{"deep learning without labels and its use in medicine", []string{"labels"}},
		{"sepsis excluding children, mortality in adults", []string{"children"}},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			t.Parallel()
			got, err := p.ParseIntent(context.Background(), tt.question)
			require.NoError(t, err)
			require.Equal(t, tt.want, got.ExcludeTerms)
			for _, e := range tt.want {
				require.NotContains(t, conceptTerms(got), e)
				require.NotContains(t, got.IncludeTerms, e, "an excluded phrase is not required")
			}
		})
	}
}

func TestParseIntentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		question string
	}{
		{"Empty", ""},
		{"Blank", "  ?  "},
		{"OnlyFiller", "What is the evidence?"},
		{"OnlyYears", "since 2018"},
		{"TooLong", strings.Repeat("sepsis ", 400)},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := p.ParseIntent(context.Background(), tt.question)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.ParseIntent(ctx, "sepsis")
	require.ErrorIs(t, err, context.Canceled)
}

func TestSynonymTable(t *testing.T) {
	t.Parallel()
	table := intent.SynonymTable()
	require.GreaterOrEqual(t, len(table), 40)
	p := intent.New(june2025)
	// Lookups work from any member of a group, in any case.
	require.Equal(t, []string{"machine learning", "statistical learning"}, p.SynonymsOf("ML"))
	require.Contains(t, p.SynonymsOf("pediatric"), "children")
	require.Contains(t, p.SynonymsOf("randomised controlled trial"), "rct")
	require.Nil(t, p.SynonymsOf("zebrafish"))
	table["machine learning"] = nil
	require.NotEmpty(t, intent.SynonymTable()["machine learning"], "the table is a fresh map each call")
}

// Whatever the question, the parser either returns an intent that
// validates or an EInvalid error, and never panics.
func TestParseIntentProperty(t *testing.T) {
	t.Parallel()
	p := intent.New(june2025)
	words := []string{"sepsis", "children", "not", "in", "since", "2018", "excluding", "the", "of", "RCT", "deep", "learning", "between", "and", "2030", "\"", "last", "5", "years", ",", "?", "without", "machine", "meta-analysis", "1999s", "–"}
	rapid.Check(t, func(t *rapid.T) {
		q := strings.Join(rapid.SliceOfN(rapid.SampledFrom(words), 0, 15).Draw(t, "words"), " ")
		got, err := p.ParseIntent(context.Background(), q)
		if err != nil {
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), q)
			return
		}
		require.NoError(t, got.Validate(), q)
		require.NotEmpty(t, got.Concepts, q)
		again, err := p.ParseIntent(context.Background(), q)
		require.NoError(t, err)
		require.Equal(t, got, again, "deterministic")
	})
}

// TestParseIntentFieldGuesses checks the guessed fields of study on words
// that several fields use: alone such a word ("cell", "stress") names no
// field, a word that belongs to one field does, and two shared words of
// the same field together do.
func TestParseIntentFieldGuesses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		want     []string
	}{
		{"solar cell efficiency", []string{"Engineering"}},
		{"stress corrosion cracking in pipelines", []string{"Engineering", "Materials Science"}},
		{"cell migration", nil},
		{"labour migration and wages", []string{"Economics"}},
		{"cell biology of species evolution", []string{"Biology"}},
		{"exercise and depression", []string{"Psychology"}},
		{"stress and emotion regulation at work", []string{"Psychology"}},
		{"software evolution", []string{"Computer Science"}},
		{"heart failure in patients", []string{"Medicine"}},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		got, err := p.ParseIntent(context.Background(), tt.question)
		require.NoError(t, err)
		require.Equal(t, tt.want, got.FieldsOfStudy, tt.question)
	}
}

// TestParseIntentExclusionListKeepsTheRest checks that cutting a list of
// excluded phrases leaves the question's own concepts, and the words after
// the list, in place.
func TestParseIntentExclusionListKeepsTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		concepts []string
	}{
		{"mindfulness for anxiety but not in adolescents or children", []string{"mindfulness", "anxiety"}},
		{"exercise for depression, not in children or adolescents", []string{"exercise", "depression"}},
		{"deep learning without labels and its use in medicine", []string{"deep learning", "medicine"}},
		{"sepsis excluding children, mortality in adults", []string{"sepsis", "mortality", "adults"}},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		got, err := p.ParseIntent(context.Background(), tt.question)
		require.NoError(t, err)
		require.ElementsMatch(t, tt.concepts, conceptTerms(got), tt.question)
	}
}
