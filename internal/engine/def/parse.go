package def

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"quarry/internal/fault"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Options are what validation needs from the running program.
type Options struct {
	// Skills are the names of the registered skill handlers; a skill or
	// action stage naming any other is an error.
	Skills []string
	// Forms are the registered gate forms by name, each with the names of
	// its outcomes: a gate's form must be one of them, and its options
	// must route each outcome (and may route FormSkip).
	Forms map[string][]string
	// ExportFormats are the formats an export action may write (nil: not
	// checked at load); Workflows the names start_workflow may start (nil:
	// not checked at load).
	ExportFormats []string
	Workflows     []string
	// WebhookHosts are the hosts webhook stages may call
	// (QUARRY_WEBHOOK_HOSTS); a URL's host must be one of them exactly
	// (case-insensitive; "host:port" entries match that port only).
	WebhookHosts []string
}

// MaxFileSize bounds a definition file; workflows are small.
const MaxFileSize = 1 << 20

var (
	identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	nameRe  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// Load decodes and validates one definition file. On any problem it
// returns the definition as far as it was read and a fault.EInvalid error
// wrapping Errors (every problem found, in file order): errors.As(err,
// &errs) lists them.
func Load(file string, src []byte, opt Options) (*Definition, error) {
	r := &reporter{file: file}
	d := parse(r, src)
	if d != nil {
		validate(r, d, opt)
	}
	if len(r.errs) > 0 {
		errs := r.errs.sorted()
		return d, &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("workflow %s has %d problem(s)", file, len(errs)), Err: errs}
	}
	return d, nil
}

// parse reads the YAML and decodes the definition, reporting shape
// problems (unknown keys, wrong types, missing keys).
func parse(r *reporter, src []byte) *Definition {
	if len(src) > MaxFileSize {
		r.at(Pos{1, 1}, "", "the file is larger than %d bytes", MaxFileSize)
		return nil
	}
	f, err := parser.ParseBytes(src, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		var ye yaml.Error
		p := Pos{1, 1}
		msg := err.Error()
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if t := ye.GetToken(); t != nil && t.Position != nil {
				p = Pos{t.Position.Line, t.Position.Column}
			}
		}
		r.at(p, "", "YAML: %s", msg)
		return nil
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if _, ok := doc.Body.(*ast.CommentGroupNode); ok {
			continue
		}
		if body != nil {
			r.at(posOf(doc.Body), "", "a definition file holds one YAML document")
			break
		}
		body = doc.Body
	}
	if body == nil {
		r.at(Pos{1, 1}, "", "the file is empty")
		return nil
	}
	sum := sha256.Sum256(src)
	def := &Definition{File: r.file, Hash: hex.EncodeToString(sum[:]), Text: string(src), Metadata: Metadata{Version: 1}}
	dec := &decoder{r: r}
	kvs, ok := dec.mapping(body, "", "the definition", "apiVersion", "kind", "metadata", "params", "context", "stages", "backup", "trigger", "concurrency", "on_complete", "on_error")
	if !ok {
		return def
	}
	seen := map[string]bool{}
	for _, e := range kvs {
		seen[e.key] = true
		switch e.key {
		case "apiVersion":
			if s, ok := dec.str(e, ""); ok {
				def.APIVersion = s
				if s != APIVersion {
					r.at(posOf(e.value), "", "apiVersion must be %q, not %q", APIVersion, s)
				}
			}
		case "kind":
			if s, ok := dec.str(e, ""); ok {
				def.Kind = s
				if s != Kind {
					r.at(posOf(e.value), "", "kind must be %q, not %q", Kind, s)
				}
			}
		case "metadata":
			dec.metadata(e, def)
		case "params":
			dec.params(e, def)
		case "context":
			def.Context = dec.fields(e, "", func(s string, p Pos) {
				def.exprs = append(def.exprs, exprRef{src: s, pos: p, kind: exprTemplate, params: true})
			})
		case "backup":
			def.Backup, _ = dec.boolean(e, "")
		case "trigger":
			dec.triggers(e, def)
		case "concurrency":
			dec.concurrency(e, def)
		case "on_complete", "on_error":
			hooks := dec.hooks(e, func(r exprRef) { def.exprs = append(def.exprs, r) })
			if e.key == "on_complete" {
				def.OnComplete = hooks
			} else {
				def.OnError = hooks
			}
		case "stages":
			items, ok := dec.sequence(e, "")
			if !ok {
				continue
			}
			def.Stages = []*Stage{}
			for _, it := range items {
				if s := dec.stage(it, false); s != nil {
					def.Stages = append(def.Stages, s)
				}
			}
			if len(items) == 0 {
				r.at(posOf(e.value), "", "stages is empty: a workflow needs at least one stage")
			}
		}
	}
	for _, k := range []string{"apiVersion", "kind", "metadata", "stages"} {
		if !seen[k] {
			r.at(posOf(body), "", "missing key %q", k)
		}
	}
	return def
}

func (d *decoder) metadata(e kv, def *Definition) {
	kvs, ok := d.mapping(e.value, "", "metadata", "name", "title", "description", "version")
	if !ok {
		return
	}
	named := false
	for _, m := range kvs {
		switch m.key {
		case "name":
			if s, ok := d.str(m, ""); ok {
				named = true
				def.Metadata.Name = s
				if !nameRe.MatchString(s) {
					d.r.at(posOf(m.value), "", "metadata.name %q must be lower-case letters, digits, - and _", s)
				}
			}
		case "title":
			def.Metadata.Title, _ = d.str(m, "")
		case "description":
			def.Metadata.Description, _ = d.str(m, "")
		case "version":
			if n, ok := d.integer(m, ""); ok {
				def.Metadata.Version = n
				if n < 1 {
					d.r.at(posOf(m.value), "", "metadata.version must be at least 1")
				}
			}
		}
	}
	if !named {
		d.r.at(posOf(e.value), "", "metadata has no name")
	}
}

// fields decodes a map of values (context, with, headers), handing every
// string to tmpl.
func (d *decoder) fields(e kv, stage string, tmpl func(string, Pos)) []Field {
	kvs, ok := d.mapping(e.value, stage, e.key)
	if !ok {
		return nil
	}
	out := make([]Field, 0, len(kvs))
	for _, f := range kvs {
		out = append(out, Field{Key: f.key, Value: d.value(f.value, stage, tmpl), Pos: f.pos})
	}
	return out
}

func (d *decoder) params(e kv, def *Definition) {
	items, ok := d.sequence(e, "")
	if !ok {
		return
	}
	for _, it := range items {
		kvs, ok := d.mapping(it, "", "a parameter", "name", "type", "required", "default", "min", "max", "enum", "description")
		if !ok {
			continue
		}
		p := Param{Pos: posOf(it)}
		var def0 *kv
		for _, f := range kvs {
			switch f.key {
			case "name":
				p.Name, _ = d.str(f, "")
			case "type":
				if s, ok := d.str(f, ""); ok {
					p.Type = ParamType(s)
					switch p.Type {
					case ParamString, ParamInt, ParamFloat, ParamBool, ParamList:
					default:
						d.r.at(posOf(f.value), "", "parameter type %q is not one of string, int, float, bool, list", s)
					}
				}
			case "required":
				p.Required, _ = d.boolean(f, "")
			case "default":
				f := f
				def0 = &f
			case "min":
				if v, ok := d.number(f, ""); ok {
					p.Min = &v
				}
			case "max":
				if v, ok := d.number(f, ""); ok {
					p.Max = &v
				}
			case "enum":
				if vs, ok := d.sequence(f, ""); ok {
					for _, v := range vs {
						s, ok := scalarString(v)
						if !ok {
							d.r.at(posOf(v), "", "enum values must be strings")
							continue
						}
						p.Enum = append(p.Enum, s)
					}
				}
			case "description":
				p.Description, _ = d.str(f, "")
			}
		}
		if def0 != nil {
			p.Default = d.value(def0.value, "", nil)
			if p.Default == nil {
				d.r.at(def0.pos, "", "parameter %q: default is empty", p.Name)
			}
		}
		if p.Name == "" {
			d.r.at(p.Pos, "", "a parameter has no name")
		}
		if p.Type == "" {
			d.r.at(p.Pos, "", "parameter %q has no type", p.Name)
		}
		def.Params = append(def.Params, p)
	}
}

// Keys every stage may have, and the keys of each type.
var (
	commonKeys = []string{"id", "type", "title", "condition", "skip_to", "timeout", "on_error", "max_iterations"}
	typeKeys   = map[StageType][]string{
		TypeSkill:    {"skill", "with", "outputs", "on_complete", "postconditions"},
		TypeAction:   {"skill", "action", "with", "required", "outputs", "on_complete", "postconditions"},
		TypeSet:      {"set", "on_complete", "postconditions"},
		TypeGate:     {"form", "conditions", "options", "approval", "context", "on_pass", "on_fail", "on_timeout", "notify"},
		TypeParallel: {"branches", "for_each", "join", "on_any_reject", "on_all_reject", "on_complete"},
		TypeDelay:    {"duration", "until", "poll", "on_complete"},
		TypeWebhook:  {"request", "expect", "on_complete"},
	}
	allStageKeys = func() []string {
		out := append([]string{}, commonKeys...)
		for _, t := range []StageType{TypeSkill, TypeAction, TypeSet, TypeGate, TypeParallel, TypeDelay, TypeWebhook} {
			for _, k := range typeKeys[t] {
				if !contains(out, k) {
					out = append(out, k)
				}
			}
		}
		return out
	}()
)

// stage decodes one stage; inBranch marks a stage inside a parallel branch.
func (d *decoder) stage(n ast.Node, inBranch bool) *Stage {
	kvs, ok := d.mapping(n, peekID(n), "a stage", allStageKeys...)
	if !ok {
		return nil
	}
	s := &Stage{Pos: posOf(n), keys: map[string]Pos{}}
	for _, e := range kvs {
		s.keys[e.key] = e.pos
		switch e.key {
		case "id":
			s.ID, _ = d.str(e, "")
		case "type":
			if t, ok := d.str(e, ""); ok {
				s.Type = StageType(t)
			}
		}
	}
	id := s.ID
	if _, ok := s.keys["id"]; !ok {
		d.r.at(s.Pos, "", "a stage has no id")
	} else if !identRe.MatchString(id) {
		d.r.at(s.keys["id"], id, "stage id must be letters, digits and _, not starting with a digit")
	} else if id == Complete {
		d.r.at(s.keys["id"], id, "stage id %q is reserved: it is the target that ends the run", Complete)
	}
	allowed, known := typeKeys[s.Type]
	switch {
	case s.keys["type"] == Pos{}:
		d.r.at(s.Pos, id, "a stage has no type")
	case !known:
		d.r.at(s.keys["type"], id, "unknown stage type %q (skill, action, set, gate, parallel, delay, webhook)", s.Type)
	case inBranch && s.Type == TypeParallel:
		d.r.at(s.keys["type"], id, "a parallel stage cannot sit inside a branch")
	}
	add := func(r exprRef) { s.exprs = append(s.exprs, r) }
	tmpl := func(secrets bool) func(string, Pos) {
		return func(src string, p Pos) { add(exprRef{src: src, pos: p, kind: exprTemplate, secrets: secrets}) }
	}
	for _, e := range kvs {
		if e.key == "id" || e.key == "type" {
			continue
		}
		if known && !contains(commonKeys, e.key) && !contains(allowed, e.key) {
			d.r.at(e.pos, id, "key %q does not apply to %s %s stage", e.key, article(s.Type), s.Type)
			continue
		}
		switch e.key {
		case "title":
			s.Title, _ = d.str(e, id)
		case "condition":
			if src, ok := d.str(e, id); ok {
				s.Condition = Expr{Src: src, Pos: posOf(e.value)}
				add(exprRef{src: src, pos: posOf(e.value), kind: exprBool})
			}
		case "skip_to":
			s.SkipTo = d.target(e, id)
		case "timeout":
			s.Timeout, _ = d.duration(e, id)
		case "on_error":
			s.OnError = d.onError(e, id)
		case "max_iterations":
			var r *exprRef
			s.MaxIterations, r = d.limit(e, id)
			if r != nil {
				add(*r)
			}
		case "on_complete":
			s.OnComplete = d.target(e, id)
		case "skill":
			s.Skill, _ = d.str(e, id)
		case "action":
			s.Action, _ = d.str(e, id)
		case "required":
			s.Required, _ = d.boolean(e, id)
		case "with":
			s.With = d.fields(e, id, tmpl(false))
		case "outputs":
			s.Outputs = d.outputs(e, id)
		case "set":
			s.Set = d.setFields(e, id, add)
		case "postconditions":
			s.Postconditions = d.exprList(e, id, add)
		case "conditions":
			if items, ok := d.sequence(e, id); ok {
				for _, it := range items {
					src, ok := scalarString(it)
					if !ok {
						d.r.at(posOf(it), id, "a condition must be a string expression")
						continue
					}
					s.Conditions = append(s.Conditions, Expr{Src: src, Pos: posOf(it)})
					add(exprRef{src: src, pos: posOf(it), kind: exprBool})
				}
			}
		case "form":
			s.Form, _ = d.str(e, id)
		case "options":
			if s.Approval != nil && s.Approval.Inline {
				d.r.at(posOf(e.value), id, "the gate's options are given in approval.options already; give them once")
				break
			}
			s.Options = d.options(e, id)
		case "approval":
			s.Approval = d.approval(e, id)
			if a := s.Approval; a != nil && a.Inline {
				if len(s.Options) > 0 {
					d.r.at(a.at("options"), id, "the gate's options are given in options already; give them once")
					break
				}
				s.Options = a.defined
			}
		case "context":
			if items, ok := d.sequence(e, id); ok {
				for _, it := range items {
					k, ok := scalarString(it)
					if !ok || !identRe.MatchString(k) {
						d.r.at(posOf(it), id, "a gate's context lists context keys (names)")
						continue
					}
					s.ContextKeys = append(s.ContextKeys, k)
				}
			}
		case "on_pass":
			s.OnPass = d.target(e, id)
		case "on_fail":
			s.OnFail = d.onFail(e, id, add)
		case "on_timeout":
			s.OnTimeout = d.onTimeout(e, id)
		case "notify":
			s.Notify = d.notify(e, id)
		case "branches":
			s.Branches = d.branches(e, id)
		case "for_each":
			if src, ok := d.str(e, id); ok {
				s.ForEach = Expr{Src: src, Pos: posOf(e.value)}
				add(exprRef{src: src, pos: posOf(e.value), kind: exprBare})
			}
		case "join":
			s.Join = d.join(e, id)
		case "on_any_reject":
			s.OnAnyReject = d.target(e, id)
		case "on_all_reject":
			s.OnAllReject = d.target(e, id)
		case "duration":
			s.Duration, _ = d.duration(e, id)
		case "until":
			if src, ok := d.str(e, id); ok {
				s.Until = src
				add(exprRef{src: src, pos: posOf(e.value), kind: exprTemplate})
			}
		case "poll":
			s.Poll = d.poll(e, id, add)
		case "request":
			s.Request = d.request(e, id, tmpl(true))
		case "expect":
			s.Expect = d.expect(e, id, tmpl(false))
		}
	}
	return s
}

func (d *decoder) setFields(e kv, stage string, add func(exprRef)) []Field {
	kvs, ok := d.mapping(e.value, stage, "set")
	if !ok {
		return nil
	}
	var out []Field
	for _, f := range kvs {
		var src string
		switch v := f.value.(type) {
		case *ast.StringNode, *ast.LiteralNode:
			src, _ = scalarString(v)
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode:
			src = v.String()
		default:
			d.r.at(posOf(f.value), stage, "set %s: a value must be an expression", f.key)
			continue
		}
		if !identRe.MatchString(f.key) {
			d.r.at(f.pos, stage, "set key %q must be a name (letters, digits, _)", f.key)
		}
		out = append(out, Field{Key: f.key, Value: src, Pos: f.pos})
		add(exprRef{src: src, pos: posOf(f.value), kind: exprBare})
	}
	if len(kvs) == 0 {
		d.r.at(posOf(e.value), stage, "set is empty")
	}
	return out
}

func (d *decoder) outputs(e kv, stage string) []Output {
	items, ok := d.sequence(e, stage)
	if !ok {
		return nil
	}
	var out []Output
	for _, it := range items {
		kvs, ok := d.mapping(it, stage, "an output", "name", "required")
		if !ok {
			continue
		}
		o := Output{Pos: posOf(it)}
		for _, f := range kvs {
			switch f.key {
			case "name":
				o.Name, _ = d.str(f, stage)
			case "required":
				o.Required, _ = d.boolean(f, stage)
			}
		}
		if o.Name == "" {
			d.r.at(o.Pos, stage, "an output has no name")
		}
		out = append(out, o)
	}
	return out
}

// then reads "escalate", "fail" or {goto: X}.
func (d *decoder) then(e kv, stage string) Then {
	if s, ok := scalarString(e.value); ok {
		switch s {
		case ThenEscalate, ThenFail:
			return Then{Action: s}
		}
		d.r.at(posOf(e.value), stage, "then must be escalate, fail or {goto: STAGE}, not %q", s)
		return Then{}
	}
	kvs, ok := d.mapping(e.value, stage, "then", "goto")
	if !ok || len(kvs) == 0 {
		if ok {
			d.r.at(posOf(e.value), stage, "then must be escalate, fail or {goto: STAGE}")
		}
		return Then{}
	}
	return Then{Action: ThenGoto, Goto: d.target(kvs[0], stage)}
}

func (d *decoder) onError(e kv, stage string) *OnError {
	kvs, ok := d.mapping(e.value, stage, "on_error", "retry", "backoff", "then", "resume")
	if !ok {
		return nil
	}
	o := &OnError{}
	var resumeAt *Pos
	for _, f := range kvs {
		switch f.key {
		case "retry":
			if n, ok := d.integer(f, stage); ok {
				o.Retry = n
				if n < 0 || n > 100 {
					d.r.at(posOf(f.value), stage, "retry must be between 0 and 100")
				}
			}
		case "backoff":
			o.Backoff, _ = d.duration(f, stage)
		case "then":
			o.Then = d.then(f, stage)
		case "resume":
			if v, ok := d.str(f, stage); ok {
				switch v {
				case ResumeAuto, ResumeAsk:
					o.Resume = v
					p := posOf(f.value)
					resumeAt = &p
				default:
					d.r.at(posOf(f.value), stage, "resume must be auto or ask, not %q", v)
				}
			}
		}
	}
	if o.Resume == ResumeAsk && o.Retry == 0 && resumeAt != nil {
		d.r.at(*resumeAt, stage, "resume: ask applies to retries: set retry")
	}
	return o
}

// exprList reads a list of boolean expressions (postconditions).
func (d *decoder) exprList(e kv, stage string, add func(exprRef)) []Expr {
	items, ok := d.sequence(e, stage)
	if !ok {
		return nil
	}
	var out []Expr
	for _, it := range items {
		src, ok := scalarString(it)
		if !ok {
			d.r.at(posOf(it), stage, "%s must list string expressions", e.key)
			continue
		}
		out = append(out, Expr{Src: src, Pos: posOf(it)})
		add(exprRef{src: src, pos: posOf(it), kind: exprBool})
	}
	return out
}

func (d *decoder) onFail(e kv, stage string, add func(exprRef)) *OnFail {
	kvs, ok := d.mapping(e.value, stage, "on_fail", "goto", "context", "max_iterations", "then")
	if !ok {
		return nil
	}
	o := &OnFail{}
	for _, f := range kvs {
		switch f.key {
		case "goto":
			o.Goto = d.target(f, stage)
		case "context":
			o.Context = d.fields(f, stage, func(src string, p Pos) { add(exprRef{src: src, pos: p, kind: exprTemplate}) })
		case "max_iterations":
			var r *exprRef
			o.MaxIterations, r = d.limit(f, stage)
			if r != nil {
				add(*r)
			}
		case "then":
			o.Then = d.then(f, stage)
		}
	}
	return o
}

// onTimeout reads {default: LABEL} or {extend, max_extensions, then}.
func (d *decoder) onTimeout(e kv, stage string) *OnTimeout {
	kvs, ok := d.mapping(e.value, stage, "on_timeout", "default", "extend", "max_extensions", "then")
	if !ok {
		return nil
	}
	o := &OnTimeout{Pos: posOf(e.value), keys: map[string]Pos{}}
	for _, f := range kvs {
		o.keys[f.key] = posOf(f.value)
		switch f.key {
		case "default":
			o.Default, _ = d.str(f, stage)
		case "extend":
			o.Extend, _ = d.duration(f, stage)
		case "max_extensions":
			if n, ok := d.integer(f, stage); ok {
				o.MaxExtensions = n
				if n < 1 || n > 100 {
					d.r.at(posOf(f.value), stage, "on_timeout.max_extensions must be between 1 and 100")
				}
			}
		case "then":
			o.Then = d.then(f, stage)
		}
	}
	return o
}

// notify reads a list of {webhook: URL} and {email: ADDRESS}.
func (d *decoder) notify(e kv, stage string) []Notice {
	items, ok := d.sequence(e, stage)
	if !ok {
		return nil
	}
	var out []Notice
	for _, it := range items {
		kvs, ok := d.mapping(it, stage, "a notice", "webhook", "email")
		if !ok {
			continue
		}
		n := Notice{Pos: posOf(it)}
		for _, f := range kvs {
			switch f.key {
			case "webhook":
				n.Webhook, _ = d.str(f, stage)
			case "email":
				n.Email, _ = d.str(f, stage)
			}
		}
		if (n.Webhook == "") == (n.Email == "") {
			d.r.at(n.Pos, stage, "a notice is {webhook: URL} or {email: ADDRESS}: exactly one of them")
		}
		out = append(out, n)
	}
	if len(items) == 0 {
		d.r.at(posOf(e.value), stage, "notify is empty")
	}
	return out
}

func (d *decoder) options(e kv, stage string) []Option {
	items, ok := d.sequence(e, stage)
	if !ok {
		return nil
	}
	var out []Option
	for _, it := range items {
		kvs, ok := d.mapping(it, stage, "an option", "label", "next", "requires_input")
		if !ok {
			continue
		}
		o := Option{Pos: posOf(it)}
		for _, f := range kvs {
			switch f.key {
			case "label":
				o.Label, _ = d.str(f, stage)
			case "next":
				o.Next = d.target(f, stage)
			case "requires_input":
				o.RequiresInput, _ = d.boolean(f, stage)
			}
		}
		if o.Label == "" {
			d.r.at(o.Pos, stage, "an option has no label")
		}
		if o.Next.ID == "" {
			d.r.at(o.Pos, stage, "option %q has no next", o.Label)
		}
		out = append(out, o)
	}
	return out
}

// approval reads a gate's {count, of, voters, from, self_approval, options}.
func (d *decoder) approval(e kv, stage string) *Approval {
	kvs, ok := d.mapping(e.value, stage, "approval", "count", "of", "voters", "from", "self_approval", "options")
	if !ok {
		return nil
	}
	a := &Approval{Pos: posOf(e.value), keys: map[string]Pos{}}
	for _, f := range kvs {
		a.keys[f.key] = posOf(f.value)
		switch f.key {
		case "count":
			if n, ok := d.integer(f, stage); ok {
				a.Count = n
				if n < 1 {
					d.r.at(posOf(f.value), stage, "approval.count must be at least 1")
				}
			}
		case "of":
			if n, ok := d.integer(f, stage); ok {
				a.Of = n
			}
		case "from":
			role, _ := scalarString(f.value)
			switch strings.ToLower(strings.TrimSpace(role)) {
			case "owners", "owner":
				a.From = "owner"
			case "reviewers", "reviewer":
				a.From = "reviewer"
			default:
				d.r.at(posOf(f.value), stage, "approval.from is owners or reviewers (the project role voters must hold; owners count as reviewers), not %q", role)
			}
		case "self_approval":
			if on, ok := d.boolean(f, stage); ok {
				a.NoSelf = !on
			}
		case "voters":
			if items, ok := d.sequence(f, stage); ok {
				for _, it := range items {
					name, ok := scalarString(it)
					if !ok || strings.TrimSpace(name) == "" {
						d.r.at(posOf(it), stage, "approval.voters lists people's names")
						continue
					}
					a.Voters = append(a.Voters, strings.TrimSpace(name))
					a.voterPos = append(a.voterPos, posOf(it))
				}
			} else {
				delete(a.keys, "voters") // said already: not a list
			}
		case "options":
			if items, ok := d.sequence(f, stage); ok && len(items) > 0 && isMapping(items[0]) {
				// The gate's options themselves ({label, next}): every one
				// passes once count people choose it.
				a.Inline = true
				a.defined = d.options(f, stage)
				for i, o := range a.defined {
					a.Options = append(a.Options, o.Label)
					a.optionPos = append(a.optionPos, posOf(items[min(i, len(items)-1)]))
				}
				break
			}
			if items, ok := d.sequence(f, stage); ok {
				for _, it := range items {
					l, ok := scalarString(it)
					if !ok {
						d.r.at(posOf(it), stage, "approval.options lists option labels")
						continue
					}
					a.Options = append(a.Options, l)
					a.optionPos = append(a.optionPos, posOf(it))
				}
			}
		}
	}
	return a
}

// branches reads each branch: a stage (the branch is named by its id), a
// list of stages (named by the first), or {id, condition, stages}.
func (d *decoder) branches(e kv, stage string) []Branch {
	items, ok := d.sequence(e, stage)
	if !ok {
		return nil
	}
	var out []Branch
	for _, it := range items {
		b := Branch{Pos: posOf(it)}
		switch v := it.(type) {
		case *ast.SequenceNode:
			for _, x := range v.Values {
				if s := d.stage(x, true); s != nil {
					b.Stages = append(b.Stages, s)
				}
			}
		default:
			kvs, ok := d.mapping(it, stage, "a branch", nil...)
			if !ok {
				continue
			}
			long := false
			for _, f := range kvs {
				if f.key == "stages" {
					long = true
				}
			}
			if !long {
				if s := d.stage(it, true); s != nil {
					b.Stages = append(b.Stages, s)
				}
				break
			}
			for _, f := range kvs {
				switch f.key {
				case "id":
					b.ID, _ = d.str(f, stage)
				case "condition":
					if src, ok := d.str(f, stage); ok {
						b.Condition = Expr{Src: src, Pos: posOf(f.value)}
					}
				case "stages":
					if xs, ok := d.sequence(f, stage); ok {
						for _, x := range xs {
							if s := d.stage(x, true); s != nil {
								b.Stages = append(b.Stages, s)
							}
						}
					}
				default:
					d.r.at(f.pos, stage, "unknown key %q in a branch (id, condition, stages)", f.key)
				}
			}
		}
		if b.ID == "" && len(b.Stages) > 0 {
			b.ID = b.Stages[0].ID
		}
		if len(b.Stages) == 0 {
			d.r.at(b.Pos, stage, "a branch has no stages")
		}
		out = append(out, b)
	}
	if len(items) == 0 {
		d.r.at(posOf(e.value), stage, "branches is empty")
	}
	return out
}

func (d *decoder) join(e kv, stage string) Join {
	p := posOf(e.value)
	if s, ok := scalarString(e.value); ok {
		switch s {
		case JoinAll, JoinAny:
			return Join{Mode: s, Pos: p}
		}
		d.r.at(p, stage, "join must be all, any or a number, not %q", s)
		return Join{Pos: p}
	}
	n, ok := d.integer(e, stage)
	if !ok {
		return Join{Pos: p}
	}
	if n < 1 {
		d.r.at(p, stage, "join must be at least 1")
	}
	return Join{Mode: JoinN, N: n, Pos: p}
}

func (d *decoder) poll(e kv, stage string, add func(exprRef)) *Poll {
	kvs, ok := d.mapping(e.value, stage, "poll", "interval", "condition")
	if !ok {
		return nil
	}
	p := &Poll{}
	for _, f := range kvs {
		switch f.key {
		case "interval":
			p.Interval, _ = d.duration(f, stage)
		case "condition":
			if src, ok := d.str(f, stage); ok {
				p.Condition = Expr{Src: src, Pos: posOf(f.value)}
				add(exprRef{src: src, pos: posOf(f.value), kind: exprBool})
			}
		}
	}
	if p.Interval == 0 || p.Condition.Src == "" {
		d.r.at(posOf(e.value), stage, "poll needs an interval and a condition")
	}
	return p
}

func (d *decoder) request(e kv, stage string, tmpl func(string, Pos)) *Request {
	kvs, ok := d.mapping(e.value, stage, "request", "method", "url", "headers", "body")
	if !ok {
		return nil
	}
	r := &Request{Method: "POST", Pos: posOf(e.value)}
	for _, f := range kvs {
		switch f.key {
		case "method":
			if s, ok := d.str(f, stage); ok {
				r.Method = s
				if !contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, s) {
					d.r.at(posOf(f.value), stage, "method must be GET, POST, PUT, PATCH or DELETE, not %q", s)
				}
			}
		case "url":
			if s, ok := d.str(f, stage); ok {
				r.URL = s
				tmpl(s, posOf(f.value))
			}
		case "headers":
			r.Headers = d.fields(f, stage, tmpl)
		case "body":
			r.Body = d.value(f.value, stage, tmpl)
		}
	}
	if r.URL == "" {
		d.r.at(r.Pos, stage, "request has no url")
	}
	return r
}

func (d *decoder) expect(e kv, stage string, tmpl func(string, Pos)) *Expect {
	kvs, ok := d.mapping(e.value, stage, "expect", "status", "json")
	if !ok {
		return nil
	}
	x := &Expect{}
	for _, f := range kvs {
		switch f.key {
		case "status":
			var nodes []ast.Node
			if sq, ok := f.value.(*ast.SequenceNode); ok {
				nodes = sq.Values
			} else {
				nodes = []ast.Node{f.value}
			}
			for _, n := range nodes {
				code, ok := d.integer(kv{key: "status", value: n}, stage)
				if ok && (code < 100 || code > 599) {
					d.r.at(posOf(n), stage, "status %d is not an HTTP status", code)
				}
				x.Status = append(x.Status, code)
			}
		case "json":
			x.JSON = d.value(f.value, stage, tmpl)
		}
	}
	return x
}

// peekID is a stage's id before it is decoded, so even problems found
// while reading its keys name the stage.
func peekID(n ast.Node) string {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	}
	for _, mv := range values {
		if k, ok := scalarString(mv.Key); ok && k == "id" {
			id, _ := scalarString(mv.Value)
			return id
		}
	}
	return ""
}

// article is "a" or "an" before a stage type.
func article(t StageType) string {
	if t == TypeAction {
		return "an"
	}
	return "a"
}
