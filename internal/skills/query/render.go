package query

import (
	"slices"
	"strings"
	"unicode"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// Source names the renderers know. They are the names strategies, the
// searcher and the settings use, so one constant serves all of them.
const (
	Local           = research.SourceLocal           // the local library (FTS5 MATCH syntax)
	OpenAlex        = research.SourceOpenAlex        // api.openalex.org/works?search=
	SemanticScholar = research.SourceSemanticScholar // api.semanticscholar.org/graph/v1/paper/search?query=
	Arxiv           = research.SourceArxiv           // export.arxiv.org/api/query?search_query=
	Crossref        = research.SourceCrossref        // api.crossref.org/works?query.bibliographic=
	PubMed          = research.SourcePubMed          // eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi?term=
	SerpAPIScholar  = research.SourceSerpAPIScholar  // serpapi.com/search?engine=google_scholar&q=
)

// Sources returns the source names that have a renderer, in a fixed order:
// every source Quarry knows.
func Sources() []string { return research.Sources() }

// Render returns q exactly as source receives it (before URL encoding).
// Unknown sources and invalid queries are fault.EInvalid.
func Render(source string, q AST) (string, error) {
	if err := q.Validate(); err != nil {
		return "", err
	}
	st, ok := style(source)
	if !ok {
		return "", fault.Errorf(fault.EInvalid, "no query renderer for source %q", source)
	}
	out := st(q)
	if out == "" {
		return "", fault.Errorf(fault.EInvalid, "the query has no term that %s can search", source)
	}
	return out, nil
}

// RenderAll renders q for every source in sources, so a strategy can record
// what each source was really sent. A source without a renderer (one added
// to the configuration after this package) receives the canonical text,
// which is the most neutral form available. An empty string means the query
// has nothing that source can search (e.g. only punctuation), and the
// searcher should skip it.
func RenderAll(q AST, sources []string) map[string]string {
	out := make(map[string]string, len(sources))
	for _, src := range sources {
		if st, ok := style(src); ok {
			out[src] = st(q)
		} else {
			out[src] = q.String()
		}
	}
	return out
}

// Unexcluded lists the excluded terms of q that source's rendering cannot
// carry: every one for the sources whose search has no exclusion syntax
// (Crossref, Semantic Scholar's relevance search; see renderWords), none
// for the rest. The searcher leaves the papers that use one of them out
// of that source's results after retrieval, and says so, so an exclusion
// holds for every source even where the request cannot say it.
func Unexcluded(source string, q AST) []Term {
	if source != Crossref && source != SemanticScholar {
		return nil
	}
	var out []Term
	for _, c := range q.Clauses {
		if c.Not {
			out = append(out, c.Any...)
		}
	}
	return out
}

// Unsent lists the included terms of q that source's rendering leaves out,
// for the report to say: Semantic Scholar's relevance search takes plain
// words and returns little or nothing for a long bag of them (s2-folks
// issue 212), so it is sent each included concept's main (first) term
// and not its alternatives (renderMainWords). None for the other sources.
func Unsent(source string, q AST) []Term {
	if source != SemanticScholar {
		return nil
	}
	var out []Term
	for _, c := range q.Clauses {
		if !c.Not && len(c.Any) > 1 {
			out = append(out, c.Any[1:]...)
		}
	}
	return out
}

// truncation reads a term written with a trailing wildcard (child*): the
// stem, and whether it is one.
func truncation(t Term) (string, bool) {
	stem := strings.TrimRight(t.Text, "*")
	if t.Phrase || stem == t.Text || !plainWord(stem) {
		return "", false
	}
	return stem, true
}

// stripTruncation sends a truncated term as its stem, for sources that
// have no truncation: OpenAlex removes the wildcard itself (and quoted, it
// searched the phrase "child*"), Google Scholar has none.
func stripTruncation(term func(Term) string) func(Term) string {
	return func(t Term) string {
		if stem, ok := truncation(t); ok {
			t.Text = stem
		}
		return term(t)
	}
}

// Stripped lists the truncated terms (child*) source searches as their
// stem, for the report to say: every source but PubMed, which truncates.
// (The local library's full-text index drops the "*" of a quoted term:
// its rendering must stay one the query parser reads, see
// TestRenderShapeProperty.)
func Stripped(source string, q AST) []Term {
	if source == PubMed {
		return nil
	}
	var out []Term
	for _, c := range q.Clauses {
		for _, t := range c.Any {
			if _, ok := truncation(t); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

func style(source string) (func(AST) string, bool) {
	switch source {
	case Local:
		return renderLocal, true
	case OpenAlex:
		return boolean{term: stripTruncation(quoteIfNeeded(`"\`)), and: " AND ", or: " OR ", parens: true, not: " NOT "}.render, true
	case SemanticScholar:
		return renderMainWords, true
	case Arxiv:
		return boolean{term: arxivTerm, and: " AND ", or: " OR ", parens: true, not: " ANDNOT "}.render, true
	case Crossref:
		return renderWords, true
	case PubMed:
		return boolean{term: pubmedTerm, and: " AND ", or: " OR ", parens: true, not: " NOT "}.render, true
	case SerpAPIScholar:
		// Google gives OR a tighter binding than the implicit AND and has no
		// documented parentheses, so groups are written bare.
		return boolean{term: stripTruncation(quoteIfNeeded(`"`)), and: " ", or: " OR ", parens: false, not: " -"}.render, true
	}
	return nil, false
}

// boolean renders the sources that share the same shape: included clauses
// joined by an AND operator, OR groups, then every exclusion appended with a
// NOT operator. Exclusions always come last because several sources (FTS5,
// PubMed, arXiv's ANDNOT) only have a binary NOT. An excluded group
// -(a OR b) is written as NOT a NOT b, which means the same and works
// everywhere.
type boolean struct {
	term   func(Term) string // "" drops a term that has nothing left to search
	and    string
	or     string
	parens bool
	not    string
	// wrap puts parentheses around several included clauses when
	// exclusions follow (FTS5 binds NOT tighter than AND).
	wrap bool
}

func (b boolean) render(q AST) string {
	var pos, neg []string
	for _, c := range q.Clauses {
		var alts []string
		for _, t := range c.Any {
			if s := b.term(t); s != "" {
				alts = append(alts, s)
			}
		}
		if len(alts) == 0 {
			continue
		}
		if c.Not {
			neg = append(neg, alts...)
			continue
		}
		g := strings.Join(alts, b.or)
		if len(alts) > 1 && b.parens {
			g = "(" + g + ")"
		}
		pos = append(pos, g)
	}
	if len(pos) == 0 {
		return ""
	}
	out := strings.Join(pos, b.and)
	if b.wrap && len(pos) > 1 && len(neg) > 0 {
		out = "(" + out + ")"
	}
	for _, n := range neg {
		out += b.not + n
	}
	return out
}

// renderLocal writes SQLite FTS5 MATCH syntax. Every term is a string
// literal with embedded quotes doubled, so no character a researcher types
// (column filters, *, ^, NEAR, a stray quote) can change the expression.
//
// A hyphenated word also matches its joined spelling ("pre-training" OR
// "pretraining"): the library indexes the joined form of every hyphenated
// word it holds (research.Compounds), so a joined query word already finds
// the hyphenated spelling, and this finds the joined one.
func renderLocal(q AST) string {
	q = withJoinedCompounds(q)
	return boolean{term: func(t Term) string {
		return `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
	}, and: " AND ", or: " OR ", parens: true, not: " NOT ", wrap: true}.render(q)
}

// withJoinedCompounds returns q with the joined spelling added as an
// alternative to every term that is one hyphenated word.
func withJoinedCompounds(q AST) AST {
	out := AST{Clauses: make([]Clause, len(q.Clauses))}
	for i, c := range q.Clauses {
		c.Any = slices.Clone(c.Any)
		for _, t := range c.Any {
			joined := research.Compounds(t.Text)
			if len(joined) != 1 || strings.ContainsFunc(t.Text, unicode.IsSpace) ||
				slices.ContainsFunc(c.Any, func(o Term) bool { return strings.EqualFold(o.Text, joined[0]) }) {
				continue
			}
			c.Any = append(c.Any, Term{Text: joined[0], Phrase: t.Phrase})
		}
		out.Clauses[i] = c
	}
	return out
}

// renderWords writes a bag of words for the sources whose relevance search
// has no boolean syntax (Crossref's query.bibliographic; Semantic Scholar's
// /paper/search, which also matches nothing for a hyphenated word, takes
// renderMainWords): every
// word of every included term (alternatives too, since they help ranking)
// once, in order, hyphenated words split. Exclusions are dropped because
// these sources cannot express them; the relevance scorer is what keeps
// excluded topics down for them.
func renderWords(q AST) string {
	seen := map[string]bool{}
	var words []string
	for _, c := range q.Clauses {
		if c.Not {
			continue
		}
		for _, t := range c.Any {
			for _, w := range strings.FieldsFunc(t.Text, func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r)
			}) {
				if k := strings.ToLower(w); !seen[k] {
					seen[k] = true
					words = append(words, w)
				}
			}
		}
	}
	return strings.Join(words, " ")
}

// renderMainWords is renderWords over each included concept's main term
// only (see Unsent).
func renderMainWords(q AST) string {
	main := AST{}
	for _, c := range q.Clauses {
		if !c.Not && len(c.Any) > 0 {
			c.Any = c.Any[:1]
			main.Clauses = append(main.Clauses, c)
		}
	}
	return renderWords(main)
}

// plainWord reports whether text is letters and digits only, the one shape
// every source reads as a single ordinary term.
func plainWord(text string) bool {
	if text == "" || isOperator(text) || text == "ANDNOT" {
		return false
	}
	for _, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// quoteIfNeeded writes plain words bare and everything else as a quoted
// phrase with the characters in drop removed (they would end or escape the
// phrase).
func quoteIfNeeded(drop string) func(Term) string {
	return func(t Term) string {
		if !t.Phrase && plainWord(t.Text) {
			return t.Text
		}
		return quoted(t.Text, drop)
	}
}

func quoted(text, drop string) string {
	clean := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if strings.ContainsRune(drop, r) || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text)), " ")
	if strings.IndexFunc(clean, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return `"` + clean + `"`
}

// arxivTerm searches all fields: all:word or all:"a phrase".
func arxivTerm(t Term) string {
	if stem, ok := truncation(t); ok {
		t.Text = stem // arXiv documents no truncation (see Stripped)
	}
	if !t.Phrase && plainWord(t.Text) {
		return "all:" + t.Text
	}
	if s := quoted(t.Text, `"\`); s != "" {
		return "all:" + s
	}
	return ""
}

// pubmedTerm restricts every term to title and abstract ([tiab]), matching
// what the other sources search; brackets are removed so a term cannot
// inject its own field tag.
func pubmedTerm(t Term) string {
	if stem, ok := truncation(t); ok {
		return stem + "*[tiab]" // PubMed's truncation
	}
	if !t.Phrase && plainWord(t.Text) {
		return t.Text + "[tiab]"
	}
	if s := quoted(t.Text, `"[]\`); s != "" {
		return s + "[tiab]"
	}
	return ""
}
