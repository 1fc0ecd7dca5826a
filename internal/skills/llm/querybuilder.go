package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/query"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/text"
)

// maxQueries bounds the queries of one LLM strategy: each is sent to every
// source, so more queries multiply the requests and the papers to review.
const maxQueries = 4

// maxMarkedInPrompt bounds how many marked paper titles a prompt lists.
const maxMarkedInPrompt = 15

// QueryBuilder asks a model for query texts in Quarry's canonical query
// syntax, then does what a model must not be trusted with: it parses them,
// renders them for each source, validates the strategy and refuses one that
// repeats an earlier iteration. It falls back to the offline builder when
// the model fails.
type QueryBuilder struct {
	p        Provider
	fallback skills.QueryBuilder
}

// NewQueryBuilder returns an LLM-backed query builder over p that falls back
// to fallback; with p == nil it returns fallback itself.
func NewQueryBuilder(p Provider, fallback skills.QueryBuilder) skills.QueryBuilder {
	if p == nil {
		return fallback
	}
	return &QueryBuilder{p: p, fallback: fallback}
}

const querySystem = `You write literature search queries for a researcher.
Write queries in this syntax:
- words and "quoted phrases" are terms; terms and groups next to each other are AND-ed;
- (a OR b OR "c d") is an OR group of alternatives for one idea;
- -term, -"a phrase", -(a OR b) or NOT term exclude;
- AND, OR and NOT are operators only in upper case;
- every query needs at least one term that is not excluded.
Example: sepsis "machine learning" (children OR paediatric OR "young people") -animal NOT "case report"
Write 1 to 4 queries: a focused one first, then broader or complementary ones. Use the researcher's feedback: search more like the papers they marked relevant, exclude what made papers irrelevant. Never repeat a strategy that was already searched.
Reply with a JSON object: {"queries": [string]}.`

// queryAnswer is the model's answer; strategy is filled in by the check.
type queryAnswer struct {
	Queries  []string `json:"queries"`
	strategy research.SearchStrategy
}

// BuildStrategy implements skills.QueryBuilder.
func (qb *QueryBuilder) BuildStrategy(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error) {
	base, err := baseStrategy(in)
	if err != nil {
		return qb.fallback.BuildStrategy(ctx, in) // the fallback words the input error
	}
	seen := map[string]int{}
	for i, p := range in.Previous {
		seen[querybuilder.StrategyKey(p)] = i + 1
	}
	ans, err := askJSON(ctx, qb.p, Request{System: querySystem, Prompt: queryPrompt(in), MaxTokens: 2048, Schema: querySchema()},
		func(a *queryAnswer) error { return checkQueries(a, base, seen) })
	if err == nil {
		return ans.strategy, nil
	}
	if ctx.Err() != nil {
		return research.SearchStrategy{}, ctx.Err()
	}
	fellBack(ctx, SkillQueryBuilder, qb.p, err)
	return qb.fallback.BuildStrategy(ctx, in)
}

// baseStrategy is everything of the strategy but its queries, taken from the
// input as the offline builder does; an input the builder cannot use at all
// is an error.
func baseStrategy(in skills.QueryInput) (research.SearchStrategy, error) {
	if err := in.Intent.Validate(); err != nil {
		return research.SearchStrategy{}, err
	}
	for _, f := range in.Feedback {
		if err := f.Validate(); err != nil {
			return research.SearchStrategy{}, err
		}
	}
	var sources []string
	for _, s := range in.Sources {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(sources, s) {
			sources = append(sources, s)
		}
	}
	maxResults := in.MaxResultsPerSource
	if maxResults == 0 {
		maxResults = research.DefaultMaxResultsPerSource
	}
	var add, excl []string
	for _, f := range in.Feedback {
		add = append(add, f.AddTerms...)
		excl = append(excl, f.ExcludeTerms...)
	}
	add = research.ShortTerms(cleanList(add))
	var keptExcl []string
	for _, e := range research.ShortTerms(cleanList(append(append([]string(nil), in.Intent.ExcludeTerms...), excl...))) {
		if !text.ContainsFold(add, e) { // a later "add" wins over an earlier exclusion
			keptExcl = append(keptExcl, e)
		}
	}
	// Each review is within the limits, but several add up past them (and
	// the question's terms are not bounded), and a base over one would
	// make every such build fall back to the offline builder; like it,
	// leave out terms over MaxTermLength and keep the first of the rest
	// (the question's, then the reviews' in order), which have shaped the
	// searches reviewed so far.
	include := firstN(research.ShortTerms(cleanList(append(append([]string(nil), in.Intent.IncludeTerms...), add...))), research.MaxFilterTerms)
	keptExcl = firstN(keptExcl, research.MaxFilterTerms)
	s := research.SearchStrategy{
		Queries:             []research.Query{{Text: "placeholder"}}, // lets Validate check the rest; replaced by the model's queries
		Sources:             sources,
		YearRange:           in.Intent.YearRange,
		MaxResultsPerSource: maxResults,
		QuestionWords:       querybuilder.QuestionWords(in.Intent.Topic),
		Filters: research.Filters{
			IncludeTerms:  include,
			ExcludeTerms:  keptExcl,
			FieldsOfStudy: firstN(research.ShortTerms(in.FieldsOfStudy), research.MaxFieldsOfStudy),
			StudyTypes:    firstN(research.ShortTerms(in.Intent.StudyTypes), research.MaxStudyTypes),
		},
	}
	if err := s.Validate(); err != nil {
		return research.SearchStrategy{}, err
	}
	return s, nil
}

// firstN is the first n elements of list.
func firstN(list []string, n int) []string { return list[:min(len(list), n)] }

// checkQueries parses and renders the model's queries into a strategy on
// base and rejects an invalid or already-searched one, with an error the
// model can act on.
func checkQueries(a *queryAnswer, base research.SearchStrategy, seen map[string]int) error {
	s := base
	s.Queries = nil
	texts := map[string]bool{}
	for i, raw := range a.Queries {
		ast, err := query.Parse(strings.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("queries[%d] %q: %w", i, raw, err)
		}
		// The include terms are required and the exclusions (the
		// question's, the researcher's) negated in every query whether or
		// not the model wrote them, as the offline builder does: the
		// filters are what the report lists as searched.
		ast = query.WithFilters(ast, s.Filters.IncludeTerms, s.Filters.ExcludeTerms)
		for _, src := range s.Sources {
			if slices.Contains(query.Sources(), src) { // RenderAll sends the canonical text to others
				if _, err := query.Render(src, ast); err != nil {
					return fmt.Errorf("queries[%d] %q cannot be sent to %s: %w", i, raw, src, err)
				}
			}
		}
		text := ast.String()
		if texts[text] {
			continue
		}
		texts[text] = true
		s.Queries = append(s.Queries, research.Query{Text: text, PerSource: query.RenderAll(ast, s.Sources)})
	}
	switch {
	case len(s.Queries) == 0:
		return fault.Errorf(fault.EInvalid, "queries: at least one query is required")
	case len(s.Queries) > maxQueries:
		return fault.Errorf(fault.EInvalid, "queries: %d queries given, at most %d allowed", len(s.Queries), maxQueries)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if it, ok := seen[querybuilder.StrategyKey(s)]; ok {
		return fault.Errorf(fault.EConflict, "these queries were already searched in iteration %d; propose different queries", it)
	}
	a.strategy = s
	return nil
}

// queryPrompt describes the input for the model.
func queryPrompt(in skills.QueryInput) string {
	var b strings.Builder
	b.WriteString(describeIntent(in.Intent))
	for i, p := range in.Previous {
		fmt.Fprintf(&b, "\nIteration %d searched:\n", i+1)
		for _, q := range p.Queries {
			fmt.Fprintf(&b, "  %s\n", q.Text)
		}
	}
	for i, f := range in.Feedback {
		fmt.Fprintf(&b, "\nFeedback after iteration %d:\n", i+1)
		if t := oneLine(f.FreeTextFeedback); t != "" {
			fmt.Fprintf(&b, "  Researcher said: %s\n", clip(t, 1000))
		}
		if len(f.AddTerms) > 0 {
			fmt.Fprintf(&b, "  Add terms: %s\n", strings.Join(f.AddTerms, "; "))
		}
		if len(f.ExcludeTerms) > 0 {
			fmt.Fprintf(&b, "  Exclude terms: %s\n", strings.Join(f.ExcludeTerms, "; "))
		}
	}
	if len(in.RemovedLearnedTerms) > 0 {
		// Learned from the papers marked irrelevant and then removed by the
		// researcher: the model sees those papers too and would exclude
		// the same words again.
		fmt.Fprintf(&b, "\nThe researcher removed these exclusions; do not exclude them: %s\n", strings.Join(in.RemovedLearnedTerms, "; "))
	}
	rel, irr := markedTitles(in)
	if len(rel) > 0 {
		fmt.Fprintf(&b, "\nPapers marked relevant:\n  %s\n", strings.Join(rel, "\n  "))
	}
	if len(irr) > 0 {
		fmt.Fprintf(&b, "\nPapers marked irrelevant:\n  %s\n", strings.Join(irr, "\n  "))
	}
	return b.String()
}

// markedTitles returns the titles of the marked papers, by the latest mark.
func markedTitles(in skills.QueryInput) (rel, irr []string) {
	mark := map[string]bool{}
	for _, f := range in.Feedback {
		for _, id := range f.MarkedRelevant {
			mark[id] = true
		}
		for _, id := range f.MarkedIrrelevant {
			mark[id] = false
		}
	}
	done := map[string]bool{}
	for _, p := range in.Marked {
		m, ok := mark[p.ID]
		if !ok || done[p.ID] {
			continue
		}
		done[p.ID] = true
		switch {
		case m && len(rel) < maxMarkedInPrompt:
			rel = append(rel, oneLine(p.Title))
		case !m && len(irr) < maxMarkedInPrompt:
			irr = append(irr, oneLine(p.Title))
		}
	}
	return rel, irr
}
