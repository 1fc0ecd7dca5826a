package def

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// scope is what an expression may name: params (typed, from the
// declarations), context (any key), outputs.<stage> for every stage, and,
// where allowed, secrets and item.
type scope struct {
	params  map[string]bool
	stages  map[string]bool
	env     map[string]any // params, context, outputs
	paramsT any
}

func newScope(d *Definition, stageIDs map[string]bool) *scope {
	s := &scope{params: map[string]bool{}, stages: stageIDs}
	var pf []reflect.StructField
	for _, p := range d.Params {
		if !identRe.MatchString(p.Name) || s.params[p.Name] {
			continue
		}
		s.params[p.Name] = true
		var t reflect.Type
		switch p.Type {
		case ParamString:
			t = reflect.TypeFor[string]()
		case ParamInt:
			t = reflect.TypeFor[int]()
		case ParamFloat:
			t = reflect.TypeFor[float64]()
		case ParamBool:
			t = reflect.TypeFor[bool]()
		case ParamList:
			t = reflect.TypeFor[[]string]()
		default:
			t = reflect.TypeFor[any]()
		}
		pf = append(pf, reflect.StructField{Name: fmt.Sprintf("P%d", len(pf)), Type: t, Tag: reflect.StructTag(`expr:"` + p.Name + `"`)})
	}
	var of []reflect.StructField
	for id := range stageIDs {
		of = append(of, reflect.StructField{Name: fmt.Sprintf("S%d", len(of)), Type: reflect.TypeFor[map[string]any](), Tag: reflect.StructTag(`expr:"` + id + `"`)})
	}
	s.paramsT = reflect.New(reflect.StructOf(pf)).Elem().Interface()
	s.env = map[string]any{
		"params":  s.paramsT,
		"context": map[string]any{},
		"outputs": reflect.New(reflect.StructOf(of)).Elem().Interface(),
	}
	return s
}

// Segment is one piece of a template: literal Text, or an Expr to
// evaluate (its source, trimmed).
type Segment struct {
	Text string
	Expr string
}

// ParseTemplate splits a string into literal text and {{ expr }} parts,
// so the engine evaluates templates exactly as loading checked them. A
// string without "{{" is one text segment (none when empty).
func ParseTemplate(s string) ([]Segment, error) {
	var out []Segment
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			if strings.Contains(s, "}}") {
				return out, errors.New(`"}}" without "{{"`)
			}
			if s != "" {
				out = append(out, Segment{Text: s})
			}
			return out, nil
		}
		if strings.Contains(s[:i], "}}") {
			return out, errors.New(`"}}" without "{{"`)
		}
		if i > 0 {
			out = append(out, Segment{Text: s[:i]})
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			return out, errors.New(`"{{" is never closed by "}}"`)
		}
		body := strings.TrimSpace(s[i+2 : i+2+j])
		if body == "" {
			return out, errors.New("empty {{ }}")
		}
		out = append(out, Segment{Expr: body})
		s = s[i+2+j+2:]
	}
}

// templates lists a string's {{ expr }} parts.
func templates(s string) ([]string, error) {
	segs, err := ParseTemplate(s)
	var out []string
	for _, sg := range segs {
		if sg.Expr != "" {
			out = append(out, sg.Expr)
		}
	}
	return out, err
}

// check compiles one expression reference, reporting at its position.
func (v *validator) check(sc *scope, ref exprRef, stage string) {
	switch ref.kind {
	case exprTemplate, exprInt:
		parts, err := templates(ref.src)
		if err != nil {
			v.r.at(ref.pos, stage, "template %q: %v", ref.src, err)
			return
		}
		if ref.kind == exprInt && (len(parts) != 1 || !strings.HasPrefix(strings.TrimSpace(ref.src), "{{") || !strings.HasSuffix(strings.TrimSpace(ref.src), "}}")) {
			v.r.at(ref.pos, stage, "max_iterations must be a number or one {{ expression }}")
			return
		}
		for _, p := range parts {
			v.compile(sc, ref, p, stage, ref.kind == exprInt)
		}
	case exprBare, exprBool:
		if strings.Contains(ref.src, "{{") {
			v.r.at(ref.pos, stage, "expression %q: write the expression without {{ }}", ref.src)
			return
		}
		if strings.TrimSpace(ref.src) == "" {
			v.r.at(ref.pos, stage, "empty expression")
			return
		}
		v.compile(sc, ref, ref.src, stage, false)
	}
}

// nameChecker finds names out of scope before the type checker does, so
// the message says "no stage" rather than describing a struct type.
type nameChecker struct {
	sc       *scope
	ref      exprRef
	problems []string
}

func (c *nameChecker) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.MemberNode:
		id, ok := n.Node.(*ast.IdentifierNode)
		prop, ok2 := n.Property.(*ast.StringNode)
		if !ok || !ok2 {
			return
		}
		switch id.Value {
		case "params":
			if !c.sc.params[prop.Value] {
				c.problems = append(c.problems, fmt.Sprintf("params.%s is not a declared parameter", prop.Value))
			}
		case "outputs":
			if c.ref.params {
				return
			}
			if !c.sc.stages[prop.Value] {
				c.problems = append(c.problems, fmt.Sprintf("outputs.%s: there is no stage %q", prop.Value, prop.Value))
			}
		}
	case *ast.IdentifierNode:
		switch {
		case n.Value == "secrets" && !c.ref.secrets:
			c.problems = append(c.problems, "secrets are in scope only in a webhook's request")
		case n.Value == "item" && !c.ref.item:
			c.problems = append(c.problems, "item is in scope only in the branch of a for_each")
		case (n.Value == "outputs" || n.Value == "context") && c.ref.params:
			c.problems = append(c.problems, "the initial context may use only params")
		}
	}
}

func (v *validator) compile(sc *scope, ref exprRef, src, stage string, asInt bool) {
	tree, err := parser.Parse(src)
	if err != nil {
		v.r.at(ref.pos, stage, "expression %q: %s", src, exprMessage(err))
		return
	}
	c := &nameChecker{sc: sc, ref: ref}
	ast.Walk(&tree.Node, c)
	if len(c.problems) > 0 {
		for _, p := range c.problems {
			v.r.at(ref.pos, stage, "expression %q: %s", src, p)
		}
		return
	}
	env := map[string]any{"params": sc.env["params"]}
	if !ref.params {
		env["context"] = sc.env["context"]
		env["outputs"] = sc.env["outputs"]
	}
	if ref.secrets {
		env["secrets"] = map[string]string{}
	}
	if ref.item {
		env["item"] = any(nil)
	}
	opts := []expr.Option{expr.Env(env)}
	switch {
	case ref.kind == exprBool:
		opts = append(opts, expr.AsBool())
	case asInt:
		opts = append(opts, expr.AsInt())
	}
	if _, err := expr.Compile(src, opts...); err != nil {
		v.r.at(ref.pos, stage, "expression %q: %s", src, exprMessage(err))
	}
}

// exprMessage is the library's message without its source excerpt (the
// file position already says where).
func exprMessage(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		return fe.Message
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
