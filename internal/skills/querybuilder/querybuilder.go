package querybuilder

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/query"
	"quarry/internal/skills/text"
)

const (
	maxCoreConcepts  = 4 // concepts AND-ed in the focused query
	maxAlternatives  = 6 // terms in one OR group
	maxExpansion     = 3 // relevance-feedback terms added per iteration
	maxNegativeTerms = 2 // terms a build learns from all irrelevant marks so far
	// negationShare: a learned negation must be in at least 1/negationShare
	// of the irrelevant papers (and in two): a word of one paper, or of a
	// few among many, is not what the researcher turned down.
	negationShare = 3
)

// Builder is the QueryBuilder that needs no network: it turns
// concepts into a focused and a broad query, and on later iterations applies
// the researcher's feedback (Rocchio-style relevance feedback from marked
// papers, explicit add/exclude terms, and simple patterns in free text). It
// never returns a strategy identical to an earlier one, so "search again"
// always searches something new. It needs no clock: nothing it does depends
// on time.
type Builder struct {
	syn *intent.Parser // only its synonym table is used
	// exclusionLift is the lift a learned exclusion needs
	// (minExclusionLift; the screening check varies it).
	exclusionLift float64
}

// NewQueryBuilder returns the offline query builder.
func New() *Builder {
	return &Builder{syn: intent.New(nil), exclusionLift: minExclusionLift}
}

// BuildStrategy implements QueryBuilder.
func (b *Builder) BuildStrategy(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error) {
	if err := ctx.Err(); err != nil {
		return research.SearchStrategy{}, err
	}
	if err := in.Intent.Validate(); err != nil {
		return research.SearchStrategy{}, err
	}
	if len(in.Intent.Concepts) == 0 {
		return research.SearchStrategy{}, fault.Errorf(fault.EInvalid, "the intent has no concepts to search for")
	}
	for i, f := range in.Feedback {
		if err := f.Validate(); err != nil {
			return research.SearchStrategy{}, fmt.Errorf("feedback %d: %w", i+1, err)
		}
	}
	sources := uniqueTrimmed(in.Sources)
	if len(sources) == 0 {
		return research.SearchStrategy{}, fault.Errorf(fault.EInvalid, "no sources to search")
	}
	maxResults := in.MaxResultsPerSource
	if maxResults == 0 {
		maxResults = research.DefaultMaxResultsPerSource
	}
	if maxResults < 0 || maxResults > research.MaxResultsLimit {
		return research.SearchStrategy{}, fault.Errorf(fault.EInvalid, "max results per source must be between 1 and %d", research.MaxResultsLimit)
	}

	fb := b.feedback(in)
	concepts := b.conceptClauses(in.Intent, fb.exclude)
	if len(concepts) == 0 {
		return research.SearchStrategy{}, fault.Errorf(fault.EInvalid, "the question has no word to search for")
	}
	var core []query.Clause
	core = append(core, concepts[:min(len(concepts), maxCoreConcepts)]...)
	for _, t := range fb.add {
		if !clausesMention(core, t) {
			core = append(core, b.clause(t, nil))
		}
	}
	positive := append([]query.Clause(nil), core...)
	var excl []query.Clause
	for _, t := range fb.exclude {
		if clausesMention(positive, t) {
			continue // a term cannot be both searched for and excluded; searching wins
		}
		c := b.clause(t, nil)
		c.Not = true
		kept := c.Any[:0]
		for _, x := range c.Any {
			if !clausesMention(positive, x.Text) { // never exclude what is searched for
				kept = append(kept, x)
			}
		}
		c.Any = kept
		if len(c.Any) == 0 {
			continue // nothing searchable left to exclude (a term of only punctuation)
		}
		excl = append(excl, c)
	}

	studyTypes := firstN(research.ShortTerms(in.Intent.StudyTypes), research.MaxStudyTypes)
	var studies query.Clause
	for _, st := range studyTypes {
		studies.Any = appendTerms(studies.Any, append([]string{st}, b.syn.SynonymsOf(st)...)...)
	}

	// Every query requires every include term, not only the focused one:
	// the filters say "must include", and the report lists them as
	// searched (issue 16: a term listed but not sent is a false report).
	include := firstN(text.UniqueFold(research.ShortTerms(append(append([]string(nil), in.Intent.IncludeTerms...), fb.add...))), research.MaxFilterTerms)
	with := func(lead []query.Clause, extra query.Clause) query.AST {
		return withIncludes(withClauses(lead, extra, excl), include)
	}
	focused := with(core, studies)
	loose := loosen(concepts[:min(len(concepts), 2)])
	broad := with(loose, query.Clause{})
	asts := []query.AST{fit(focused, len(concepts[:min(len(concepts), maxCoreConcepts)])), fit(broad, len(loose))}
	if or, ok := anyOf(loose); ok {
		asts = append(asts, fit(with([]query.Clause{or}, query.Clause{}), 1))
	}
	if len(fb.expansion) > 0 {
		exp := query.Clause{Any: appendTerms(nil, fb.expansion...)}
		asts = append(asts, fit(with([]query.Clause{concepts[0], exp}, query.Clause{}), 2))
	}

	base := research.SearchStrategy{
		QuestionWords:       QuestionWords(in.Intent.Topic),
		Sources:             sources,
		YearRange:           in.Intent.YearRange,
		MaxResultsPerSource: maxResults,
		Filters: research.Filters{
			IncludeTerms:        include,
			ExcludeTerms:        text.UniqueFold(fb.exclude),
			LearnedExcludeTerms: fb.learned,
			Learned:             fb.provenance,
			FieldsOfStudy:       firstN(research.ShortTerms(in.FieldsOfStudy), research.MaxFieldsOfStudy),
			StudyTypes:          studyTypes,
		},
	}
	return b.distinct(base, asts, fit(with([]query.Clause{concepts[0]}, query.Clause{}), 1), in.Previous)
}

// distinct returns the first strategy of a fixed sequence of variants that
// is not identical to any previous one and can find something new: as
// built; broadened (the top concept alone added as a query); narrowed (the
// focused query alone); and then each of those asking every source for
// more results, 25 at a time. A variant whose every query was already sent
// (sentBefore) is skipped: it can only find what it found, and "search
// again" with no feedback used to narrow to the focused query alone, which
// for a question that is one phrase is the phrase that had found nothing.
// In practice that leaves broadening, which is what a search again without
// feedback needs: the input carries no result counts, so the builder cannot
// tell a search that found too much from one that found too little, and
// asking for more is right for both. Only when the cap reaches
// MaxResultsLimit does the sequence go on with smaller caps (narrowings of
// what was sent), the last way left to differ from every earlier strategy.
// The sequence is deterministic, so the same input always gives the same
// strategy.
func (b *Builder) distinct(base research.SearchStrategy, asts []query.AST, top query.AST, previous []research.SearchStrategy) (research.SearchStrategy, error) {
	seen := map[string]bool{}
	for _, p := range previous {
		seen[StrategyKey(p)] = true
	}
	variants := [][]query.AST{
		asts,
		append(append([]query.AST(nil), asts...), top),
		asts[:1],
	}
	for m := base.MaxResultsPerSource; ; {
		for _, v := range variants {
			s := base
			s.MaxResultsPerSource = m
			s.Queries = renderQueries(v, s.Sources)
			if seen[StrategyKey(s)] || m >= base.MaxResultsPerSource && sentBefore(s, previous) {
				continue
			}
			return s, nil
		}
		switch {
		case m >= base.MaxResultsPerSource && m+research.DefaultMaxResultsPerSource <= research.MaxResultsLimit:
			m += research.DefaultMaxResultsPerSource
		case m >= base.MaxResultsPerSource:
			m = base.MaxResultsPerSource - 1
		default:
			m--
		}
		if m < 1 {
			return research.SearchStrategy{}, fault.Errorf(fault.EConflict, "every variant of this strategy has been searched already; change the question or the feedback")
		}
	}
}

// sentBefore reports whether every query of s was already sent to each of
// s's sources by one of the previous strategies with the same years and
// filters and at least s's result cap, so that s would get back only papers
// already found. Previous also holds strategies the researcher rejected at
// the strategy checkpoint, never searched; their queries count as sent
// too, since proposing them again repeats what was turned down.
func sentBefore(s research.SearchStrategy, previous []research.SearchStrategy) bool {
	filters := filtersKey(s.Filters)
	for _, q := range s.Queries {
		want := canonicalQuery(q.Text)
		for _, src := range s.Sources {
			sent := false
			for _, p := range previous {
				sent = sent || p.MaxResultsPerSource >= s.MaxResultsPerSource && p.YearRange == s.YearRange &&
					slices.Contains(p.Sources, src) && filtersKey(p.Filters) == filters &&
					slices.ContainsFunc(p.Queries, func(pq research.Query) bool { return canonicalQuery(pq.Text) == want })
			}
			if !sent {
				return false
			}
		}
	}
	return true
}

// canonicalQuery is a query's text in canonical form, so an edit that only
// changed spacing is the same query; text that does not parse is kept.
func canonicalQuery(t string) string {
	if a, err := query.Parse(t); err == nil {
		return a.String()
	}
	return t
}

// filtersKey compares filters by what they search: whether an exclusion
// was learned or typed does not change what a source is sent.
func filtersKey(f research.Filters) string {
	f.LearnedExcludeTerms, f.Learned = nil, nil
	out, _ := json.Marshal(f) // plain strings: cannot fail
	return string(out)
}

// renderQueries writes each distinct query in canonical text and rendered
// for exactly the strategy's sources.
func renderQueries(asts []query.AST, sources []string) []research.Query {
	var out []research.Query
	seen := map[string]bool{}
	for _, a := range asts {
		t := a.String()
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, research.Query{Text: t, PerSource: query.RenderAll(a, sources)})
	}
	return out
}

// StrategyKey is the canonical form strategies are compared by (so that no
// builder, offline or LLM, proposes a strategy already tried): query
// texts re-parsed into canonical form (so an edit that only changed spacing
// is the same query), sources as a set, filters by what they search
// (filtersKey), and everything else as is.
func StrategyKey(s research.SearchStrategy) string {
	k := struct {
		Queries []string
		Sources []string
		Years   research.YearRange
		Max     int
		Filters json.RawMessage
	}{Years: s.YearRange, Max: s.MaxResultsPerSource, Filters: json.RawMessage(filtersKey(s.Filters))}
	for _, q := range s.Queries {
		k.Queries = append(k.Queries, canonicalQuery(q.Text))
	}
	k.Sources = append([]string(nil), s.Sources...)
	sort.Strings(k.Sources)
	out, _ := json.Marshal(k) // plain strings and ints: cannot fail
	return string(out)
}

// withIncludes requires each include term a does not mention yet, placed
// before the exclusions so that fit, which drops required clauses last
// first, drops an include term only after what follows it.
func withIncludes(a query.AST, include []string) query.AST {
	with := query.WithFilters(query.AST{Clauses: slices.DeleteFunc(slices.Clone(a.Clauses), func(c query.Clause) bool { return c.Not })}, include, nil)
	for _, c := range a.Clauses {
		if c.Not {
			with.Clauses = append(with.Clauses, c)
		}
	}
	return with
}

func withClauses(core []query.Clause, extra query.Clause, excl []query.Clause) query.AST {
	var a query.AST
	a.Clauses = append(a.Clauses, core...)
	if len(extra.Any) > 0 {
		a.Clauses = append(a.Clauses, extra)
	}
	a.Clauses = append(a.Clauses, excl...)
	return a
}

// fit keeps a query within research.MaxQueryTerms and MaxQueryLength,
// since one over them is refused at the strategy checkpoint for what the
// researcher did not write. The first lead clauses are the question's
// concepts; the rest are the include, study-type and exclude terms, each
// with the built-in synonyms appendTerms gave it. It drops alternatives,
// last first, from the clauses after the lead ones, then from the lead
// ones too, down to one a clause (the term itself, which the filters
// list); a query still over (a concept of a hundred words, loosened into
// as many) loses its last required clauses, never the first one or an
// exclusion, so the query still excludes every term the filters say it
// does. The same input always gives the same query.
func fit(a query.AST, lead int) query.AST {
	over := func() bool {
		t := a.String()
		return research.QueryTerms(t) > research.MaxQueryTerms || utf8.RuneCountInString(t) > research.MaxQueryLength
	}
	if !over() {
		return a
	}
	a.Clauses = slices.Clone(a.Clauses)
	for _, from := range []int{lead, 0} {
		for n := maxAlternatives - 1; n >= 1 && over(); n-- {
			for i := from; i < len(a.Clauses); i++ {
				a.Clauses[i].Any = a.Clauses[i].Any[:min(len(a.Clauses[i].Any), n)]
			}
		}
	}
	for i := len(a.Clauses) - 1; i > 0 && over(); i-- {
		if !a.Clauses[i].Not {
			a.Clauses = slices.Delete(a.Clauses, i, i+1)
		}
	}
	return a
}

// loosen broadens clauses for the broad query: a concept that is a single
// multi-word phrase with no synonyms ("cardiovascular prevention") becomes
// its words, each required but no longer adjacent, so papers that say
// "prevention of cardiovascular events" are found too.
func loosen(clauses []query.Clause) []query.Clause {
	var out []query.Clause
	for _, c := range clauses {
		words := []string(nil)
		if len(c.Any) == 1 {
			words = strings.Fields(c.Any[0].Text)
		}
		if c.Not || len(words) < 2 {
			out = append(out, c)
			continue
		}
		for _, w := range words {
			if text.IsStopword(strings.ToLower(w)) {
				continue
			}
			out = append(out, query.Clause{Any: []query.Term{query.NewTerm(w, false)}})
		}
	}
	return out
}

// minAnyOfClauses is how many required terms make the broad query strict
// enough to need a ranked any-of companion.
const minAnyOfClauses = 3

// anyOf is the ranked companion of a strict broad query: when the broad
// query still requires three or more separate terms ("raft", "consensus",
// "replicated", "logs"), a paper that says "log replication" or
// "pre-training" instead of one of them is missed, and offline a question
// of four plain words could find nothing at all. Every source ranks by
// relevance (FTS5 bm25 locally, the APIs' relevance order) and the
// strategy caps results per source, so one OR of the same terms returns
// the papers matching most of them first; the relevance scorer then orders
// the merged collection against the whole intent. It needs no companion
// when the broad query has fewer required terms.
func anyOf(clauses []query.Clause) (query.Clause, bool) {
	if len(clauses) < minAnyOfClauses {
		return query.Clause{}, false
	}
	var or query.Clause
	for _, c := range clauses {
		if c.Not {
			continue
		}
		for _, t := range c.Any {
			or.Any = appendTerms(or.Any, t.Text)
		}
	}
	return or, len(or.Any) > 1
}

// conceptClauses turns each concept into an OR group of the term and its
// synonyms (the intent's, or the built-in table's when it has none). A
// concept the researcher has since excluded is dropped, unless it is the
// only one. A concept with nothing searchable (only punctuation, which
// the query syntax refuses) is dropped too; when none is left, the
// topic's content words stand in, and when it has none either the result
// is empty and the caller refuses the question.
func (b *Builder) conceptClauses(intent research.ParsedIntent, exclude []string) []query.Clause {
	concepts := intent.Concepts
	var out []query.Clause
	for _, c := range concepts {
		if text.ContainsFold(exclude, c.Term) && len(concepts) > 1 {
			continue
		}
		cl := b.clause(c.Term, c.Synonyms)
		if len(cl.Any) > 0 {
			out = append(out, cl)
		}
	}
	if len(out) == 0 && len(concepts) > 0 {
		if cl := b.clause(concepts[0].Term, concepts[0].Synonyms); len(cl.Any) > 0 {
			out = append(out, cl)
		}
	}
	if len(out) == 0 {
		for _, w := range text.UniqueFold(text.Plain(intent.Topic)) {
			if cl := b.clause(w, nil); len(cl.Any) > 0 && len(out) < maxCoreConcepts {
				out = append(out, cl)
			}
		}
	}
	return out
}

func (b *Builder) clause(term string, synonyms []string) query.Clause {
	if len(synonyms) == 0 {
		synonyms = b.syn.SynonymsOf(term)
	}
	return query.Clause{Any: appendTerms(nil, append([]string{term}, synonyms...)...)}
}

// appendTerms adds terms not already present (case-insensitively), up to
// maxAlternatives.
func appendTerms(ts []query.Term, texts ...string) []query.Term {
	for _, s := range texts {
		t := query.NewTerm(s, false)
		if t.Text == "" || len(ts) >= maxAlternatives {
			continue
		}
		dup := false
		for _, x := range ts {
			dup = dup || strings.EqualFold(x.Text, t.Text)
		}
		if !dup {
			ts = append(ts, t)
		}
	}
	return ts
}

func clausesMention(cs []query.Clause, term string) bool {
	for _, c := range cs {
		for _, t := range c.Any {
			if strings.EqualFold(t.Text, strings.Join(strings.Fields(term), " ")) {
				return true
			}
		}
	}
	return false
}

// mined is everything the feedback says, merged across iterations.
type mined struct {
	add       []string // terms the researcher asked for (required)
	exclude   []string // terms to exclude: the researcher's, then the learned ones
	learned   []string // those of exclude that were learned or read, not typed
	expansion []string // terms searched beside the top concept: read in free text, learned from relevant papers
	// provenance of every learned and read term, in the strategy's order
	provenance []research.LearnedTerm
}

// feedback merges what the question and every review say. The include and
// exclude terms are cut to research.MaxFilterTerms each, keeping the
// first: the question's, then each review's in order; a term read in the
// free text or learned from marks only while there is room. A term over
// research.MaxTermLength is left out (see short). Every review is within
// the limit, but several add up past it, and a strategy over it is
// refused at the checkpoint for what the researcher did not write; an
// earlier term is kept over a later one because it has already shaped
// the searches the researcher reviewed.
//
// The free text is read by ReadFeedback. A wanted term is searched in
// the expansion query beside the top concept, not required in every
// query: "not only medical imaging, also ImageNet and vision
// transformers" asks for more, and requiring all three would find
// nothing. An unwanted term is excluded as a learned exclusion (listed
// with the words it was read from, removable like one learned from
// marks, and read again from all feedback at every build rather than
// carried), unless a paper marked relevant uses it: an exclusion that
// drops what the researcher kept is never what they meant.
func (b *Builder) feedback(in skills.QueryInput) mined {
	var m mined
	// The intent's include terms are required like the researcher's added
	// terms: a quoted phrase is usually a concept already (and so not
	// added twice), but one carried from a checkpoint edit may not be.
	m.add = append(m.add, in.Intent.IncludeTerms...)
	m.exclude = append(m.exclude, in.Intent.ExcludeTerms...)
	relevant, irrelevant := map[string]bool{}, map[string]bool{}
	type read struct{ term, from string }
	var wantRead, unwantRead []read
	for _, f := range in.Feedback {
		for _, id := range f.MarkedRelevant {
			relevant[id], irrelevant[id] = true, false
		}
		for _, id := range f.MarkedIrrelevant {
			irrelevant[id], relevant[id] = true, false
		}
		m.add = append(m.add, f.AddTerms...)
		m.exclude = append(m.exclude, f.ExcludeTerms...)
		want, unwant := ReadFeedback(f.FreeTextFeedback)
		for _, w := range want {
			wantRead = append(wantRead, read{w, f.FreeTextFeedback})
		}
		for _, u := range unwant {
			unwantRead = append(unwantRead, read{u, f.FreeTextFeedback})
		}
	}
	m.add = firstN(text.UniqueFold(research.ShortTerms(trimAll(m.add))), research.MaxFilterTerms)
	var keptExcl []string
	for _, e := range text.UniqueFold(research.ShortTerms(trimAll(m.exclude))) {
		if !text.ContainsFold(m.add, e) { // the researcher's latest "add" wins over an old exclusion
			keptExcl = append(keptExcl, e)
		}
	}
	m.exclude = firstN(keptExcl, research.MaxFilterTerms)

	var rel, irr []research.RawPaper
	seen := map[string]bool{}
	for _, p := range in.Marked {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		switch {
		case relevant[p.ID]:
			rel = append(rel, p.RawPaper)
		case irrelevant[p.ID]:
			irr = append(irr, p.RawPaper)
		}
	}
	relDocs, irrDocs := docs(rel), docs(irr)
	removed := func(t string) bool {
		return excludesWord(in.RemovedLearnedTerms, t) || text.ContainsFold(in.RemovedLearnedTerms, t)
	}

	// Exclusions read in the free text, then learned from irrelevant marks.
	exclude := func(t string, lt research.LearnedTerm) {
		if len(m.exclude) >= research.MaxFilterTerms || len(research.ShortTerms([]string{t})) == 0 || excludesWord(m.exclude, t) ||
			text.ContainsFold(m.exclude, t) || text.ContainsFold(m.add, t) || removed(t) || usedBy(relDocs, t) {
			return
		}
		m.exclude = append(m.exclude, t)
		m.learned = append(m.learned, t)
		lt.Term, lt.Use = t, research.LearnedExclude
		m.provenance = append(m.provenance, lt)
	}
	for _, r := range unwantRead {
		exclude(r.term, research.LearnedTerm{Feedback: r.from})
	}
	known := map[string]bool{}
	for _, w := range b.knownWords(in.Intent, m) {
		known[w] = true
	}
	for _, w := range text.Tokenize(in.Intent.Topic) {
		known[w] = true
	}
	bg := background(in.Collection, rel, irr)
	for _, l := range distinctive(irrDocs, bg, relDocs, known, max(minIrrelevantDF, (len(irr)+negationShare-1)/negationShare), true, maxNegativeTerms, b.exclusionLift) {
		exclude(l.word, research.LearnedTerm{Papers: l.papers})
	}

	// Expansions read in the free text, then learned from relevant marks.
	expand := func(t string, lt research.LearnedTerm) {
		if len(m.expansion) >= maxAlternatives || len(research.ShortTerms([]string{t})) == 0 || text.ContainsFold(m.expansion, t) ||
			text.ContainsFold(m.add, t) || text.ContainsFold(m.exclude, t) || removed(t) {
			return
		}
		m.expansion = append(m.expansion, t)
		lt.Term, lt.Use = t, research.LearnedExpand
		m.provenance = append(m.provenance, lt)
	}
	for _, r := range wantRead {
		expand(r.term, research.LearnedTerm{Feedback: r.from})
	}
	for _, w := range m.expansion {
		for _, s := range text.Tokenize(w) {
			known[s] = true
		}
	}
	for _, l := range distinctive(relDocs, bg, irrDocs, known, minRelevantDF, false, maxExpansion, minLift) {
		expand(l.word, research.LearnedTerm{Papers: l.papers})
	}
	return m
}

// excludesWord reports whether one of the exclusions is the word w, up to
// its stem: new marks can change the form a learned negation is shown in
// ("cytokines" for "cytokine"), which must not add it a second time.
func excludesWord(exclude []string, w string) bool {
	stems := text.Tokenize(w)
	return slices.ContainsFunc(exclude, func(e string) bool { return slices.Equal(text.Tokenize(e), stems) })
}

// knownWords are the stems the strategy already uses or excludes, which
// learning from marks must not add again or negate, and the filler words
// that name no topic.
func (b *Builder) knownWords(in research.ParsedIntent, m mined) []string {
	var all []string
	for _, c := range in.Concepts {
		all = append(all, c.Term)
		all = append(all, c.Synonyms...)
		all = append(all, b.syn.SynonymsOf(c.Term)...)
	}
	all = append(all, in.IncludeTerms...)
	all = append(all, in.StudyTypes...)
	all = append(all, m.add...)
	all = append(all, m.exclude...)
	var stems []string
	for _, s := range all {
		stems = append(stems, text.Tokenize(s)...)
	}
	for _, w := range intent.VagueWords() {
		stems = append(stems, text.Stem(w))
	}
	return stems
}

// mostUsed returns the surface form used most often, the alphabetically
// first on ties, so the term shown is one the papers really use.
func mostUsed(words map[string]int) string {
	best, n := "", 0
	for w, c := range words {
		if c > n || c == n && w < best {
			best, n = w, c
		}
	}
	return best
}

// firstN is the first n elements of list.
func firstN(list []string, n int) []string { return list[:min(len(list), n)] }

func uniqueTrimmed(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func trimAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s = strings.Join(strings.Fields(strings.ReplaceAll(s, `"`, " ")), " "); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// QuestionWords are the distinct content words of a question (no stop
// words, numbers or single letters), in order, at most
// research.MaxQuestionWords.
func QuestionWords(topic string) []string {
	var out []string
	for _, w := range text.Words(topic) {
		if len(out) == research.MaxQuestionWords {
			break
		}
		if len(w) < 2 || text.IsStopword(w) || strings.IndexFunc(w, unicode.IsLetter) < 0 || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}
