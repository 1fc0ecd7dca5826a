package flow

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// The run's State holds one key per context value and per stage's
// outputs, so a step's commit rewrites only what the stage changed, plus
// the counters loops are bounded by and the gates' condition results.
const (
	contextKey = "context."
	outputsKey = "outputs."
	visitsKey  = "visits." // how many times a stage has run to the end
	loopsKey   = "loops."  // how many times a gate has sent the run back
	checksKey  = "checks." // a gate's condition results at its last visit
	stampKey   = "definition"
)

// Stamp is which definition text a run runs: set when the run starts, so
// an edited file can be told apart from the one the run began with.
type Stamp struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	Hash    string `json:"hash"` // SHA-256 of the file (def.Definition.Hash)
}

// RunStamp returns the run's Stamp (ok false for a run not started from a
// definition file).
func RunStamp(s engine.State) (st Stamp, ok bool, err error) {
	return engine.Get[Stamp](s, stampKey)
}

// Context returns the run's context (context.<key> in expressions).
func Context(s engine.State) (map[string]any, error) {
	out := map[string]any{}
	for k, raw := range s {
		if name, ok := strings.CutPrefix(k, contextKey); ok {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fault.Errorf(fault.EInternal, "state %q: %v", k, err)
			}
			out[name] = v
		}
	}
	return out, nil
}

// Outputs returns the outputs of the stages that have run, by stage.
func Outputs(s engine.State) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for k, raw := range s {
		if stage, ok := strings.CutPrefix(k, outputsKey); ok {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fault.Errorf(fault.EInternal, "state %q: %v", k, err)
			}
			out[stage] = v
		}
	}
	return out, nil
}

// Check is one automatic condition of a gate, as evaluated.
type Check struct {
	Condition string `json:"condition"`
	Passed    bool   `json:"passed"`
	Error     string `json:"error,omitempty"`
}

// Checks returns a gate's condition results at its last visit.
func Checks(s engine.State, stage string) ([]Check, error) {
	out, _, err := engine.Get[[]Check](s, checksKey+stage)
	return out, err
}

func count(s engine.State, key string) (int, error) {
	n, _, err := engine.Get[int](s, key)
	return n, err
}

// compile compiles an expression once, at Compile. Loading type-checked
// it against the names in scope; here it is compiled without a typed
// environment, since at run time context and outputs hold any JSON.
func (c *compiler) compile(src string, p def.Pos, stage string) {
	if _, ok := c.progs[src]; ok || src == "" {
		return
	}
	prog, err := expr.Compile(src)
	if err != nil {
		c.errorf(p, stage, "expression %q: %v", src, err)
		return
	}
	c.progs[src] = prog
}

// compileValue compiles the templates inside a value (strings, lists and
// maps of them).
func (c *compiler) compileValue(v any, p def.Pos, stage string) {
	switch x := v.(type) {
	case string:
		segs, err := def.ParseTemplate(x)
		if err != nil {
			c.errorf(p, stage, "template %q: %v", x, err)
			return
		}
		for _, sg := range segs {
			if sg.Expr != "" {
				c.compile(sg.Expr, p, stage)
			}
		}
	case []any:
		for _, e := range x {
			c.compileValue(e, p, stage)
		}
	case map[string]any:
		for _, e := range x {
			c.compileValue(e, p, stage)
		}
	}
}

// env is what expressions see: params (with their declared Go types),
// context, and outputs of every stage (empty until it runs, so
// outputs.s.x is nil rather than an error before s has run).
func (c *compiler) env(p engine.Params, s engine.State) (map[string]any, error) {
	ctx, err := Context(s)
	if err != nil {
		return nil, err
	}
	outs, err := Outputs(s)
	if err != nil {
		return nil, err
	}
	outputs := make(map[string]any, len(c.stages))
	for _, id := range c.stages {
		o := outs[id]
		if o == nil {
			o = map[string]any{}
		}
		outputs[id] = o
	}
	env := map[string]any{"params": c.paramValues(p), "context": ctx, "outputs": outputs}
	if raw, ok := s[itemKey]; ok { // a for_each branch's item
		var item any
		if err := json.Unmarshal(raw, &item); err != nil {
			return nil, fault.Errorf(fault.EInternal, "state %q: %v", itemKey, err)
		}
		env[itemKey] = item
	}
	return env, nil
}

// paramValues gives each declared param its declared Go type: a run's
// params come back from storage as JSON (numbers as float64).
func (c *compiler) paramValues(p engine.Params) map[string]any {
	out := make(map[string]any, len(c.d.Params))
	for _, d := range c.d.Params {
		if !p.Has(d.Name) {
			out[d.Name] = nil
			continue
		}
		switch d.Type {
		case def.ParamInt:
			out[d.Name] = p.Int(d.Name)
		case def.ParamFloat:
			switch v := p[d.Name].(type) {
			case int:
				out[d.Name] = float64(v)
			case int64:
				out[d.Name] = float64(v)
			default:
				out[d.Name] = v
			}
		case def.ParamList:
			out[d.Name] = p.Strings(d.Name)
		default:
			out[d.Name] = p[d.Name]
		}
	}
	return out
}

// eval runs a compiled expression.
func (c *compiler) eval(src string, env map[string]any) (any, error) {
	prog, ok := c.progs[src]
	if !ok {
		return nil, fmt.Errorf("expression %q was not compiled", src)
	}
	v, err := expr.Run(prog, env)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	return v, nil
}

func (c *compiler) evalBool(src string, env map[string]any) (bool, error) {
	v, err := c.eval(src, env)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q is %v, not true or false", src, v)
	}
	return b, nil
}

// value evaluates the templates inside a value. A string that is exactly
// one {{ expr }} takes the expression's value; any other string has its
// parts written into the text.
func (c *compiler) value(v any, env map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		segs, err := def.ParseTemplate(x)
		if err != nil {
			return nil, err
		}
		if len(segs) == 1 && segs[0].Expr != "" {
			return c.eval(segs[0].Expr, env)
		}
		var b strings.Builder
		for _, sg := range segs {
			if sg.Expr == "" {
				b.WriteString(sg.Text)
				continue
			}
			r, err := c.eval(sg.Expr, env)
			if err != nil {
				return nil, err
			}
			b.WriteString(text(r))
		}
		return b.String(), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := c.value(e, env)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := c.value(e, env)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

// text writes a value into a template's text: scalars as people write
// them, lists and maps as JSON.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool, int, int64:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// fields evaluates a map the file writes (with, on_fail.context).
func (c *compiler) fields(fs []def.Field, env map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(fs))
	for _, f := range fs {
		v, err := c.value(f.Value, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Key, err)
		}
		out[f.Key] = v
	}
	return out, nil
}

// limit is a max_iterations' value for this run.
func (c *compiler) limit(l def.Limit, env map[string]any) (int, error) {
	if l.Expr == "" {
		return l.N, nil
	}
	v, err := c.value(l.Expr, env)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n == math.Trunc(n) {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("max_iterations %q is %v, not a whole number", l.Expr, v)
}

// init is the workflow's Init: the run's Stamp and the initial context,
// its templates over params only.
func (c *compiler) init(p engine.Params) (engine.State, error) {
	env := map[string]any{"params": c.paramValues(p)}
	st := engine.State{}
	if err := st.Set(stampKey, Stamp{Name: c.d.Metadata.Name, Version: c.d.Metadata.Version, Hash: c.d.Hash}); err != nil {
		return nil, err
	}
	for _, f := range c.d.Context {
		v, err := c.value(f.Value, env)
		if err != nil {
			return nil, fault.Errorf(fault.EInvalid, "workflow %q: initial context %s: %v", c.d.Metadata.Name, f.Key, err)
		}
		if err := st.Set(contextKey+f.Key, v); err != nil {
			return nil, err
		}
	}
	return st, nil
}
