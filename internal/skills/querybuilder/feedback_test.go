package querybuilder_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/query"
	"quarry/internal/skills/querybuilder"
)

// nextInput is the input of the build after s, as the search pipeline
// makes it: s joins the previous strategies, its filters are carried into
// the intent (as pipeline.carryForward does: the researcher's exclusions,
// not the learned ones) and the review's feedback is appended.
func nextInput(in skills.QueryInput, s research.SearchStrategy, fb research.UserFeedback) skills.QueryInput {
	in.Previous = append(slices.Clone(in.Previous), s)
	in.Feedback = append(slices.Clone(in.Feedback), fb)
	in.Sources = slices.Clone(s.Sources)
	in.MaxResultsPerSource = s.MaxResultsPerSource
	in.Intent.IncludeTerms = slices.Clone(s.Filters.IncludeTerms)
	in.Intent.ExcludeTerms = s.Filters.ResearcherExcludeTerms()
	in.Intent.StudyTypes = slices.Clone(s.Filters.StudyTypes)
	return in
}

// iterate builds the first strategy of in and then one more per feedback,
// each from the input the pipeline would give it.
func iterate(t *testing.T, in skills.QueryInput, feedback ...research.UserFeedback) []research.SearchStrategy {
	t.Helper()
	b := querybuilder.New()
	s, err := b.BuildStrategy(context.Background(), in)
	require.NoError(t, err)
	out := []research.SearchStrategy{s}
	for _, fb := range feedback {
		in = nextInput(in, s, fb)
		s, err = b.BuildStrategy(context.Background(), in)
		require.NoError(t, err)
		require.NoError(t, s.Validate())
		out = append(out, s)
	}
	return out
}

// negated lists every term a strategy's queries exclude, lower-cased.
func negated(t *testing.T, s research.SearchStrategy) []string {
	t.Helper()
	var out []string
	for _, q := range s.Queries {
		ast, err := query.Parse(q.Text)
		require.NoError(t, err)
		for _, c := range ast.Clauses {
			if !c.Not {
				continue
			}
			for _, term := range c.Any {
				if w := strings.ToLower(term.Text); !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
		}
	}
	return out
}

var (
	flashAttention = paper("flash", "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
		"Observes that Transformer self-attention on GPUs is limited by memory traffic rather than arithmetic, and computes exact attention in tiles that stay in fast on-chip memory. This avoids materialising the full attention matrix, cutting memory from quadratic to linear in sequence length and speeding up training.")
	econometrics = paper("econ", "Robust standard errors for panel data regressions",
		"Computing standard errors that allow for serial correlation, rather than assuming independent observations, changes inference in difference-in-differences designs.")
	// walker is never marked: a relevant paper the feedback must not lose.
	walker = paper("walker", "Sleep-dependent memory consolidation",
		"Reviews evidence from behaviour, imaging and physiology that sleep after learning stabilises and enhances memory. It argues that sleep actively reorganises memories rather than merely protecting them from interference.")
	cryoSpike = paper("cryo", "Cryo-EM structure of the 2019-nCoV spike in the prefusion conformation",
		"Determines the structure of the SARS-CoV-2 spike protein, stabilised in its prefusion form, by cryo-electron microscopy, and shows it binds ACE2 more tightly than the SARS spike. The prefusion-stabilised spike design was used in several COVID-19 vaccines.")
	mice1 = paper("mice1", "Cytokine storms in septic mice: a murine endotoxin model",
		"Mice received endotoxin; cytokine storms and murine survival were recorded.")
	mice2 = paper("mice2", "Murine endotoxin shock: cytokine profiles of mice",
		"Endotoxin-treated mice show cytokine release within hours.")
	mice3 = paper("mice3", "Endotoxin tolerance and cytokine release in mice",
		"Repeated endotoxin doses blunt the cytokine response of murine macrophages.")
	// wards is the rest of what a sepsis or sleep search found, unmarked:
	// the background against which marked papers' words are distinctive.
	wards = []research.RawPaper{
		paper("w1", "Early antibiotics in septic shock", "Time to antibiotics and mortality in adult intensive care patients.").RawPaper,
		paper("w2", "Fluid resuscitation in sepsis", "Balanced crystalloids versus saline in emergency department sepsis.").RawPaper,
		paper("w3", "Sepsis screening tools in the ward", "qSOFA and NEWS compared for early recognition of deterioration.").RawPaper,
		paper("w4", "Vasopressors for septic shock", "Norepinephrine dosing and outcomes in critical care.").RawPaper,
		paper("w5", "Sleep spindles and overnight memory", "Spindle density predicts overnight retention of word pairs.").RawPaper,
		paper("w6", "Napping and declarative memory", "A daytime nap improved recall in students.").RawPaper,
		paper("w7", "Long-term outcomes after sepsis", "Cognitive impairment and frailty in survivors of intensive care.").RawPaper,
		paper("w8", "Procalcitonin-guided antibiotic stopping", "Shorter courses without harm in adult patients.").RawPaper,
		paper("w9", "Sepsis bundles and hospital mortality", "Compliance with the hour-1 bundle in adults.").RawPaper,
		paper("w10", "Corticosteroids in septic shock", "Hydrocortisone shortened shock duration in adults.").RawPaper,
		paper("w11", "Sepsis in older adults", "Frailty and outcomes of sepsis in people over 80.").RawPaper,
		paper("w12", "Maternal sepsis", "Obstetric infections and their recognition.").RawPaper,
		paper("w13", "Neonatal sepsis in low-income countries", "Antibiotic resistance in newborns.").RawPaper,
		paper("w14", "Sleep deprivation and memory", "One night without sleep impaired encoding.").RawPaper,
		paper("w15", "REM sleep and emotional memory", "REM sleep supports emotional memory consolidation.").RawPaper,
		paper("w16", "Sepsis survivors in primary care", "Readmissions after discharge.").RawPaper,
		paper("w17", "Blood cultures before antibiotics", "Yield of cultures in emergency sepsis care.").RawPaper,
		paper("w18", "Sepsis and acute kidney injury", "Renal replacement timing in septic adults.").RawPaper,
		paper("w19", "Sepsis coding in administrative data", "Observational data from adult hospitals.").RawPaper,
		paper("w20", "Fever control in sepsis", "Observational data from adult hospitals.").RawPaper,
		paper("w21", "Sepsis and delirium", "Observational data from adult hospitals.").RawPaper,
		paper("w22", "Nurse-led sepsis screening", "Observational data from adult hospitals.").RawPaper,
		paper("w23", "Sepsis quality improvement", "Observational data from adult hospitals.").RawPaper,
		paper("w24", "Rapid response teams and sepsis", "Observational data from adult hospitals.").RawPaper,
		paper("w25", "Hospital-onset sepsis", "Observational data from adult hospitals.").RawPaper,
		paper("w26", "Sepsis in cancer patients", "Observational data from adult hospitals.").RawPaper,
		paper("w27", "Telemedicine for rural sepsis", "Observational data from adult hospitals.").RawPaper,
		paper("w28", "Sleep quality after intensive care", "Observational data from adult hospitals.").RawPaper,
	}
)

func sleepIntent() research.ParsedIntent {
	return research.ParsedIntent{Topic: "sleep and memory consolidation",
		Concepts: []research.Concept{{Term: "memory consolidation"}, {Term: "sleep"}}}
}

func proteinIntent() research.ParsedIntent {
	return research.ParsedIntent{Topic: "protein structure prediction",
		Concepts: []research.Concept{{Term: "protein structure prediction"}}}
}

// TestLearnedNegations pins what irrelevant marks may teach the builder:
// a negation needs several irrelevant papers behind it and must name what
// they are about, never a word a relevant paper or the question uses; the
// researcher's own exclusions hold regardless.
func TestLearnedNegations(t *testing.T) {
	t.Parallel()
	irrelevant := func(ids ...string) research.UserFeedback { return research.UserFeedback{MarkedIrrelevant: ids} }
	tests := []struct {
		name     string
		intent   research.ParsedIntent
		marked   []research.ScoredPaper
		feedback []research.UserFeedback // one per review, oldest first
		// want is the last strategy's exclusions, in order.
		want []string
		// never are words no query of any iteration may exclude.
		never []string
	}{
		{
			// The audit's repro: two unrelated papers share only how they
			// are written ("rather", "computing"); negating those lost
			// Walker & Stickgold, whose abstract says "rather".
			name:     "UnrelatedPapersShareNoTopic",
			intent:   sleepIntent(),
			marked:   []research.ScoredPaper{flashAttention, econometrics},
			feedback: []research.UserFeedback{irrelevant("flash", "econ"), {}},
			never:    append(strings.Fields(strings.ToLower(walker.Title+" "+walker.Abstract)), "rather", "computing", "computes"),
		},
		{
			// One cryo-EM paper is no evidence that "spike" or
			// "conformation" marks what the researcher does not want.
			name:     "OnePaperTeachesNothing",
			intent:   proteinIntent(),
			marked:   []research.ScoredPaper{cryoSpike},
			feedback: []research.UserFeedback{irrelevant("cryo"), {}, {}},
			never:    []string{"spike", "prefusion", "cryo", "conformation", "structure"},
		},
		{
			// Two papers that share words are not a pattern: marking two
			// papers irrelevant used to add "-fast -glass" to every query
			// (issue 16).
			name:     "TwoPapersAreNoPattern",
			intent:   sepsisIntent(),
			marked:   []research.ScoredPaper{mice1, mice2},
			feedback: []research.UserFeedback{irrelevant("mice1", "mice2")},
			want:     []string{"children"},
			never:    []string{"cytokine", "endotoxin", "mice", "murine"},
		},
		{
			name:     "ThreePapersOnOneTopic",
			intent:   sepsisIntent(),
			marked:   []research.ScoredPaper{mice1, mice2, mice3},
			feedback: []research.UserFeedback{irrelevant("mice1", "mice2", "mice3")},
			want:     []string{"children", "cytokine", "endotoxin"},
		},
		{
			// Evidence pools across reviews: mouse papers marked in two
			// reviews are still three mouse papers.
			name:     "EvidenceAcrossReviews",
			intent:   sepsisIntent(),
			marked:   []research.ScoredPaper{mice1, mice2, mice3},
			feedback: []research.UserFeedback{irrelevant("mice1"), irrelevant("mice2", "mice3")},
			want:     []string{"children", "cytokine", "endotoxin"},
		},
		{
			// New marks that favour another form of a learned word add
			// no second exclusion of it; learned words are recomputed
			// from all marks, so the form shown is the one they favour.
			name:   "OneExclusionPerStem",
			intent: sepsisIntent(),
			marked: []research.ScoredPaper{mice1, mice2, mice3,
				paper("m3", "Cytokines and endotoxins", "Cytokines cytokines cytokines cytokines cytokines endotoxins endotoxins endotoxins endotoxins."),
				paper("m4", "Endotoxins and cytokines", "Cytokines cytokines cytokines cytokines cytokines endotoxins endotoxins endotoxins endotoxins."),
			},
			feedback: []research.UserFeedback{irrelevant("mice1", "mice2", "mice3"), irrelevant("m3", "m4")},
			want:     []string{"children", "cytokine", "endotoxin"},
		},
		{
			name:   "NeverAWordOfARelevantPaper",
			intent: sepsisIntent(),
			marked: []research.ScoredPaper{mice1, mice2, mice3,
				paper("rel", "Sepsis in the ICU", "Cytokine findings from animals carried over to patients in intensive care.")},
			feedback: []research.UserFeedback{{MarkedIrrelevant: []string{"mice1", "mice2", "mice3"}, MarkedRelevant: []string{"rel"}}},
			want:     []string{"children", "endotoxin", "mice"},
			never:    []string{"cytokine"},
		},
		{
			// "adolescents" is in the question, though not a concept.
			name: "NeverAWordOfTheQuestion",
			intent: research.ParsedIntent{Topic: "sleep and memory consolidation in adolescents",
				Concepts: []research.Concept{{Term: "memory consolidation"}, {Term: "sleep"}}},
			marked: []research.ScoredPaper{
				paper("a", "Screen time and obesity in adolescents", "Adolescents who watch more television show more obesity."),
				paper("b", "Obesity among adolescents using smartphones", "Smartphone use and obesity in adolescents."),
				paper("c", "Adolescent obesity and sugary drinks", "Soft drinks and obesity among adolescents at school."),
			},
			feedback: []research.UserFeedback{irrelevant("a", "b", "c")},
			want:     []string{"obesity"},
			never:    []string{"adolescents"},
		},
		{
			// Two mouse papers among seven irrelevant ones are not what
			// the researcher rejected: each negation removes papers.
			name:   "ARealShareOfTheIrrelevantPapers",
			intent: sepsisIntent(),
			marked: []research.ScoredPaper{mice1, mice2,
				paper("c", "Blockchain consensus protocols", "Byzantine agreement among validators."),
				paper("d", "Wheat yield under drought", "Irrigation schedules for arid farms."),
				paper("e", "Galaxy rotation curves", "Dark halo profiles from spectroscopy."),
				paper("f", "Medieval trade routes", "Venetian merchants and silk."),
				paper("g", "Jazz harmony pedagogy", "Teaching chord voicings to students."),
			},
			feedback: []research.UserFeedback{irrelevant("mice1", "mice2", "c", "d", "e", "f", "g")},
			want:     []string{"children"},
			never:    []string{"mice", "cytokine", "murine", "endotoxin"},
		},
		{
			// The researcher's typed exclusions hold even when a relevant
			// paper uses the word; an exclusion read in their free text
			// does not: read and learned exclusions never remove a paper
			// marked relevant (issue 16: "not only medical imaging"
			// became -"medical imaging" and lost the paper just marked).
			name:   "TypedExclusionsAlwaysHold",
			intent: sepsisIntent(),
			marked: []research.ScoredPaper{cryoSpike,
				paper("rel", "Sepsis after pneumonia in children", "Case report series of pneumonia in the ICU.")},
			feedback: []research.UserFeedback{{
				MarkedIrrelevant: []string{"cryo"}, MarkedRelevant: []string{"rel"},
				ExcludeTerms: []string{"case report"}, FreeTextFeedback: "exclude pneumonia and spike proteins",
			}},
			want:  []string{"children", "case report", "spike proteins"},
			never: []string{"prefusion", "pneumonia"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := skills.QueryInput{Intent: tt.intent, Sources: []string{query.Local, query.PubMed}, Marked: tt.marked, Collection: wards}
			got := iterate(t, in, tt.feedback...)
			last := got[len(got)-1]
			require.Equal(t, tt.want, last.Filters.ExcludeTerms)
			for _, w := range tt.want {
				require.Contains(t, negated(t, last), w, "every exclusion is negated in the queries")
			}
			for i, s := range got {
				for _, w := range tt.never {
					require.NotContains(t, negated(t, s), w, "iteration %d: %v", i+1, texts(s))
					require.False(t, slices.ContainsFunc(s.Filters.ExcludeTerms, func(e string) bool { return strings.EqualFold(e, w) }),
						"iteration %d excludes %q", i+1, w)
				}
			}
		})
	}
}

// TestLearnedNegationsDoNotGrowWithoutMarks: a negation learned once is
// carried to the next build as an exclusion, and the builder used to take
// that as a reason to learn two more words from the same papers, every
// iteration, with no new marks.
func TestLearnedNegationsDoNotGrowWithoutMarks(t *testing.T) {
	t.Parallel()
	in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}, Marked: []research.ScoredPaper{mice1, mice2, mice3}, Collection: wards}
	got := iterate(t, in, research.UserFeedback{MarkedIrrelevant: []string{"mice1", "mice2", "mice3"}}, research.UserFeedback{}, research.UserFeedback{FreeTextFeedback: "search again"})
	require.Equal(t, []string{"children", "cytokine", "endotoxin"}, got[1].Filters.ExcludeTerms)
	for i, s := range got[2:] {
		require.Equal(t, got[1].Filters.ExcludeTerms, s.Filters.ExcludeTerms, "iteration %d, no new marks", i+3)
		require.ElementsMatch(t, negated(t, got[1]), negated(t, s), "iteration %d, no new marks", i+3)
	}
}

// TestSearchAgainNeverNarrowsToASearchedQuery: "search again" with no
// feedback used to propose the focused query alone, which had just been
// searched with the rest (for a question that is one phrase, the phrase
// that found nothing). A query already sent to the same sources with the
// same years and filters and at least the same cap can only find what it
// found, so each later strategy sends a new query or asks for more.
func TestSearchAgainNeverNarrowsToASearchedQuery(t *testing.T) {
	t.Parallel()
	crispr := research.ParsedIntent{Topic: "CRISPR genome editing therapies",
		Concepts: []research.Concept{{Term: "crispr genome editing therapies"}}}
	tests := []struct {
		name   string
		intent research.ParsedIntent
	}{
		{"OnePhrase", crispr},
		{"TwoConcepts", sleepIntent()},
		{"ThreeConcepts", sepsisIntent()},
		{"OneWord", research.ParsedIntent{Topic: "zebrafish", Concepts: []research.Concept{{Term: "zebrafish"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := skills.QueryInput{Intent: tt.intent, Sources: []string{query.Local, query.OpenAlex}}
			got := iterate(t, in, research.UserFeedback{}, research.UserFeedback{}, research.UserFeedback{}, research.UserFeedback{})
			for i := 1; i < len(got); i++ {
				s, before := got[i], got[:i]
				newQuery := false
				for _, q := range s.Queries {
					newQuery = newQuery || !slices.ContainsFunc(before, func(p research.SearchStrategy) bool {
						return p.MaxResultsPerSource >= s.MaxResultsPerSource && slices.ContainsFunc(p.Queries, func(pq research.Query) bool { return pq.Text == q.Text })
					})
				}
				require.True(t, newQuery, "iteration %d sends only queries already sent: %v (max %d)", i+1, texts(s), s.MaxResultsPerSource)
			}
		})
	}
	t.Run("OnePhraseAsksForMore", func(t *testing.T) {
		t.Parallel()
		got := iterate(t, skills.QueryInput{Intent: crispr, Sources: []string{query.Local}}, research.UserFeedback{})
		require.Equal(t, texts(got[0]), texts(got[1]), "the phrase alone is already among the first queries; the any-of query found the papers")
		require.Equal(t, 2*research.DefaultMaxResultsPerSource, got[1].MaxResultsPerSource)
	})
}

// TestLearnedExclusionsStayLearned: a strategy lists the exclusions it
// learned from irrelevant papers apart from the researcher's, and the
// next build (given the researcher's only, as the pipeline carries them)
// learns them again from all marks: one that a paper marked relevant
// later uses is dropped, where a carried one used to stay for good, and
// one the researcher removed at the strategy checkpoint is not learned
// again, nor replaced by another word of the same papers.
func TestLearnedExclusionsStayLearned(t *testing.T) {
	t.Parallel()
	rel := paper("rel", "Sepsis in the ICU", "Cytokine findings from animals carried over to patients in intensive care.")
	in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}, Marked: []research.ScoredPaper{mice1, mice2, mice3, rel}, Collection: wards}
	got := iterate(t, in, research.UserFeedback{MarkedIrrelevant: []string{"mice1", "mice2", "mice3"}}, research.UserFeedback{MarkedRelevant: []string{"rel"}})

	learned := got[1].Filters
	require.Equal(t, []string{"children", "cytokine", "endotoxin"}, learned.ExcludeTerms)
	require.Equal(t, []string{"cytokine", "endotoxin"}, learned.LearnedExcludeTerms)
	require.Equal(t, []string{"children"}, learned.ResearcherExcludeTerms())

	later := got[2].Filters
	require.Equal(t, []string{"children", "endotoxin", "mice"}, later.ExcludeTerms, "a relevant paper now uses cytokine")
	require.Equal(t, []string{"endotoxin", "mice"}, later.LearnedExcludeTerms)
	require.NotContains(t, negated(t, got[2]), "cytokine")

	t.Run("RemovedAtTheCheckpoint", func(t *testing.T) {
		t.Parallel()
		in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}, Marked: []research.ScoredPaper{mice1, mice2, mice3},
			RemovedLearnedTerms: []string{"Cytokines"}, Collection: wards}
		got := iterate(t, in, research.UserFeedback{MarkedIrrelevant: []string{"mice1", "mice2", "mice3"}}, research.UserFeedback{})
		for i, s := range got {
			require.Equal(t, []string{"children", "endotoxin"}[:min(i+1, 2)], s.Filters.ExcludeTerms, "iteration %d", i+1)
			require.NotContains(t, negated(t, s), "cytokine", "iteration %d", i+1)
		}
	})
	t.Run("TheResearchersOwnWordStaysTheirs", func(t *testing.T) {
		t.Parallel()
		in := skills.QueryInput{Intent: sepsisIntent(), Sources: []string{query.Local}, Marked: []research.ScoredPaper{mice1, mice2, mice3, rel}, Collection: wards}
		got := iterate(t, in, research.UserFeedback{MarkedIrrelevant: []string{"mice1", "mice2", "mice3"}, ExcludeTerms: []string{"cytokine"}},
			research.UserFeedback{MarkedRelevant: []string{"rel"}})
		require.Equal(t, []string{"endotoxin", "mice"}, got[1].Filters.LearnedExcludeTerms, "the researcher excludes cytokine already")
		require.Contains(t, got[2].Filters.ExcludeTerms, "cytokine", "the researcher asked for it; a relevant paper does not undo that")
		require.Contains(t, negated(t, got[2]), "cytokine")
	})
}
