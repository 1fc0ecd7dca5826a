package def

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// exprKind says how an expression is written and what it must yield.
type exprKind int

const (
	exprTemplate exprKind = iota // a string that may hold {{ expr }} parts
	exprBare                     // the whole string is an expression (set values, for_each)
	exprBool                     // a bare expression that must be a bool (conditions)
	exprInt                      // a template whose value must be an int (max_iterations)
)

// exprRef is one expression to compile at validation, with its scope.
type exprRef struct {
	src     string
	pos     Pos
	kind    exprKind
	secrets bool // webhook request: secrets.NAME is in scope
	item    bool // for_each branch: item is in scope
	params  bool // initial context: only params in scope
}

// decoder walks the YAML tree, reporting every problem it meets.
type decoder struct {
	r *reporter
}

// posOf is where a node starts. A block mapping's own token is its first
// colon, so it is placed at its first key instead.
func posOf(n ast.Node) Pos {
	if n == nil {
		return Pos{}
	}
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 && m.Values[0].Key != nil {
		return posOf(m.Values[0].Key)
	}
	if m, ok := n.(*ast.MappingValueNode); ok && m.Key != nil {
		return posOf(m.Key)
	}
	t := n.GetToken()
	if t == nil || t.Position == nil {
		return Pos{}
	}
	return Pos{Line: t.Position.Line, Col: t.Position.Column}
}

// plainNode refuses the YAML features the format does not use (anchors,
// aliases, tags, merge keys), so every value is written where it is read.
func (d *decoder) plainNode(n ast.Node, stage string) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		d.r.at(posOf(n), stage, "anchors and aliases are not supported: write the value out")
		return nil, false
	case *ast.TagNode:
		d.r.at(posOf(n), stage, "tags are not supported")
		return nil, false
	case *ast.MergeKeyNode:
		d.r.at(posOf(n), stage, "merge keys are not supported")
		return nil, false
	}
	return n, true
}

// kv is one key of a mapping with its value.
type kv struct {
	key   string
	pos   Pos
	value ast.Node
}

// mapping returns a mapping's keys in order, reporting a non-mapping value,
// duplicate keys and keys not in allowed (nil allows any key).
func (d *decoder) mapping(n ast.Node, stage, what string, allowed ...string) ([]kv, bool) {
	n, ok := d.plainNode(n, stage)
	if !ok {
		return nil, false
	}
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		d.r.at(posOf(n), stage, "%s must be a mapping", what)
		return nil, false
	}
	seen := map[string]bool{}
	var out []kv
	for _, mv := range values {
		if mv.Key == nil {
			continue
		}
		if _, ok := d.plainNode(mv.Key, stage); !ok {
			continue
		}
		key, ok := scalarString(mv.Key)
		if !ok {
			d.r.at(posOf(mv.Key), stage, "a key in %s must be a string", what)
			continue
		}
		p := posOf(mv.Key)
		if seen[key] {
			d.r.at(p, stage, "key %q is written twice in %s", key, what)
			continue
		}
		seen[key] = true
		if allowed != nil && !contains(allowed, key) {
			d.r.at(p, stage, "unknown key %q in %s", key, what)
			continue
		}
		out = append(out, kv{key: key, pos: p, value: mv.Value})
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalarString is a string scalar's text.
func scalarString(n ast.Node) (string, bool) {
	switch s := n.(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.LiteralNode:
		if s.Value == nil {
			return "", true
		}
		return s.Value.Value, true
	}
	return "", false
}

func (d *decoder) str(e kv, stage string) (string, bool) {
	if _, ok := d.plainNode(e.value, stage); !ok {
		return "", false
	}
	s, ok := scalarString(e.value)
	if !ok {
		d.r.at(posOf(e.value), stage, "%s must be a string", e.key)
	}
	return s, ok
}

func (d *decoder) integer(e kv, stage string) (int, bool) {
	if _, ok := d.plainNode(e.value, stage); !ok {
		return 0, false
	}
	if n, ok := e.value.(*ast.IntegerNode); ok {
		if v, ok := intOf(n); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
		d.r.at(posOf(e.value), stage, "%s is out of range", e.key)
		return 0, false
	}
	d.r.at(posOf(e.value), stage, "%s must be an integer", e.key)
	return 0, false
}

func (d *decoder) boolean(e kv, stage string) (bool, bool) {
	if _, ok := d.plainNode(e.value, stage); !ok {
		return false, false
	}
	if b, ok := e.value.(*ast.BoolNode); ok {
		return b.Value, true
	}
	d.r.at(posOf(e.value), stage, "%s must be true or false", e.key)
	return false, false
}

func (d *decoder) number(e kv, stage string) (float64, bool) {
	if _, ok := d.plainNode(e.value, stage); !ok {
		return 0, false
	}
	switch n := e.value.(type) {
	case *ast.IntegerNode:
		if v, ok := intOf(n); ok {
			return float64(v), true
		}
		if v, ok := n.Value.(uint64); ok {
			return float64(v), true
		}
	case *ast.FloatNode:
		return n.Value, true
	}
	d.r.at(posOf(e.value), stage, "%s must be a number", e.key)
	return 0, false
}

func (d *decoder) duration(e kv, stage string) (time.Duration, bool) {
	s, ok := d.str(e, stage)
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.r.at(posOf(e.value), stage, "%s: %v", e.key, err)
		return 0, false
	}
	return v, true
}

// ParseDuration reads a Go duration ("90s", "1h30m") with one extension:
// a leading whole number of days ("2d", "1d12h"). It must be positive.
func ParseDuration(s string) (time.Duration, error) {
	var days time.Duration
	rest := strings.TrimSpace(s)
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n < 0 || n > 36500 {
			return 0, &durationError{s}
		}
		days = time.Duration(n) * 24 * time.Hour
		rest = rest[i+1:]
	}
	var v time.Duration
	if rest != "" {
		var err error
		if v, err = time.ParseDuration(rest); err != nil {
			return 0, &durationError{s}
		}
	}
	if days+v <= 0 || (rest == "" && days == 0) {
		return 0, &durationError{s}
	}
	return days + v, nil
}

type durationError struct{ s string }

func (e *durationError) Error() string {
	return strconv.Quote(e.s) + ` is not a positive duration (like "90s", "10m", "1h30m" or "2d")`
}

// value decodes any YAML value to plain Go, handing each string to tmpl
// (which records templates) so nested strings keep their own position.
func (d *decoder) value(n ast.Node, stage string, tmpl func(s string, p Pos)) any {
	n, ok := d.plainNode(n, stage)
	if !ok {
		return nil
	}
	switch v := n.(type) {
	case *ast.NullNode:
		return nil
	case *ast.BoolNode:
		return v.Value
	case *ast.IntegerNode:
		if x, ok := intOf(v); ok {
			return x
		}
		if x, ok := v.Value.(uint64); ok {
			return float64(x)
		}
		return nil
	case *ast.FloatNode:
		return v.Value
	case *ast.InfinityNode:
		return v.Value
	case *ast.NanNode:
		return math.NaN()
	case *ast.StringNode, *ast.LiteralNode:
		s, _ := scalarString(v)
		if tmpl != nil {
			tmpl(s, posOf(n))
		}
		return s
	case *ast.SequenceNode:
		out := make([]any, 0, len(v.Values))
		for _, x := range v.Values {
			out = append(out, d.value(x, stage, tmpl))
		}
		return out
	case *ast.MappingNode, *ast.MappingValueNode:
		kvs, _ := d.mapping(v, stage, "a value")
		out := make(map[string]any, len(kvs))
		for _, e := range kvs {
			out[e.key] = d.value(e.value, stage, tmpl)
		}
		return out
	}
	d.r.at(posOf(n), stage, "unsupported YAML value")
	return nil
}

// sequence returns a sequence's items, reporting any other value.
func (d *decoder) sequence(e kv, stage string) ([]ast.Node, bool) {
	n, ok := d.plainNode(e.value, stage)
	if !ok {
		return nil, false
	}
	if s, ok := n.(*ast.SequenceNode); ok {
		return s.Values, true
	}
	d.r.at(posOf(n), stage, "%s must be a list", e.key)
	return nil, false
}

func (d *decoder) target(e kv, stage string) Target {
	s, ok := d.str(e, stage)
	if !ok {
		return Target{}
	}
	if s == "" {
		d.r.at(posOf(e.value), stage, "%s is empty", e.key)
	}
	return Target{ID: s, Pos: posOf(e.value)}
}

func (d *decoder) limit(e kv, stage string) (Limit, *exprRef) {
	p := posOf(e.value)
	if _, ok := e.value.(*ast.IntegerNode); ok {
		n, ok := d.integer(e, stage)
		if ok && n < 1 {
			d.r.at(p, stage, "%s must be at least 1", e.key)
		}
		return Limit{N: n, Pos: p}, nil
	}
	s, ok := scalarString(e.value)
	if !ok {
		d.r.at(p, stage, "%s must be a number or \"{{ params.NAME }}\"", e.key)
		return Limit{Pos: p}, nil
	}
	if !strings.Contains(s, "{{") {
		d.r.at(p, stage, "%s must be a number or \"{{ params.NAME }}\"", e.key)
		return Limit{Pos: p}, nil
	}
	return Limit{Expr: s, Pos: p}, &exprRef{src: s, pos: p, kind: exprInt}
}

// intOf is an integer scalar's value when it fits an int64 (the parser
// gives uint64 for non-negative numbers).
func intOf(n *ast.IntegerNode) (int64, bool) {
	switch v := n.Value.(type) {
	case int64:
		return v, true
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), true
		}
	case int:
		return int64(v), true
	}
	return 0, false
}

// isMapping reports whether n is a YAML mapping (block or flow).
func isMapping(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}
