package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"quarry/internal/fault"
	"slices"
	"sort"
	"strings"
)

// ParamType is the type of a declared run parameter.
type ParamType string

// The parameter types forms and validation understand.
const (
	ParamString  ParamType = "string"
	ParamInt     ParamType = "int"
	ParamFloat   ParamType = "float"
	ParamBool    ParamType = "bool"
	ParamStrings ParamType = "strings"
)

// Param declares one run parameter a step reads. The metadata is what tests
// and forms use: a form can be drawn and checked from it alone.
type Param struct {
	Name        string
	Description string
	Type        ParamType
	Default     any
	// Min and Max bound numbers (value) and strings (length); nil = open.
	Min, Max *float64
	// Choices restricts strings (or each element of strings) to a set.
	Choices  []string
	Required bool
}

// Bound returns a pointer to v, for Param.Min and Param.Max literals.
func Bound(v float64) *float64 { return &v }

// Params are a run's immutable parameters, as decoded from JSON.
type Params map[string]any

// String returns a string parameter ("" when absent).
func (p Params) String(name string) string {
	s, _ := p[name].(string)
	return s
}

// Int returns an integer parameter (0 when absent); JSON numbers decode as
// float64, so both are accepted.
func (p Params) Int(name string) int {
	switch v := p[name].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// Bool returns a boolean parameter (false when absent).
func (p Params) Bool(name string) bool {
	b, _ := p[name].(bool)
	return b
}

// Strings returns a list-of-strings parameter.
func (p Params) Strings(name string) []string {
	switch v := p[name].(type) {
	case []string:
		return slices.Clone(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Has reports whether the parameter is set.
func (p Params) Has(name string) bool {
	_, ok := p[name]
	return ok
}

// Params returns every parameter the workflow's steps declare, merged by
// name. Two steps declaring one name must agree on its metadata.
func (w *Workflow) Params() ([]Param, error) {
	byName := map[string]Param{}
	var order []string
	for _, s := range w.Steps {
		for _, p := range s.Params {
			if err := p.validate(); err != nil {
				return nil, fault.Errorf(fault.EInvalid, "step %q: %s", s.ID, fault.ErrorMessage(err))
			}
			if prev, ok := byName[p.Name]; ok {
				if !sameParam(prev, p) {
					return nil, fault.Errorf(fault.EInvalid, "step %q declares parameter %q differently from another step", s.ID, p.Name)
				}
				continue
			}
			byName[p.Name] = p
			order = append(order, p.Name)
		}
	}
	out := make([]Param, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, nil
}

func sameParam(a, b Param) bool {
	eqf := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Type == b.Type && a.Required == b.Required && eqf(a.Min, b.Min) && eqf(a.Max, b.Max) &&
		slices.Equal(a.Choices, b.Choices) && fmt.Sprint(a.Default) == fmt.Sprint(b.Default)
}

// validate checks a declaration's internal consistency.
func (p Param) validate() error {
	if strings.TrimSpace(p.Name) == "" {
		return fault.Errorf(fault.EInvalid, "a parameter has no name")
	}
	switch p.Type {
	case ParamString, ParamInt, ParamFloat, ParamBool, ParamStrings:
	default:
		return fault.Errorf(fault.EInvalid, "parameter %q has unknown type %q", p.Name, p.Type)
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		return fault.Errorf(fault.EInvalid, "parameter %q: min %v is greater than max %v", p.Name, *p.Min, *p.Max)
	}
	if (p.Min != nil || p.Max != nil) && p.Type == ParamBool {
		return fault.Errorf(fault.EInvalid, "parameter %q: a bool cannot have bounds", p.Name)
	}
	if len(p.Choices) > 0 && p.Type != ParamString && p.Type != ParamStrings {
		return fault.Errorf(fault.EInvalid, "parameter %q: only string parameters can have choices", p.Name)
	}
	if p.Required && p.Default != nil {
		return fault.Errorf(fault.EInvalid, "parameter %q is required and has a default; choose one", p.Name)
	}
	if p.Default != nil {
		if _, err := p.check(p.Default); err != nil {
			return fault.Errorf(fault.EInvalid, "parameter %q: default %v: %s", p.Name, p.Default, fault.ErrorMessage(err))
		}
	}
	return nil
}

// check converts v to the parameter's type and checks bounds and choices.
func (p Param) check(v any) (any, error) {
	bad := func(format string, args ...any) (any, error) {
		return nil, fault.Errorf(fault.EInvalid, format, args...)
	}
	inBounds := func(x float64, what string) error {
		if p.Min != nil && x < *p.Min {
			return fault.Errorf(fault.EInvalid, "%s must be at least %v", what, *p.Min)
		}
		if p.Max != nil && x > *p.Max {
			return fault.Errorf(fault.EInvalid, "%s must be at most %v", what, *p.Max)
		}
		return nil
	}
	switch p.Type {
	case ParamString:
		s, ok := v.(string)
		if !ok {
			return bad("must be text")
		}
		if err := inBounds(float64(len([]rune(s))), "length"); err != nil {
			return nil, err
		}
		if len(p.Choices) > 0 && !slices.Contains(p.Choices, s) {
			return bad("must be one of %s", strings.Join(p.Choices, ", "))
		}
		return s, nil
	case ParamInt, ParamFloat:
		var x float64
		switch n := v.(type) {
		case int:
			x = float64(n)
		case int64:
			x = float64(n)
		case float64:
			x = n
		case json.Number:
			f, err := n.Float64()
			if err != nil {
				return bad("must be a number")
			}
			x = f
		default:
			return bad("must be a number")
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return bad("must be a finite number")
		}
		if p.Type == ParamInt && x != math.Trunc(x) {
			return bad("must be a whole number")
		}
		if err := inBounds(x, "value"); err != nil {
			return nil, err
		}
		if p.Type == ParamInt {
			return int(x), nil
		}
		return x, nil
	case ParamBool:
		b, ok := v.(bool)
		if !ok {
			return bad("must be true or false")
		}
		return b, nil
	case ParamStrings:
		var list []string
		switch l := v.(type) {
		case []string:
			list = slices.Clone(l)
		case []any:
			for _, x := range l {
				s, ok := x.(string)
				if !ok {
					return bad("must be a list of text")
				}
				list = append(list, s)
			}
		default:
			return bad("must be a list of text")
		}
		if err := inBounds(float64(len(list)), "number of items"); err != nil {
			return nil, err
		}
		for _, s := range list {
			if len(p.Choices) > 0 && !slices.Contains(p.Choices, s) {
				return bad("%q is not one of %s", s, strings.Join(p.Choices, ", "))
			}
		}
		return list, nil
	}
	return bad("unknown type")
}

// ResolveParams checks input against the declared parameters, applies
// defaults and returns the run's immutable Params. Unknown names are
// rejected so a typo never silently falls back to a default.
func (w *Workflow) ResolveParams(input map[string]any) (Params, error) {
	decl, err := w.Params()
	if err != nil {
		return nil, err
	}
	fe := fault.FieldErrors{}
	known := map[string]bool{}
	out := Params{}
	for _, p := range decl {
		known[p.Name] = true
		v, ok := input[p.Name]
		if !ok || v == nil {
			if p.Required {
				fe.Add(p.Name, "is required")
			} else if p.Default != nil {
				d, _ := p.check(p.Default)
				out[p.Name] = d
			}
			continue
		}
		cv, err := p.check(v)
		if err != nil {
			fe.Add(p.Name, fault.ErrorMessage(err))
			continue
		}
		out[p.Name] = cv
	}
	names := make([]string, 0, len(input))
	for n := range input {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !known[n] {
			fe.Add(n, "unknown parameter")
		}
	}
	if err := fe.Err(fmt.Sprintf("invalid parameters for workflow %q", w.Name)); err != nil {
		return nil, err
	}
	return out, nil
}

// maxIterations is the loop bound for a run.
func (w *Workflow) maxIterations(p Params) int {
	if n := p.Int(MaxIterationsParam); n > 0 {
		return n
	}
	return w.MaxIterations
}
