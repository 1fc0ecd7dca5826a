package textindex

import (
	"fmt"
	"strings"
)

// Op is the kind of a query expression node.
type Op uint8

// The operators of the FTS5 MATCH subset the index answers.
const (
	OpPhrase Op = iota
	OpAnd
	OpOr
	OpNot
	// OpNear is FTS5's NEAR(p1 p2 ..., N): its Kids are phrases, all in
	// one column of a row with at most Dist tokens between them.
	OpNear
)

// nearDefault is FTS5's NEAR distance when the query gives none.
const nearDefault = 10

// Expr is a parsed MATCH expression. A phrase's Text is its string as
// written, unquoted; AND and OR have two or more Kids (nested ANDs and
// nested ORs are flattened, as FTS5 does); NOT has exactly two, the rows
// to keep and the rows to leave out.
type Expr struct {
	Op   Op
	Text string
	Kids []*Expr
	Dist int // NEAR's distance
}

// QueryError is a MATCH expression the index cannot answer: malformed, or
// using FTS5 syntax outside the subset (column filters, prefix *, ^, +). The store maps it to an invalid query.
type QueryError struct {
	Query       string
	Msg         string
	Unsupported bool // valid FTS5 the index does not implement
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("textindex: query %q: %s", e.Query, e.Msg)
}

// Parse reads an FTS5 MATCH expression: phrases ("quoted", with "" for a
// quote, or barewords), AND, OR, NOT, parentheses, and phrases side by
// side (an implicit AND that binds tighter than NOT, and only between
// phrases: FTS5 rejects `(a) b`). Precedence is FTS5's: NOT binds tighter
// than AND, AND tighter than OR, all left-associative.
func Parse(query string) (*Expr, error) {
	p := &parser{src: query}
	if err := p.lex(); err != nil {
		return nil, err
	}
	if len(p.toks) == 0 {
		return nil, p.errorf("the query is empty")
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, p.errorf("syntax error near %q", p.toks[p.i].text)
	}
	return e, nil
}

type tokKind uint8

const (
	tPhrase tokKind = iota
	tAnd
	tOr
	tNot
	tLP
	tRP
	tNear
	tComma
)

type qtok struct {
	kind tokKind
	text string
}

type parser struct {
	src  string
	toks []qtok
	i    int
}

func (p *parser) errorf(format string, args ...any) error {
	return &QueryError{Query: p.src, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) unsupported(what string) error {
	return &QueryError{Query: p.src, Msg: what + " is not supported", Unsupported: true}
}

// bareword reports whether c may be part of an FTS5 bareword.
func bareword(c byte) bool {
	return c >= 0x80 || c == '_' || c == 0x1a ||
		c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '(':
			p.toks = append(p.toks, qtok{tLP, "("})
			i++
		case c == ')':
			p.toks = append(p.toks, qtok{tRP, ")"})
			i++
		case c == ',':
			p.toks = append(p.toks, qtok{tComma, ","})
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return p.errorf("unterminated string")
				}
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			p.toks = append(p.toks, qtok{tPhrase, b.String()})
			i = j + 1
		case bareword(c):
			j := i
			for j < len(s) && bareword(s[j]) {
				j++
			}
			w := s[i:j]
			i = j
			switch w {
			case "AND":
				p.toks = append(p.toks, qtok{tAnd, w})
			case "OR":
				p.toks = append(p.toks, qtok{tOr, w})
			case "NOT":
				p.toks = append(p.toks, qtok{tNot, w})
			default:
				if w == "NEAR" && strings.HasPrefix(strings.TrimLeft(s[i:], " \t\n\r"), "(") {
					p.toks = append(p.toks, qtok{tNear, w})
					continue
				}
				p.toks = append(p.toks, qtok{tPhrase, w})
			}
		case c == '*':
			return p.unsupported("a prefix query (*)")
		case c == '^':
			return p.unsupported("an initial-token query (^)")
		case c == ':' || c == '{' || c == '}' || c == '-':
			return p.unsupported("a column filter")
		case c == '+':
			return p.unsupported("phrase concatenation (+)")
		default:
			return p.errorf("syntax error near %q", s[i:i+1])
		}
	}
	return nil
}

func (p *parser) peek() (tokKind, bool) {
	if p.i >= len(p.toks) {
		return 0, false
	}
	return p.toks[p.i].kind, true
}

func (p *parser) or() (*Expr, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		if k, ok := p.peek(); !ok || k != tOr {
			return left, nil
		}
		p.i++
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = join(OpOr, left, right)
	}
}

func (p *parser) and() (*Expr, error) {
	left, err := p.not()
	if err != nil {
		return nil, err
	}
	for {
		if k, ok := p.peek(); !ok || k != tAnd {
			return left, nil
		}
		p.i++
		right, err := p.not()
		if err != nil {
			return nil, err
		}
		left = join(OpAnd, left, right)
	}
}

func (p *parser) not() (*Expr, error) {
	left, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		if k, ok := p.peek(); !ok || k != tNot {
			return left, nil
		}
		p.i++
		right, err := p.primary()
		if err != nil {
			return nil, err
		}
		left = &Expr{Op: OpNot, Kids: []*Expr{left, right}}
	}
}

// primary is a parenthesised expression or a run of phrases side by side
// (FTS5's exprlist: an implicit AND).
func (p *parser) primary() (*Expr, error) {
	k, ok := p.peek()
	if !ok {
		return nil, p.errorf("syntax error at the end of the query")
	}
	switch k {
	case tLP:
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if k, ok := p.peek(); !ok || k != tRP {
			return nil, p.errorf("missing )")
		}
		p.i++
		if k, ok := p.peek(); ok && (k == tPhrase || k == tLP || k == tNear) {
			return nil, p.errorf("syntax error near %q", p.toks[p.i].text)
		}
		return e, nil
	case tPhrase, tNear:
		// A run of phrases and NEAR groups side by side: FTS5's exprlist,
		// an implicit AND.
		var e *Expr
		for {
			k, ok := p.peek()
			if !ok || k != tPhrase && k != tNear {
				break
			}
			var n *Expr
			if k == tNear {
				var err error
				if n, err = p.near(); err != nil {
					return nil, err
				}
			} else {
				n = &Expr{Op: OpPhrase, Text: p.toks[p.i].text}
				p.i++
			}
			if e == nil {
				e = n
			} else {
				e = join(OpAnd, e, n)
			}
		}
		if k, ok := p.peek(); ok && k == tLP {
			return nil, p.errorf("syntax error near %q", p.toks[p.i-1].text)
		}
		return e, nil
	}
	return nil, p.errorf("syntax error near %q", p.toks[p.i].text)
}

// near reads NEAR(phrase ... [, N]) (FTS5's nearset: one or more
// phrases, an optional distance of digits).
func (p *parser) near() (*Expr, error) {
	p.i++ // NEAR
	if k, ok := p.peek(); !ok || k != tLP {
		return nil, p.errorf("syntax error near \"NEAR\"")
	}
	p.i++
	e := &Expr{Op: OpNear, Dist: nearDefault}
	for {
		k, ok := p.peek()
		if !ok || k != tPhrase {
			break
		}
		e.Kids = append(e.Kids, &Expr{Op: OpPhrase, Text: p.toks[p.i].text})
		p.i++
	}
	if len(e.Kids) == 0 {
		return nil, p.errorf("syntax error in NEAR: no phrase")
	}
	if k, ok := p.peek(); ok && k == tComma {
		p.i++
		if k, ok := p.peek(); !ok || k != tPhrase {
			return nil, p.errorf("expected a number after \",\" in NEAR")
		}
		n := 0
		for _, c := range []byte(p.toks[p.i].text) {
			if c < '0' || c > '9' || n > 1<<24 {
				return nil, p.errorf("expected integer, got %q", p.toks[p.i].text)
			}
			n = n*10 + int(c-'0')
		}
		e.Dist = n
		p.i++
	}
	if k, ok := p.peek(); !ok || k != tRP {
		return nil, p.errorf("syntax error in NEAR: missing )")
	}
	p.i++
	return e, nil
}

// join combines two expressions under op, flattening same-op children.
func join(op Op, a, b *Expr) *Expr {
	e := &Expr{Op: op}
	for _, k := range []*Expr{a, b} {
		if k.Op == op {
			e.Kids = append(e.Kids, k.Kids...)
		} else {
			e.Kids = append(e.Kids, k)
		}
	}
	return e
}

// String renders e as a MATCH expression Parse reads back as e: every
// phrase quoted, operators explicit, parentheses where precedence needs
// them.
func (e *Expr) String() string {
	var b strings.Builder
	e.render(&b)
	return b.String()
}

func (e *Expr) prec() int {
	switch e.Op {
	case OpOr:
		return 1
	case OpAnd:
		return 2
	case OpNot:
		return 3
	}
	return 4
}

func (e *Expr) render(b *strings.Builder) {
	kid := func(k *Expr, minPrec int) {
		if k.prec() < minPrec {
			b.WriteByte('(')
			k.render(b)
			b.WriteByte(')')
			return
		}
		k.render(b)
	}
	switch e.Op {
	case OpPhrase:
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(e.Text, `"`, `""`))
		b.WriteByte('"')
	case OpNear:
		b.WriteString("NEAR(")
		for i, k := range e.Kids {
			if i > 0 {
				b.WriteByte(' ')
			}
			k.render(b)
		}
		fmt.Fprintf(b, ", %d)", e.Dist)
	case OpAnd, OpOr:
		sep := " AND "
		if e.Op == OpOr {
			sep = " OR "
		}
		for i, k := range e.Kids {
			if i > 0 {
				b.WriteString(sep)
			}
			// A same-op child (only in a hand-built Expr) keeps its
			// parentheses so it reads back as written.
			kid(k, e.prec()+boolInt(k.Op == e.Op))
		}
	case OpNot:
		kid(e.Kids[0], 3)
		b.WriteString(" NOT ")
		kid(e.Kids[1], 4)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
