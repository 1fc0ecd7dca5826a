// Package query is Quarry's small canonical query language: the text a
// researcher sees and edits at the strategy checkpoint, its syntax tree, and
// one renderer per source that turns the tree into the exact string that
// source receives. Keeping one language (instead of per-source strings) means
// an edit made once reaches every source, and each renderer is the single
// place that knows a source's quirks.
//
// Canonical syntax, for example
//
//	sepsis "machine learning" (children OR paediatric OR "young people") -animal NOT "case report"
//
// The rules:
//   - words and "quoted phrases" are terms; groups are joined by an implicit
//     AND (an explicit AND between groups is accepted and dropped);
//   - (a OR b OR "c d") is an OR group; a OR b outside parentheses is read as
//     the group (a OR b), so OR binds tighter than AND, as in Google;
//   - -term, -"phrase", -(a OR b), NOT term and NOT (a OR b) exclude;
//   - AND, OR and NOT are operators only in upper case; to search for the
//     word itself, quote it ("OR") or write it in lower case.
//
// A query needs at least one term that is not excluded, because several
// sources (SQLite FTS5, PubMed) cannot run a pure negation, and every term
// needs a letter or digit: `*` or `-&` has nothing to search for, and an
// AND-ed term that matches nothing would make the local search find
// nothing at all.
//
// Other search engines' syntax is refused in a bare word rather than
// searched as text, because a researcher who types it expects it to work:
// ^ (boosting), { } (Scopus phrases), [ ] (PubMed field tags such as
// [tiab]), ~ (proximity, fuzzy matching) and | (OR). The error names the
// character and says what to write instead. Inside "quotes" every character
// is text ("[18F]FDG"); the sources, like the local index, treat punctuation
// as a space between words. * and ? inside a word (child*) and field
// prefixes (title:x) are sent as written: PubMed truncates child*, the
// local library reads it as the word child.
package query

import (
	"quarry/internal/fault"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLength bounds the canonical text a researcher may submit, so a pasted
// document cannot become a query that every source rejects.
const MaxLength = 4000

// AST is a parsed query: a conjunction of clauses. The zero value is an empty
// (invalid) query.
type AST struct {
	Clauses []Clause
}

// Clause is one AND-ed part of a query: a single term, or an OR group when it
// has several alternatives. Not excludes the whole clause.
type Clause struct {
	Not bool
	Any []Term
}

// Term is a word or a phrase. Phrase records that the researcher quoted it
// (an exact match where the source supports that); multi-word terms are
// always phrases. Text never contains a double quote or a control character
// and has its spaces collapsed: see NewTerm.
type Term struct {
	Text   string
	Phrase bool
}

// NewTerm returns the term for text, cleaned so that it always round-trips
// through String and Parse: double quotes and control characters become
// spaces, runs of spaces collapse, and text that could not be written as a
// bare word becomes a phrase. Builders that take words from paper titles use
// it so that no odd character can break the canonical form.
//
// Text with no letter or digit ("&", "*") becomes the empty term, which
// callers skip: it has nothing any source can search.
func NewTerm(text string, phrase bool) Term {
	cleaned := strings.Map(func(r rune) rune {
		if r == '"' || unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, text)
	cleaned = strings.Join(strings.Fields(cleaned), " ")
	if !searchable(cleaned) {
		return Term{}
	}
	return Term{Text: cleaned, Phrase: phrase || needsQuotes(cleaned)}
}

// Words returns one clause per term, unquoted, AND-ed: the simple query most
// callers start from. Terms with nothing to search are left out.
func Words(terms ...string) AST {
	var q AST
	for _, t := range terms {
		if term := NewTerm(t, false); term.Text != "" {
			q.Clauses = append(q.Clauses, Clause{Any: []Term{term}})
		}
	}
	return q
}

// searchable reports whether text has a letter or digit, the characters
// every source (and the local index's tokenizer) searches for.
func searchable(text string) bool {
	return strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// foreignSyntax explains each character other search engines give a
// meaning that this syntax does not have, for the error that refuses it in
// a bare word.
var foreignSyntax = map[rune]string{
	'^': "boosting (word^2) is not supported",
	'{': `braces do not make a phrase here; put the phrase in "double quotes"`,
	'}': `braces do not make a phrase here; put the phrase in "double quotes"`,
	'[': "field tags such as [tiab] are not supported",
	']': "field tags such as [tiab] are not supported",
	'~': `proximity and fuzzy matching (~) are not supported; a "quoted phrase" finds words next to each other`,
	'|': "write OR between alternatives",
}

// Positive reports whether the query has at least one clause that is not
// excluded.
func (q AST) Positive() bool {
	for _, c := range q.Clauses {
		if !c.Not && len(c.Any) > 0 {
			return true
		}
	}
	return false
}

// Validate checks what Parse guarantees, for trees built in code: at least
// one included clause, no empty clause or term, and terms in NewTerm's
// cleaned form (so String and Parse round-trip).
func (q AST) Validate() error {
	if len(q.Clauses) == 0 {
		return fault.Errorf(fault.EInvalid, "the query is empty")
	}
	if !q.Positive() {
		return fault.Errorf(fault.EInvalid, "the query only excludes; add at least one term to search for")
	}
	for i, c := range q.Clauses {
		if len(c.Any) == 0 {
			return fault.Errorf(fault.EInvalid, "clause %d is empty", i+1)
		}
		for _, t := range c.Any {
			if t.Text == "" {
				return fault.Errorf(fault.EInvalid, "clause %d has an empty term", i+1)
			}
			if !searchable(t.Text) {
				return fault.Errorf(fault.EInvalid, "term %q has no letter or digit to search for", t.Text)
			}
			if n := NewTerm(t.Text, t.Phrase); n != t {
				return fault.Errorf(fault.EInvalid, "term %q is not in canonical form (want %q)", t.Text, n.Text)
			}
		}
	}
	return nil
}

// String returns the canonical text: what the researcher sees at the
// checkpoint and what strategies are compared by. Parse(q.String()) returns q
// for every valid q. A clause with no terms (a builder's exclusion whose
// only term had nothing to search, see NewTerm) is left out, as every
// renderer leaves it out, rather than written as an unparseable "-()".
func (q AST) String() string {
	var b strings.Builder
	for _, c := range q.Clauses {
		if len(c.Any) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if c.Not {
			b.WriteByte('-')
		}
		if len(c.Any) == 1 {
			b.WriteString(c.Any[0].String())
			continue
		}
		b.WriteByte('(')
		for j, t := range c.Any {
			if j > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString(t.String())
		}
		b.WriteByte(')')
	}
	return b.String()
}

// String writes the term as a bare word or a quoted phrase.
func (t Term) String() string {
	if t.Phrase || needsQuotes(t.Text) {
		return `"` + t.Text + `"`
	}
	return t.Text
}

// Terms returns every term of the query in order, included and excluded
// alike, so callers can tell which words a query already uses.
func (q AST) Terms() []Term {
	var out []Term
	for _, c := range q.Clauses {
		out = append(out, c.Any...)
	}
	return out
}

// needsQuotes reports whether text cannot be written as a bare word: it has
// spaces, syntax characters or another engine's syntax (foreignSyntax),
// starts with '-', or is an operator.
func needsQuotes(text string) bool {
	if text == "" || strings.HasPrefix(text, "-") || isOperator(text) {
		return true
	}
	return strings.IndexFunc(text, func(r rune) bool {
		_, foreign := foreignSyntax[r]
		return foreign || unicode.IsSpace(r) || r == '(' || r == ')' || r == '"'
	}) >= 0
}

func isOperator(w string) bool { return w == "AND" || w == "OR" || w == "NOT" }

// Parse reads canonical query text. Errors are fault.EInvalid with a message
// a researcher can act on (unbalanced quotes or parentheses, a dangling OR or
// NOT, a query that only excludes, a term with nothing to search, another
// engine's syntax), naming the term and its position.
func Parse(text string) (AST, error) {
	if !utf8.ValidString(text) {
		return AST{}, fault.Errorf(fault.EInvalid, "the query is not valid UTF-8 text")
	}
	if len(text) > MaxLength {
		return AST{}, fault.Errorf(fault.EInvalid, "the query is longer than %d characters", MaxLength)
	}
	toks, err := lex(text)
	if err != nil {
		return AST{}, err
	}
	p := parser{toks: toks}
	q, err := p.query()
	if err != nil {
		return AST{}, err
	}
	if err := checkSearchable(toks); err != nil {
		return AST{}, err
	}
	if err := q.Validate(); err != nil {
		return AST{}, err
	}
	return q, nil
}

type tokKind int

const (
	tWord tokKind = iota
	tPhrase
	tLParen
	tRParen
	tMinus // '-' directly before a word, phrase or group
	tAnd
	tOr
	tNot
)

type token struct {
	kind tokKind
	text string
	pos  int // 1-based character position, for messages
}

func lex(s string) ([]token, error) {
	var toks []token
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case unicode.IsControl(r):
			return nil, fault.Errorf(fault.EInvalid, "the query contains a control character at position %d", i+1)
		case r == '(':
			toks = append(toks, token{kind: tLParen, pos: i + 1})
			i++
		case r == ')':
			toks = append(toks, token{kind: tRParen, pos: i + 1})
			i++
		case r == '"':
			end := i + 1
			for end < len(rs) && rs[end] != '"' {
				if unicode.IsControl(rs[end]) && !unicode.IsSpace(rs[end]) {
					return nil, fault.Errorf(fault.EInvalid, "the query contains a control character at position %d", end+1)
				}
				end++
			}
			if end == len(rs) {
				return nil, fault.Errorf(fault.EInvalid, "the quote opened at position %d is never closed", i+1)
			}
			phrase := strings.Join(strings.Fields(string(rs[i+1:end])), " ")
			if phrase == "" {
				return nil, fault.Errorf(fault.EInvalid, "empty quotes at position %d; put a word or phrase between them", i+1)
			}
			toks = append(toks, token{kind: tPhrase, text: phrase, pos: i + 1})
			i = end + 1
		case r == '-':
			if i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '(' || isWordRune(rs[i+1]) && rs[i+1] != '-') {
				toks = append(toks, token{kind: tMinus, pos: i + 1})
				i++
				continue
			}
			return nil, fault.Errorf(fault.EInvalid, "'-' at position %d must be followed directly by a word, a phrase or a group to exclude", i+1)
		default:
			end := i
			for end < len(rs) && isWordRune(rs[end]) {
				end++
			}
			w := string(rs[i:end])
			for j, c := range rs[i:end] {
				if why, ok := foreignSyntax[c]; ok {
					return nil, fault.Errorf(fault.EInvalid, "%q in %s (position %d) is not query syntax: %s; remove it, or put the term in double quotes to search its words as text",
						string(c), w, i+j+1, why)
				}
			}
			tok := token{kind: tWord, text: w, pos: i + 1}
			switch w {
			case "AND":
				tok.kind = tAnd
			case "OR":
				tok.kind = tOr
			case "NOT":
				tok.kind = tNot
			}
			toks = append(toks, tok)
			i = end
		}
	}
	return toks, nil
}

// checkSearchable refuses terms with no letter or digit: a query of nothing
// else has nothing to search, and one such term among others would match
// nothing (AND-ed, it empties the local search) or exclude nothing.
func checkSearchable(toks []token) error {
	var bad []token
	found := false
	for _, t := range toks {
		if t.kind != tWord && t.kind != tPhrase {
			continue
		}
		if searchable(t.text) {
			found = true
		} else {
			bad = append(bad, t)
		}
	}
	switch {
	case len(bad) == 0:
		return nil
	case !found:
		var shown []string
		for _, t := range bad {
			shown = append(shown, Term{Text: t.text, Phrase: t.kind == tPhrase}.String())
		}
		return fault.Errorf(fault.EInvalid, "the query has no word to search for, only punctuation and operators (%s); write at least one word", strings.Join(shown, " "))
	}
	return fault.Errorf(fault.EInvalid, "%q at position %d has no letter or digit, so it matches nothing; remove it", bad[0].text, bad[0].pos)
}

func isWordRune(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsControl(r) && r != '(' && r != ')' && r != '"'
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() (token, bool) {
	if p.i < len(p.toks) {
		return p.toks[p.i], true
	}
	return token{}, false
}

// query := item ((AND)? item)*
// item  := ('-' | NOT)? chain
// chain := atom (OR atom)*
func (p *parser) query() (AST, error) {
	var q AST
	for {
		t, ok := p.peek()
		if !ok {
			break
		}
		if t.kind == tAnd {
			if len(q.Clauses) == 0 {
				return AST{}, fault.Errorf(fault.EInvalid, "AND at position %d has nothing before it", t.pos)
			}
			p.i++
			if n, ok := p.peek(); !ok || n.kind == tAnd || n.kind == tOr || n.kind == tRParen {
				return AST{}, fault.Errorf(fault.EInvalid, "AND at position %d must be followed by a term", t.pos)
			}
			continue
		}
		c, err := p.item()
		if err != nil {
			return AST{}, err
		}
		q.Clauses = append(q.Clauses, c)
	}
	return q, nil
}

func (p *parser) item() (Clause, error) {
	t, _ := p.peek()
	var c Clause
	if t.kind == tMinus || t.kind == tNot {
		c.Not = true
		p.i++
		n, ok := p.peek()
		if !ok || n.kind == tAnd || n.kind == tOr || n.kind == tNot || n.kind == tMinus || n.kind == tRParen {
			return Clause{}, fault.Errorf(fault.EInvalid, "the exclusion at position %d must be followed by a word, a phrase or a group", t.pos)
		}
	}
	for {
		alts, err := p.atom()
		if err != nil {
			return Clause{}, err
		}
		c.Any = append(c.Any, alts...)
		n, ok := p.peek()
		if !ok || n.kind != tOr {
			return c, nil
		}
		if c.Not {
			return Clause{}, fault.Errorf(fault.EInvalid, "OR after an exclusion at position %d is ambiguous; write -(a OR b) to exclude alternatives", n.pos)
		}
		p.i++
		n, ok = p.peek()
		if !ok {
			return Clause{}, fault.Errorf(fault.EInvalid, "OR at the end of the query has nothing after it")
		}
		if n.kind == tMinus || n.kind == tNot {
			return Clause{}, fault.Errorf(fault.EInvalid, "an exclusion cannot be one side of OR (position %d); exclude it separately", n.pos)
		}
	}
}

// atom := word | phrase | '(' alt (OR alt)* ')'
func (p *parser) atom() ([]Term, error) {
	t, ok := p.peek()
	if !ok {
		return nil, fault.Errorf(fault.EInvalid, "the query ends where a term was expected")
	}
	switch t.kind {
	case tWord:
		p.i++
		return []Term{NewTerm(t.text, false)}, nil
	case tPhrase:
		p.i++
		return []Term{NewTerm(t.text, true)}, nil
	case tLParen:
		p.i++
		var alts []Term
		for {
			a, ok := p.peek()
			if !ok {
				return nil, fault.Errorf(fault.EInvalid, "the parenthesis opened at position %d is never closed", t.pos)
			}
			switch a.kind {
			case tWord:
				alts = append(alts, NewTerm(a.text, false))
			case tPhrase:
				alts = append(alts, NewTerm(a.text, true))
			case tRParen:
				return nil, fault.Errorf(fault.EInvalid, "empty or unfinished group at position %d", a.pos)
			case tLParen:
				return nil, fault.Errorf(fault.EInvalid, "groups cannot be nested (position %d); list alternatives with OR inside one group", a.pos)
			default:
				return nil, fault.Errorf(fault.EInvalid, "inside a group only words and phrases joined by OR are allowed (position %d)", a.pos)
			}
			p.i++
			a, ok = p.peek()
			if !ok {
				return nil, fault.Errorf(fault.EInvalid, "the parenthesis opened at position %d is never closed", t.pos)
			}
			p.i++
			switch a.kind {
			case tRParen:
				return alts, nil
			case tOr:
				continue
			default:
				p.i--
				return nil, fault.Errorf(fault.EInvalid, "inside a group, separate alternatives with OR (position %d)", a.pos)
			}
		}
	case tRParen:
		return nil, fault.Errorf(fault.EInvalid, "the parenthesis at position %d closes nothing", t.pos)
	case tOr:
		return nil, fault.Errorf(fault.EInvalid, "OR at position %d needs a term on each side", t.pos)
	case tAnd:
		return nil, fault.Errorf(fault.EInvalid, "AND at position %d needs a term on each side", t.pos)
	default:
		return nil, fault.Errorf(fault.EInvalid, "unexpected exclusion at position %d", t.pos)
	}
}

// WithFilters folds a strategy's include and exclude terms into a query, so
// what each source receives honours them: an include term the query does
// not mention becomes a required clause, an exclude term a NOT clause (a
// term the query searches for is never excluded). The researcher edits
// these terms in the strategy form and a model is told them; without this
// they would be recorded but never searched.
func WithFilters(ast AST, include, exclude []string) AST {
	mentioned := map[string]bool{}
	for _, t := range ast.Terms() {
		mentioned[strings.ToLower(t.Text)] = true
	}
	out := AST{Clauses: slices.Clone(ast.Clauses)}
	add := func(term string, not bool) {
		t := NewTerm(term, strings.Contains(strings.TrimSpace(term), " "))
		key := strings.ToLower(t.Text)
		if key == "" || mentioned[key] {
			return
		}
		mentioned[key] = true
		out.Clauses = append(out.Clauses, Clause{Not: not, Any: []Term{t}})
	}
	for _, t := range include {
		add(t, false)
	}
	for _, t := range exclude {
		add(t, true)
	}
	return out
}
