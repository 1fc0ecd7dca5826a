// Package research is the domain centre: what a literature search is about
// (intent, concepts, years), how it searches (strategy, queries, filters),
// what it finds (papers, collections, groups) and what the researcher says
// of it (feedback), each with its validation. It imports nothing of Quarry's
// but fault, so file formats, skills, the store and the web layer can all
// share these types without depending on one another.
package research

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"quarry/internal/fault"
)

// YearRange bounds publication years; zero on either side means open.
type YearRange struct {
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
}

// Validate checks that the range is ordered and plausible.
func (y YearRange) Validate(fe fault.FieldErrors, prefix string) {
	if y.From != 0 && (y.From < 1000 || y.From > 3000) {
		fe.Add(prefix+".from", "year must be between 1000 and 3000")
	}
	if y.To != 0 && (y.To < 1000 || y.To > 3000) {
		fe.Add(prefix+".to", "year must be between 1000 and 3000")
	}
	if y.From != 0 && y.To != 0 && y.From > y.To {
		fe.Add(prefix+".from", fmt.Sprintf("from (%d) is after to (%d)", y.From, y.To))
	}
}

// Contains reports whether year lies in the range; an unknown year (0) is
// kept, because dropping papers for missing metadata hides them silently.
func (y YearRange) Contains(year int) bool {
	if year == 0 {
		return true
	}
	return (y.From == 0 || year >= y.From) && (y.To == 0 || year <= y.To)
}

// Concept is one key idea of a question with the other words people use for it.
type Concept struct {
	Term     string   `json:"term"`
	Synonyms []string `json:"synonyms,omitempty"`
}

// ConceptList renders concepts with their synonyms as "a (x, y); b", the
// one way pages and reports write an intent's concepts.
func ConceptList(cs []Concept) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		t := c.Term
		if len(c.Synonyms) > 0 {
			t += " (" + strings.Join(c.Synonyms, ", ") + ")"
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}

// ParsedIntent is what the researcher asked, made explicit.
type ParsedIntent struct {
	Topic         string    `json:"topic"`
	Concepts      []Concept `json:"concepts"`
	YearRange     YearRange `json:"year_range"`
	IncludeTerms  []string  `json:"include_terms,omitempty"`
	ExcludeTerms  []string  `json:"exclude_terms,omitempty"`
	FieldsOfStudy []string  `json:"fields_of_study,omitempty"`
	StudyTypes    []string  `json:"study_types,omitempty"`
}

// Validate reports every problem with the intent.
func (p ParsedIntent) Validate() error {
	fe := fault.FieldErrors{}
	if strings.TrimSpace(p.Topic) == "" {
		fe.Add("topic", "topic is required")
	}
	for i, c := range p.Concepts {
		if strings.TrimSpace(c.Term) == "" {
			fe.Add(fmt.Sprintf("concepts[%d].term", i), "concept term is empty")
		}
	}
	p.YearRange.Validate(fe, "year_range")
	return fe.Err("invalid intent")
}

// Query is one search query: the researcher-facing text and the text exactly
// as each source receives it (sources differ in syntax), so a review can
// report what was really sent.
type Query struct {
	Text      string            `json:"text"`
	PerSource map[string]string `json:"per_source,omitempty"`
}

// Filters narrow a search beyond the queries themselves.
type Filters struct {
	IncludeTerms []string `json:"include_terms,omitempty"`
	// ExcludeTerms are every exclusion the strategy applies, the ones it
	// learned included: they are what its queries negate, what the
	// strategy form lets the researcher remove and what the report must
	// list as searched.
	ExcludeTerms []string `json:"exclude_terms,omitempty"`
	// LearnedExcludeTerms names those of ExcludeTerms a query builder
	// learned from the papers marked irrelevant rather than took from the
	// researcher. They are not carried to the next build as the
	// researcher's (ResearcherExcludeTerms): the builder learns them again
	// from all marks so far, so one a later relevant paper uses is
	// dropped. Strategies stored before it existed have none, so all
	// their exclusions count as the researcher's, as they did then.
	LearnedExcludeTerms []string `json:"learned_exclude_terms,omitempty"`
	// Learned is every term a query builder inferred rather than was
	// given (learned exclusions and expansion terms), each with where it
	// came from, so the strategy form can show why it is there and the
	// researcher can remove it. Strategies stored before it existed have
	// none.
	Learned       []LearnedTerm `json:"learned,omitempty"`
	FieldsOfStudy []string      `json:"fields_of_study,omitempty"`
	StudyTypes    []string      `json:"study_types,omitempty"`
}

// How a strategy uses a learned term (LearnedTerm.Use).
const (
	// LearnedExclude: negated in every query (and listed in
	// Filters.ExcludeTerms and LearnedExcludeTerms).
	LearnedExclude = "exclude"
	// LearnedExpand: searched beside the question's first concept in
	// the expansion query.
	LearnedExpand = "expand"
)

// LearnedTerm is a term a query builder learned from the researcher's
// marks or read in their free-text feedback, with its provenance.
type LearnedTerm struct {
	Term string `json:"term"`
	// Use is LearnedExclude or LearnedExpand.
	Use string `json:"use"`
	// Papers are the IDs of the marked papers it was learned from (those
	// that use it): relevant ones for an expansion, irrelevant ones for
	// an exclusion.
	Papers []string `json:"papers,omitempty"`
	// Feedback is the researcher's free text it was read from, when it
	// was read rather than learned from papers.
	Feedback string `json:"feedback,omitempty"`
}

// ResearcherExcludeTerms are the exclusions the researcher asked for (or
// kept from the question): ExcludeTerms without the learned ones.
func (f Filters) ResearcherExcludeTerms() []string {
	var out []string
	for _, t := range f.ExcludeTerms {
		if !slices.ContainsFunc(f.LearnedExcludeTerms, func(l string) bool { return sameTerm(l, t) }) {
			out = append(out, t)
		}
	}
	return out
}

// sameTerm reports whether a and b are one term as people type them:
// equal but for case and spacing ("Case  report" is "case report").
func sameTerm(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// Limits on one strategy. Every query is one request to every source at
// every iteration, and every include or exclude term is written into every
// query, so without them one edit (10,000 queries) holds the sources for
// hours and the run for as long. They are checked by Validate with the
// rest of the strategy, so an edit over one is refused (422) naming the
// field and the limit, all problems at once. An oversized list reports
// its length, and only its first MaxX elements are checked one by one,
// so the answer stays small.
const (
	// MaxQueries is the most queries a strategy may hold: a builder
	// proposes three to five; 20 leaves a researcher room for many
	// variants while bounding one iteration to 20 requests per source.
	MaxQueries = 20
	// MaxQueryTerms is the most terms (words and "quoted phrases",
	// operators not counted: see QueryTerms) one query may hold. A built
	// query carries up to four concepts of six alternatives plus every
	// include and exclude term, so it is well above 24 + 2×MaxFilterTerms;
	// sources reject far longer queries anyway (PubMed, arXiv: URL length).
	MaxQueryTerms = 100
	// MaxFilterTerms is the most include terms, and the most exclude terms,
	// a strategy may hold: each one is written into every query.
	MaxFilterTerms = 25
	// MaxSources is the most sources a strategy may name: each at most
	// once, and only the ones Quarry knows (ValidateSources checks which),
	// so it is len(Sources()) (a test keeps them equal).
	MaxSources = 7
	// MaxFiles is the most files attached to one run's strategy.
	MaxFiles = 20
	// MaxFieldsOfStudy is the most fields of study a strategy may be
	// restricted to: Semantic Scholar, the source that filters by them,
	// knows 23, so 25 holds every one it could use.
	MaxFieldsOfStudy = 25
	// MaxStudyTypes is the most study types a strategy may name: the
	// focused query ORs them, with their synonyms, into one clause of a
	// few alternatives, so a longer list only grows the stored strategy.
	MaxStudyTypes = 10
	// MaxTermLength is the longest include, exclude or learned term,
	// field of study and study type, in characters, and the longest term
	// a review may add or exclude: a term is a word or a phrase (the
	// longest MeSH headings and OpenAlex field names are under 100), and
	// each include and exclude term is written into every query, so one
	// pasted paragraph would lengthen every request to every source.
	MaxTermLength = 100
	// MaxQueryLength is the longest query text, in characters. A query
	// is at most MaxQueryTerms terms, but one "quoted phrase" is one
	// term however long; 10,000 holds every include and exclude term at
	// MaxTermLength (5,000) with room for the concepts, and sources
	// refuse far longer requests anyway (URL length).
	MaxQueryLength = 10000
)

// checkLengths reports each term longer than MaxTermLength as an error on
// field[i]; callers pass at most a list's limit of its terms.
func checkLengths(fe fault.FieldErrors, field string, terms []string) {
	for i, t := range terms {
		if n := utf8.RuneCountInString(t); n > MaxTermLength {
			fe.Add(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%d characters; a term has at most %d", n, MaxTermLength))
		}
	}
}

// atMost is the first n elements of xs, for checking an oversized list's
// elements without answering with one error per element.
func atMost[T any](xs []T, n int) []T { return xs[:min(len(xs), n)] }

// QueryTerms counts the terms of a query in Quarry's query language the
// cheap way, without parsing it (the parser lives in skills/query, which
// the centre must not import): every "quoted phrase" and every bare word
// with a letter or digit counts once, the operators AND, OR and NOT and
// the punctuation around terms (parentheses, a leading -) do not. An
// unparseable query still gets a count; the parser refuses it later.
func QueryTerms(text string) int {
	n := 0
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		switch {
		case r == '"':
			end := strings.IndexByte(text[1:], '"')
			if end < 0 {
				end = len(text) - 1
			}
			if strings.IndexFunc(text[1:1+end], isWordRune) >= 0 {
				n++
			}
			text = text[min(len(text), end+2):]
			continue
		case unicode.IsSpace(r) || r == '(' || r == ')':
			text = text[size:]
			continue
		}
		end := strings.IndexFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == ')' || r == '"' })
		if end < 0 {
			end = len(text)
		}
		word := text[:end]
		if word != "AND" && word != "OR" && word != "NOT" && strings.IndexFunc(word, isWordRune) >= 0 {
			n++
		}
		text = text[end:]
	}
	return n
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// MaxResultsLimit caps max_results_per_source so one strategy cannot ask a
// source for an unbounded page count.
const MaxResultsLimit = 1000

// SearchStrategy is what will be searched: queries, sources, filters.
type SearchStrategy struct {
	Queries             []Query   `json:"queries"`
	Sources             []string  `json:"sources"`
	YearRange           YearRange `json:"year_range"`
	MaxResultsPerSource int       `json:"max_results_per_source"`
	Filters             Filters   `json:"filters"`
	// Files are exports from other databases the researcher attached; their
	// records join every search's results, so they are deduplicated,
	// scored and reviewed with the searched ones.
	Files []AttachedFile `json:"files,omitempty"`
	// QuestionWords are the content words of the question the strategy
	// was built for. The local library ranks by them beside each query
	// (a long question's criteria name what its concepts leave out);
	// online sources get the queries alone.
	QuestionWords []string `json:"question_words,omitempty"`
}

// MaxQuestionWords bounds SearchStrategy.QuestionWords.
const MaxQuestionWords = 100

// AttachedFile names a file attached to a run. Its records are stored once
// with the run (the strategy only refers to them), so a large export does
// not bloat every strategy, decision and history entry.
type AttachedFile struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Format  string `json:"format"`
	Records int    `json:"records"`
}

// FileSourceName is how an attached file is named among a search's
// sources (in per-source counts, progress and the search report).
func FileSourceName(f AttachedFile) string { return "file: " + f.Name }

// RecordError is a record of a bibliographic file that was left out, with
// where and why, so a researcher can find and fix it in the file. An
// import's report and a file attached to a run both list them.
type RecordError struct {
	// Origin is the file the line is in (an import may span several).
	Origin string `json:"origin,omitempty"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// Validate checks the strategy's shape. Whether each source exists is
// checked by ValidateSources, because only the configuration knows that.
func (s SearchStrategy) Validate() error {
	fe := fault.FieldErrors{}
	s.validate(fe)
	return fe.Err("invalid search strategy")
}

// ValidateSources is Validate plus a check that every source is one of known.
func (s SearchStrategy) ValidateSources(known []string) error {
	fe := fault.FieldErrors{}
	s.validate(fe)
	for i, src := range s.Sources {
		switch {
		case contains(known, src):
		case slices.Contains(Sources(), src):
			// Known to Quarry, but the operator has not enabled it: say so,
			// or the researcher hunts for a typo that is not there.
			fe.Add(fmt.Sprintf("sources[%d]", i), fmt.Sprintf("source %q is not enabled on this server (enabled: %s; an operator enables it in QUARRY_SOURCES or the config file's \"sources\")", src, strings.Join(known, ", ")))
		default:
			fe.Add(fmt.Sprintf("sources[%d]", i), fmt.Sprintf("unknown source %q", src))
		}
	}
	return fe.Err("invalid search strategy")
}

func (s SearchStrategy) validate(fe fault.FieldErrors) {
	if n := len(s.QuestionWords); n > MaxQuestionWords {
		fe.Add("question_words", fmt.Sprintf("%d words; a strategy keeps at most %d of its question", n, MaxQuestionWords))
	}
	for i, w := range atMost(s.QuestionWords, MaxQuestionWords) {
		if n := utf8.RuneCountInString(w); n == 0 || n > MaxTermLength {
			fe.Add(fmt.Sprintf("question_words[%d]", i), fmt.Sprintf("a word of 1 to %d characters", MaxTermLength))
		}
	}
	switch {
	case len(s.Queries) == 0:
		fe.Add("queries", "at least one query is required")
	case len(s.Queries) > MaxQueries:
		fe.Add("queries", fmt.Sprintf("%d queries; a strategy has at most %d (each is one request per source)", len(s.Queries), MaxQueries))
	}
	for i, q := range atMost(s.Queries, MaxQueries) {
		switch n, chars := QueryTerms(q.Text), utf8.RuneCountInString(q.Text); {
		case strings.TrimSpace(q.Text) == "":
			fe.Add(fmt.Sprintf("queries[%d].text", i), "query is empty")
		case chars > MaxQueryLength:
			fe.Add(fmt.Sprintf("queries[%d].text", i), fmt.Sprintf("%d characters; a query has at most %d", chars, MaxQueryLength))
		case n > MaxQueryTerms:
			fe.Add(fmt.Sprintf("queries[%d].text", i), fmt.Sprintf("%d terms; a query has at most %d", n, MaxQueryTerms))
		}
	}
	switch {
	case len(s.Sources) == 0:
		fe.Add("sources", "at least one source is required")
	case len(s.Sources) > MaxSources:
		fe.Add("sources", fmt.Sprintf("%d sources; a strategy has at most %d (the sources Quarry knows)", len(s.Sources), MaxSources))
	}
	for field, terms := range map[string][]string{
		"filters.include_terms":         s.Filters.IncludeTerms,
		"filters.exclude_terms":         s.Filters.ExcludeTerms,
		"filters.learned_exclude_terms": s.Filters.LearnedExcludeTerms,
	} {
		if len(terms) > MaxFilterTerms {
			fe.Add(field, fmt.Sprintf("%d terms; a strategy has at most %d", len(terms), MaxFilterTerms))
		}
		checkLengths(fe, field, atMost(terms, MaxFilterTerms))
	}
	if n := len(s.Filters.Learned); n > 2*MaxFilterTerms {
		fe.Add("filters.learned", fmt.Sprintf("%d learned terms; a strategy has at most %d", n, 2*MaxFilterTerms))
	}
	for i, l := range atMost(s.Filters.Learned, 2*MaxFilterTerms) {
		if n := utf8.RuneCountInString(l.Term); n > MaxTermLength || strings.TrimSpace(l.Term) == "" {
			fe.Add(fmt.Sprintf("filters.learned[%d].term", i), fmt.Sprintf("%d characters; a term has 1 to %d", n, MaxTermLength))
		}
		if l.Use != LearnedExclude && l.Use != LearnedExpand {
			fe.Add(fmt.Sprintf("filters.learned[%d].use", i), fmt.Sprintf("use %q is neither %q nor %q", l.Use, LearnedExclude, LearnedExpand))
		}
	}
	if n := len(s.Filters.FieldsOfStudy); n > MaxFieldsOfStudy {
		fe.Add("filters.fields_of_study", fmt.Sprintf("%d fields of study; a strategy has at most %d", n, MaxFieldsOfStudy))
	}
	checkLengths(fe, "filters.fields_of_study", atMost(s.Filters.FieldsOfStudy, MaxFieldsOfStudy))
	if n := len(s.Filters.StudyTypes); n > MaxStudyTypes {
		fe.Add("filters.study_types", fmt.Sprintf("%d study types; a strategy has at most %d", n, MaxStudyTypes))
	}
	checkLengths(fe, "filters.study_types", atMost(s.Filters.StudyTypes, MaxStudyTypes))
	if len(s.Files) > MaxFiles {
		fe.Add("files", fmt.Sprintf("%d files attached; a strategy has at most %d", len(s.Files), MaxFiles))
	}
	seen := map[string]bool{}
	for i, src := range atMost(s.Sources, MaxSources) {
		if strings.TrimSpace(src) == "" {
			fe.Add(fmt.Sprintf("sources[%d]", i), "source name is empty")
		}
		if seen[src] {
			fe.Add(fmt.Sprintf("sources[%d]", i), fmt.Sprintf("source %q is listed twice", src))
		}
		seen[src] = true
	}
	files := map[string]bool{}
	for i, f := range atMost(s.Files, MaxFiles) {
		switch {
		case strings.TrimSpace(f.ID) == "":
			fe.Add(fmt.Sprintf("files[%d].id", i), "attached file has no id")
		case files[f.ID]:
			fe.Add(fmt.Sprintf("files[%d].id", i), fmt.Sprintf("file %q is attached twice", f.Name))
		}
		files[f.ID] = true
	}
	s.YearRange.Validate(fe, "year_range")
	if s.MaxResultsPerSource < 1 || s.MaxResultsPerSource > MaxResultsLimit {
		fe.Add("max_results_per_source", fmt.Sprintf("must be between 1 and %d", MaxResultsLimit))
	}
}

// AuthorName is one author's name split as a source gave it: a person's
// family and given names, or an organisation's name whole (Literal).
type AuthorName struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Literal string `json:"literal,omitempty"`
}

// RawPaper is one record as a source returned it (or as dedup merged it).
type RawPaper struct {
	// ID is stable across runs and sources: see StableID.
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	// AuthorNames is the split of Authors as the source gave it (PubMed's
	// LastName and ForeName, Crossref's family and given), one per
	// author in the same order; nil when the source gave display names
	// only, and then an export guesses the split.
	AuthorNames []AuthorName `json:"author_names,omitempty"`
	Year        int          `json:"year,omitempty"`
	Venue       string       `json:"venue,omitempty"`
	// Volume, Issue and Pages locate a journal article; dedup uses them to
	// tell a conference abstract from the journal paper of the same title.
	Volume   string `json:"volume,omitempty"`
	Issue    string `json:"issue,omitempty"`
	Pages    string `json:"pages,omitempty"`
	Abstract string `json:"abstract,omitempty"`
	DOI      string `json:"doi,omitempty"`
	ArxivID  string `json:"arxiv_id,omitempty"`
	PMID     string `json:"pmid,omitempty"`
	URL      string `json:"url,omitempty"`
	// Source is the source that returned this record; Rank its 1-based
	// position in that source's results.
	Source string `json:"source"`
	Rank   int    `json:"rank,omitempty"`
	// Sources lists every source a merged record was found in.
	Sources []string `json:"sources,omitempty"`
	// Related lists IDs of records that look like versions of this one
	// (a preprint and its publication) but were deliberately not merged.
	Related []string `json:"related,omitempty"`
}

// Validate checks that a paper can be shown and referred to.
func (p RawPaper) Validate() error {
	fe := fault.FieldErrors{}
	if p.ID == "" {
		fe.Add("id", "paper id is required")
	}
	if strings.TrimSpace(p.Title) == "" {
		fe.Add("title", "title is required")
	}
	if p.Year < 0 || p.Year > 3000 {
		fe.Add("year", "year out of range")
	}
	return fe.Err("invalid paper")
}

// StableID derives an identifier that is the same whichever source returned
// the paper: DOI first, then arXiv ID, then PMID, then a hash of the
// normalised title, year and first author.
func StableID(p RawPaper) string {
	switch {
	case NormalizeDOI(p.DOI) != "":
		return "doi:" + NormalizeDOI(p.DOI)
	case NormalizeArxivID(p.ArxivID) != "":
		return "arxiv:" + NormalizeArxivID(p.ArxivID)
	case strings.TrimSpace(p.PMID) != "":
		return "pmid:" + strings.TrimSpace(p.PMID)
	}
	first := ""
	if len(p.Authors) > 0 {
		first = p.Authors[0]
	}
	return "t:" + shortHash(fmt.Sprintf("%s|%d|%s", NormalizeTitle(p.Title), p.Year, strings.ToLower(strings.TrimSpace(first))))
}

// ScoredPaper is a paper with its relevance in [0,1] and the reasons for it.
type ScoredPaper struct {
	RawPaper
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons,omitempty"`
}

// Validate checks the paper and its score.
func (p ScoredPaper) Validate() error {
	if err := p.RawPaper.Validate(); err != nil {
		return err
	}
	if p.Score < 0 || p.Score > 1 || p.Score != p.Score {
		return fault.Errorf(fault.EInvalid, "paper %s: score %v outside [0,1]", p.ID, p.Score)
	}
	// A score the researcher cannot check is a score they cannot trust.
	if !slices.ContainsFunc(p.Reasons, func(r string) bool { return strings.TrimSpace(r) != "" }) {
		return fault.Errorf(fault.EInvalid, "paper %s: a score needs at least one reason", p.ID)
	}
	return nil
}

// Group is one labelled theme of a collection.
type Group struct {
	Label    string   `json:"label"`
	PaperIDs []string `json:"paper_ids"`
}

// SourceResult is what one source contributed to a search.
type SourceResult struct {
	// Count is the records the source contributed: its queries' results
	// merged, so a record two of its queries returned counts once. It is
	// not any one query's count (see QueryResults), and the queries'
	// counts can add up to more.
	Count int `json:"count"`
	// Error says why the source failed, wholly or for some queries.
	Error string `json:"error,omitempty"`
	// Warnings are what the source said about papers it did return (see
	// Warning), such as terms PubMed left out of a query; unlike Error
	// they do not mean the source failed.
	Warnings []string `json:"warnings,omitempty"`
	// Queries are the texts sent to the source, one per strategy query
	// ("" where the query was skipped), for reporting.
	Queries []string `json:"queries,omitempty"`
	// QueryResults is what each query returned, one per entry of Queries,
	// so a report can say what each query found rather than only what the
	// source did. Searches recorded before it existed have none beside
	// their Queries: their per-query counts are unknown (HasQueryResults).
	QueryResults []QueryResult `json:"query_results,omitempty"`
}

// HasQueryResults reports whether r records each of its queries' own
// results, which searches recorded before QueryResults existed do not.
func (r SourceResult) HasQueryResults() bool {
	return len(r.Queries) > 0 && len(r.QueryResults) == len(r.Queries)
}

// Found is how many records a source, or one of its queries, returned
// against how many it said match: what keeps a result cut at the limit
// from reading as everything there is.
type Found struct {
	// Shown is the records returned (SourceResult.Count, QueryResult.Count).
	Shown int `json:"shown"`
	// Total is how many the source said match; 0 when it did not say, or
	// when nothing was cut.
	Total int `json:"total,omitempty"`
	// UpTo is set when Total is an upper bound: the sum of several
	// queries' totals, whose matches overlap by an amount no source says.
	UpTo bool `json:"up_to,omitempty"`
}

// Capped reports whether more records match than were shown.
func (f Found) Capped() bool { return f.Total > f.Shown }

// String is the one way pages, the report and the API say it: "25 shown
// of 49 found", "50 shown of up to 83 found", or "12 found" when nothing
// was left out.
func (f Found) String() string {
	switch {
	case !f.Capped():
		return fmt.Sprintf("%d found", f.Shown)
	case f.UpTo:
		return fmt.Sprintf("%d shown of up to %d found", f.Shown, f.Total)
	}
	return fmt.Sprintf("%d shown of %d found", f.Shown, f.Total)
}

// HasMore reports whether any of the source's queries has another page
// (QueryResult.HasMore), which "Show more" at the review fetches.
func (r SourceResult) HasMore() bool {
	if !r.HasQueryResults() {
		return false
	}
	for i, q := range r.QueryResults {
		if strings.TrimSpace(r.Queries[i]) != "" && q.HasMore() {
			return true
		}
	}
	return false
}

// Pages is the most pages any of the source's queries fetched: 1 until
// "Show more" fetched a next page.
func (r SourceResult) Pages() int {
	n := 1
	for _, q := range r.QueryResults {
		n = max(n, q.PageCount())
	}
	return n
}

// WithPage adds a next page's result (page, one QueryResult per query as
// r has, a query with no next page counted 0) to r: counts add up, each
// query's total is the larger said, its pages and fetched records grow,
// and the page's errors and warnings are added to r's.
func (r SourceResult) WithPage(page SourceResult) SourceResult {
	out := r
	out.Count += page.Count
	out.Warnings = append(slices.Clone(r.Warnings), page.Warnings...)
	if page.Error != "" {
		out.Error = strings.TrimPrefix(r.Error+"; "+page.Error, "; ")
	}
	out.QueryResults = slices.Clone(r.QueryResults)
	for i := range out.QueryResults {
		if i >= len(page.QueryResults) {
			break
		}
		q, p := &out.QueryResults[i], page.QueryResults[i]
		if p.Pages == 0 && p.Fetched == 0 && p.Error == "" {
			continue // no next page was asked for this query
		}
		q.End = p.Fetched == 0 && p.Error == ""
		q.Fetched = q.Next() + p.Fetched
		q.Count += p.Count
		q.Total = max(q.Total, p.Total, q.Count)
		q.Pages = q.PageCount() + 1
		if p.Error != "" {
			q.Error = strings.TrimPrefix(q.Error+"; "+p.Error, "; ")
		}
		if p.Warning != "" {
			q.Warning = strings.TrimPrefix(q.Warning+"; "+p.Warning, "; ")
		}
	}
	return out
}

// Found is what the source returned against what it said match, from its
// queries' totals: exact for one query; for several, when any was cut at
// the limit, up to the sum of their totals (a query whose total is not
// known counting what it returned).
func (r SourceResult) Found() Found {
	f := Found{Shown: r.Count}
	if !r.HasQueryResults() {
		return f
	}
	sum, cut, sent := 0, false, 0
	for i, q := range r.QueryResults {
		if strings.TrimSpace(r.Queries[i]) != "" {
			sent++
		}
		sum += max(q.Total, q.Count)
		cut = cut || q.Found().Capped()
	}
	if !cut {
		return f
	}
	f.Total, f.UpTo = max(sum, r.Count), sent > 1
	return f
}

// QueryResult is what one query returned from one source.
type QueryResult struct {
	// Count is the records this query returned (at most the limit per
	// source), before the source's queries were merged: a record that
	// another query of the source also returned counts here too. Papers
	// a failing query returned with its error count; a query not sent
	// counts 0.
	Count int `json:"count"`
	// Error says why this query failed, or was not sent.
	Error string `json:"error,omitempty"`
	// Warning is what the source said about the papers this query
	// returned (see Warning); the query did not fail.
	Warning string `json:"warning,omitempty"`
	// Total is how many records the source said match this query in all
	// pages, of which Count were returned: Count < Total means the limit
	// cut the result. 0 when the source did not say, and for searches
	// recorded before totals were kept.
	Total int `json:"total,omitempty"`
	// Fetched is how many records the source sent for this query over
	// every page, before any was left out after retrieval: where its next
	// page starts. 0 for searches recorded before paging (Count then).
	Fetched int `json:"fetched,omitempty"`
	// Pages is how many pages of this query were fetched ("Show more"
	// fetches the next); 0 for searches recorded before paging, which
	// fetched one.
	Pages int `json:"pages,omitempty"`
	// End is set when a next page came back empty though the source's
	// total said more: an API that serves only its first results
	// (Semantic Scholar's relevance search ranks 1,000, Crossref's offset
	// stops at 10,000). Nothing more is offered; the total stays what the
	// source said, so the counts still show what was left out.
	End bool `json:"end,omitempty"`
}

// Next is where this query's next page starts: the records the source
// sent so far.
func (r QueryResult) Next() int { return max(r.Fetched, r.Count) }

// HasMore reports whether the source said more records match this query
// than it has sent: its next page would not be empty.
func (r QueryResult) HasMore() bool { return r.Error == "" && !r.End && r.Total > r.Next() }

// PageCount is the pages fetched, at least one.
func (r QueryResult) PageCount() int { return max(r.Pages, 1) }

// Found is what the query returned against what the source said match.
func (r QueryResult) Found() Found { return Found{Shown: r.Count, Total: r.Total} }

// DedupStats summarises a deduplication.
type DedupStats struct {
	Input   int `json:"input"`
	Output  int `json:"output"`
	Merged  int `json:"merged"`
	Related int `json:"related"`
}

// PaperCollection is the result of one iteration: scored papers grouped
// into themes, with what each source did.
type PaperCollection struct {
	Papers  []ScoredPaper           `json:"papers"`
	Groups  []Group                 `json:"groups"`
	Sources map[string]SourceResult `json:"sources"`
	Dedup   DedupStats              `json:"dedup"`
}

// Validate checks every paper, that IDs are unique, and that groups only
// name papers of the collection.
func (c PaperCollection) Validate() error {
	ids := make(map[string]bool, len(c.Papers))
	for _, p := range c.Papers {
		if err := p.Validate(); err != nil {
			return err
		}
		if ids[p.ID] {
			return fault.Errorf(fault.EInvalid, "paper %s appears twice in the collection", p.ID)
		}
		ids[p.ID] = true
	}
	for _, g := range c.Groups {
		if strings.TrimSpace(g.Label) == "" {
			return fault.Errorf(fault.EInvalid, "a group has no label")
		}
		for _, id := range g.PaperIDs {
			if !ids[id] {
				return fault.Errorf(fault.EInvalid, "group %q names paper %s, which is not in the collection", g.Label, id)
			}
		}
	}
	return nil
}

// Paper returns the paper with the given ID.
func (c PaperCollection) Paper(id string) (ScoredPaper, bool) {
	for _, p := range c.Papers {
		if p.ID == id {
			return p, true
		}
	}
	return ScoredPaper{}, false
}

// UserFeedback is what the researcher said at the result review.
type UserFeedback struct {
	MarkedRelevant   []string `json:"marked_relevant"`
	MarkedIrrelevant []string `json:"marked_irrelevant"`
	FreeTextFeedback string   `json:"free_text_feedback"`
	AddTerms         []string `json:"add_terms,omitempty"`
	ExcludeTerms     []string `json:"exclude_terms,omitempty"`
	// PaperNotes are the researcher's notes on single papers (paper ID →
	// note), kept with the run and carried into exports. An empty note
	// clears the paper's earlier note.
	PaperNotes map[string]string `json:"paper_notes,omitempty"`
}

// MaxPaperNote is the longest note on one paper, in characters: room for a
// screening rationale, short enough that a review form stays small.
const MaxPaperNote = 2000

// MaxMarks is the most papers one review decision may mark (relevant and
// irrelevant together), and the most paper notes it may carry: ten times a
// review's largest page of results (MaxResultsLimit per source), far
// above what a person marks at once, while bounding the work and the
// stored size of one request.
const MaxMarks = 5000

// MaxFeedbackTerms is the most terms one review may add or exclude
// (each list): they become the next strategy's filters, which hold at
// most MaxFilterTerms each, of at most MaxTermLength characters.
const MaxFeedbackTerms = MaxFilterTerms

// MaxPaperIDLength is the longest paper id a review may mark or note, in
// characters. Ids are a prefixed DOI, arXiv id or PMID, or a short hash
// (StableID), and DOIs run to a few hundred characters at most, so a
// longer id names no paper; it would only make the request, and the error
// naming it, as large as the sender likes.
const MaxPaperIDLength = 1000

// Validate checks that no paper is marked both ways and that the decision
// stays within MaxMarks, MaxFeedbackTerms, MaxTermLength and
// MaxPaperIDLength, reporting every problem.
func (f UserFeedback) Validate() error {
	fe := fault.FieldErrors{}
	if n := len(f.MarkedRelevant) + len(f.MarkedIrrelevant); n > MaxMarks {
		fe.Add("marks", fmt.Sprintf("%d papers marked; one decision marks at most %d", n, MaxMarks))
	}
	if len(f.PaperNotes) > MaxMarks {
		fe.Add("paper_notes", fmt.Sprintf("%d notes; one decision carries at most %d", len(f.PaperNotes), MaxMarks))
	}
	if len(f.AddTerms) > MaxFeedbackTerms {
		fe.Add("add_terms", fmt.Sprintf("%d terms; one decision adds at most %d", len(f.AddTerms), MaxFeedbackTerms))
	}
	if len(f.ExcludeTerms) > MaxFeedbackTerms {
		fe.Add("exclude_terms", fmt.Sprintf("%d terms; one decision excludes at most %d", len(f.ExcludeTerms), MaxFeedbackTerms))
	}
	if len(fe) > 0 {
		// Over a limit: the lists are refused whole, so checking each
		// element would only make the answer as large as the request.
		return fe.Err("invalid feedback")
	}
	checkLengths(fe, "add_terms", f.AddTerms)
	checkLengths(fe, "exclude_terms", f.ExcludeTerms)
	rel := map[string]bool{}
	for i, id := range f.MarkedRelevant {
		checkPaperID(fe, fmt.Sprintf("marked_relevant[%d]", i), id)
		rel[id] = true
	}
	for i, id := range f.MarkedIrrelevant {
		checkPaperID(fe, fmt.Sprintf("marked_irrelevant[%d]", i), id)
		if rel[id] {
			fe.Add(fmt.Sprintf("marked_irrelevant[%d]", i), fmt.Sprintf("paper %s is marked both relevant and irrelevant", id))
		}
	}
	if len(f.FreeTextFeedback) > 10000 {
		fe.Add("free_text_feedback", "feedback is longer than 10,000 characters")
	}
	for id, note := range f.PaperNotes {
		switch n := utf8.RuneCountInString(id); {
		case strings.TrimSpace(id) == "":
			fe.Add("paper_notes", "a note names no paper")
		case n > MaxPaperIDLength:
			// Not noteField(id): the field name would be the whole id.
			fe.Add("paper_notes", fmt.Sprintf("a note names a paper id of %d characters; a paper id has at most %d", n, MaxPaperIDLength))
		case utf8.RuneCountInString(note) > MaxPaperNote:
			fe.Add(noteField(id), fmt.Sprintf("the note is longer than %d characters", MaxPaperNote))
		}
	}
	return fe.Err("invalid feedback")
}

// ValidateAgainst is Validate plus a check that every marked paper is in c.
func (f UserFeedback) ValidateAgainst(c PaperCollection) error {
	if err := f.Validate(); err != nil {
		return err
	}
	fe := fault.FieldErrors{}
	in := make(map[string]bool, len(c.Papers)) // not c.Paper: MaxMarks lookups each scanning the collection
	for _, p := range c.Papers {
		in[p.ID] = true
	}
	for i, id := range f.MarkedRelevant {
		if !in[id] {
			fe.Add(fmt.Sprintf("marked_relevant[%d]", i), fmt.Sprintf("paper %s is not in this review's collection", id))
		}
	}
	for i, id := range f.MarkedIrrelevant {
		if !in[id] {
			fe.Add(fmt.Sprintf("marked_irrelevant[%d]", i), fmt.Sprintf("paper %s is not in this review's collection", id))
		}
	}
	for id := range f.PaperNotes {
		if !in[id] {
			fe.Add(noteField(id), fmt.Sprintf("paper %s is not in this review's collection", id))
		}
	}
	return fe.Err("invalid feedback")
}

// checkPaperID reports an empty or over-long paper id as an error on field;
// an over-long one is not quoted, or the error would be as long.
func checkPaperID(fe fault.FieldErrors, field, id string) {
	switch n := utf8.RuneCountInString(id); {
	case strings.TrimSpace(id) == "":
		fe.Add(field, "empty paper id")
	case n > MaxPaperIDLength:
		fe.Add(field, fmt.Sprintf("paper id of %d characters; a paper id has at most %d", n, MaxPaperIDLength))
	}
}

// noteField is the field path of a paper's note in validation errors, so
// a form can show the error next to that paper's note input.
func noteField(id string) string { return "paper_notes[" + id + "]" }

// IterationRecord is one pass through the loop, for history and reporting.
// The search fields (SearchedAt, Sources, Dedup) are what a PRISMA-S
// search-strategy report needs: when each source was asked, exactly what it
// was sent and what came back. They are zero for an iteration whose
// strategy was rejected before searching, and for runs recorded before they
// existed (the JSON stays decodable either way).
type IterationRecord struct {
	Iteration   int            `json:"iteration"`
	Strategy    SearchStrategy `json:"strategy"`
	ResultCount int            `json:"result_count"`
	Feedback    *UserFeedback  `json:"feedback,omitempty"`
	// SearchedAt is when the sources were asked, in UTC.
	SearchedAt time.Time `json:"searched_at,omitzero"`
	// Sources is what each source did: the queries as sent, its result
	// count and its error.
	Sources map[string]SourceResult `json:"sources,omitempty"`
	// Dedup is how the search's records were merged.
	Dedup DedupStats `json:"dedup,omitzero"`
}

// Searched reports whether the iteration's search ran. Records written
// before SearchedAt existed count as searched when they have results.
func (r IterationRecord) Searched() bool {
	return !r.SearchedAt.IsZero() || len(r.Sources) > 0 || r.ResultCount > 0
}

// WorkflowState is the search loop's memory across iterations.
type WorkflowState struct {
	CurrentIteration  int               `json:"current_iteration"`
	History           []IterationRecord `json:"history"`
	AccumulatedPapers []ScoredPaper     `json:"accumulated_papers"`
	IsComplete        bool              `json:"is_complete"`
	// PaperNotes holds each paper's latest note across iterations (paper
	// ID → note), so a note outlives the review it was written in.
	PaperNotes map[string]string `json:"paper_notes,omitempty"`
}

// RecordIteration appends one iteration to the history.
func (s *WorkflowState) RecordIteration(strategy SearchStrategy, resultCount int, feedback *UserFeedback) {
	s.History = append(s.History, IterationRecord{
		Iteration:   s.CurrentIteration,
		Strategy:    strategy,
		ResultCount: resultCount,
		Feedback:    feedback,
	})
}

// Accumulate adds papers not already accumulated (by ID).
func (s *WorkflowState) Accumulate(papers ...ScoredPaper) {
	have := make(map[string]bool, len(s.AccumulatedPapers))
	for _, p := range s.AccumulatedPapers {
		have[p.ID] = true
	}
	for _, p := range papers {
		if !have[p.ID] {
			s.AccumulatedPapers = append(s.AccumulatedPapers, p)
			have[p.ID] = true
		}
	}
}

// Validate checks the state's invariants.
func (s WorkflowState) Validate() error {
	if s.CurrentIteration < 0 {
		return fault.Errorf(fault.EInvalid, "current_iteration is negative")
	}
	seen := map[string]bool{}
	for _, p := range s.AccumulatedPapers {
		if err := p.Validate(); err != nil {
			return err
		}
		if seen[p.ID] {
			return fault.Errorf(fault.EInvalid, "accumulated paper %s appears twice", p.ID)
		}
		seen[p.ID] = true
	}
	for i, h := range s.History {
		if h.ResultCount < 0 {
			return fault.Errorf(fault.EInvalid, "history[%d]: negative result count", i)
		}
		if h.Iteration < 1 || (i > 0 && h.Iteration <= s.History[i-1].Iteration) {
			return fault.Errorf(fault.EInvalid, "history[%d]: iteration %d out of order", i, h.Iteration)
		}
		if err := h.Strategy.Validate(); err != nil {
			return fmt.Errorf("history[%d]: %w", i, err)
		}
		if h.Feedback != nil {
			if err := h.Feedback.Validate(); err != nil {
				return fmt.Errorf("history[%d]: %w", i, err)
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Source names, as strategies list them and SearchResult.Sources reports
// them. They are constants so the query renderers, the sources and the UI
// cannot drift apart on a spelling.
const (
	SourceLocal           = "local"
	SourceOpenAlex        = "openalex"
	SourceSemanticScholar = "semantic_scholar"
	SourceArxiv           = "arxiv"
	SourceCrossref        = "crossref"
	SourcePubMed          = "pubmed"
	SourceSerpAPIScholar  = "serpapi_scholar"
)

// Sources returns every source name Quarry knows, enabled or not, in a fixed
// order. It is a function returning a fresh slice so no caller can change the
// list for everyone.
func Sources() []string {
	return []string{SourceLocal, SourceOpenAlex, SourceSemanticScholar, SourceArxiv, SourceCrossref, SourcePubMed, SourceSerpAPIScholar}
}

// MaxQuestionLength bounds a research question; longer text is a document,
// not a question, and keyphrase extraction on it is meaningless.
const MaxQuestionLength = 2000

// DefaultMaxResultsPerSource is used when the run does not say how many
// results to ask each source for: enough to review, few enough to read.
const DefaultMaxResultsPerSource = 25

// LibraryHit is one paper a ranked library query matched: its row in the
// library (papers.docid) and its score there, higher is better. Ranked
// retrieval fuses several such lists before it reads any paper.
type LibraryHit struct {
	Doc   int64
	Score float64
}
