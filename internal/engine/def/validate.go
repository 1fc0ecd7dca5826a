package def

import (
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
)

// validator checks a decoded definition as a whole.
type validator struct {
	r   *reporter
	opt Options
	ids map[string]bool // every stage id, branches included
}

func validate(r *reporter, d *Definition, opt Options) {
	v := &validator{r: r, opt: opt, ids: map[string]bool{}}
	v.params(d)
	v.triggers(d)
	// Stage ids are unique across the file, branches included, because
	// outputs.<stage> names them all.
	var all []*Stage
	for _, s := range d.Stages {
		all = append(all, s)
		for _, b := range s.Branches {
			all = append(all, b.Stages...)
		}
	}
	for _, s := range all {
		if s.ID == "" {
			continue
		}
		if v.ids[s.ID] {
			v.r.at(s.at("id"), s.ID, "stage id %q is used twice", s.ID)
		}
		v.ids[s.ID] = true
	}
	sc := newScope(d, v.ids)
	for _, ref := range d.exprs {
		v.check(sc, ref, "")
	}
	for _, s := range d.Stages {
		v.stage(sc, s, false)
	}
	for i, hs := range [][]*Hook{d.OnComplete, d.OnError} {
		hook := []string{"on_complete", "on_error"}[i]
		for _, s := range all {
			if len(hs) > 0 && s.ID == hook {
				v.r.at(s.at("id"), s.ID, "stage id %q is the workflow's %s hooks' step: name the stage otherwise", hook, hook)
			}
		}
		for _, h := range hs {
			if h.Action != "" {
				v.checkAction(h.Action, h.at("action"), h.Pos, h.With, "")
			}
		}
	}
	v.graph(d.Stages, "")
	v.iterationBound(d.Stages)
}

// FormSkip is the option label every form gate may route besides its
// form's outcomes: where the run goes when a person skips the gate at an
// escalation (without it, the gate cannot be skipped).
const FormSkip = "skip"

// IterationBound is the one on_fail.max_iterations template a gate with
// a form may use besides a number: its iterate is the engine's
// iteration, bounded per run by the max_iterations parameter.
const IterationBound = "{{ params.max_iterations }}"

// formGate checks a gate with a form: the form is registered, its
// options route each of the form's outcomes once (skip optionally), and
// the keys of gates whose choices the engine draws are absent.
func (v *validator) formGate(s *Stage) {
	id := s.ID
	for _, k := range []string{"conditions", "context", "condition", "max_iterations", "timeout", "on_timeout", "notify"} {
		if _, ok := s.keys[k]; ok {
			v.r.at(s.at(k), id, "%s does not apply to a gate with a form", k)
		}
	}
	if f := s.OnFail; f != nil {
		if f.Goto.ID != "" || len(f.Context) > 0 {
			v.r.at(s.at("on_fail"), id, "on_fail of a gate with a form takes max_iterations and then only")
		}
		if f.Then.Action != "" && f.Then.Action != ThenGoto {
			v.r.at(s.at("on_fail"), id, "on_fail.then of a gate with a form is {goto: STAGE}: where its iterate goes once max_iterations is reached")
		}
		if l := f.MaxIterations; l.Expr != "" && squeeze(l.Expr) != squeeze(IterationBound) {
			v.r.at(l.Pos, id, "on_fail.max_iterations of a gate with a form is a number or %q: the run's iteration bound", IterationBound)
		}
	}
	outcomes, ok := v.opt.Forms[s.Form]
	if !ok {
		v.r.at(s.at("form"), id, "form %q is not registered", s.Form)
		return
	}
	if len(s.Options) == 0 {
		v.r.at(s.Pos, id, "a gate with a form needs options: one per outcome of form %s (%s)", s.Form, strings.Join(outcomes, ", "))
		return
	}
	seen := map[string]bool{}
	for _, o := range s.Options {
		switch {
		case o.Label != FormSkip && !contains(outcomes, o.Label):
			v.r.at(o.Pos, id, "form %s has no outcome %q (%s, or %s)", s.Form, o.Label, strings.Join(outcomes, ", "), FormSkip)
		case seen[o.Label]:
			v.r.at(o.Pos, id, "option %q is given twice", o.Label)
		}
		if o.RequiresInput {
			v.r.at(o.Pos, id, "requires_input does not apply to a form's options: the form asks what it needs")
		}
		seen[o.Label] = true
	}
	for _, oc := range outcomes {
		if !seen[oc] {
			v.r.at(s.at("options"), id, "form %s's outcome %q has no option", s.Form, oc)
		}
	}
}

// squeeze drops an expression's spaces, so "{{params.x}}" is "{{ params.x }}".
func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// iterationBound checks that the gates with a form agree on
// on_fail.max_iterations: the engine keeps one iteration count per run.
func (v *validator) iterationBound(stages []*Stage) {
	var first *Stage
	for _, s := range stages {
		if s.Type != TypeGate || s.Form == "" || s.OnFail == nil || !s.OnFail.MaxIterations.Set() {
			continue
		}
		if first == nil {
			first = s
			continue
		}
		a, b := first.OnFail.MaxIterations, s.OnFail.MaxIterations
		if a.N != b.N || squeeze(a.Expr) != squeeze(b.Expr) {
			v.r.at(b.Pos, s.ID, "gates with a form share the run's iteration bound: on_fail.max_iterations must be gate %q's", first.ID)
		}
	}
}

func (v *validator) params(d *Definition) {
	seen := map[string]bool{}
	for _, p := range d.Params {
		if p.Name == "" {
			continue
		}
		if !identRe.MatchString(p.Name) {
			v.r.at(p.Pos, "", "parameter name %q must be letters, digits and _", p.Name)
		}
		if seen[p.Name] {
			v.r.at(p.Pos, "", "parameter %q is declared twice", p.Name)
		}
		seen[p.Name] = true
		if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
			v.r.at(p.Pos, "", "parameter %q: min %v is greater than max %v", p.Name, *p.Min, *p.Max)
		}
		if (p.Min != nil || p.Max != nil) && p.Type == ParamBool {
			v.r.at(p.Pos, "", "parameter %q: a bool cannot have min or max", p.Name)
		}
		if len(p.Enum) > 0 && p.Type != ParamString && p.Type != ParamList {
			v.r.at(p.Pos, "", "parameter %q: only string and list parameters can have an enum", p.Name)
		}
		if p.Default == nil {
			continue
		}
		if p.Required {
			v.r.at(p.Pos, "", "parameter %q is required and has a default; choose one", p.Name)
		}
		if msg := p.checkValue(p.Default); msg != "" {
			v.r.at(p.Pos, "", "parameter %q: default %s", p.Name, msg)
		}
	}
}

// checkValue says what is wrong with a value for p ("" when nothing):
// its type, its bounds (value for numbers, length for strings and lists)
// and its enum.
func (p Param) checkValue(val any) string {
	var size float64
	var strs []string
	switch p.Type {
	case ParamString:
		s, ok := val.(string)
		if !ok {
			return fmt.Sprintf("%v is not a string", val)
		}
		size, strs = float64(len([]rune(s))), []string{s}
	case ParamInt:
		n, ok := val.(int64)
		if !ok {
			return fmt.Sprintf("%v is not an int", val)
		}
		size = float64(n)
	case ParamFloat:
		switch n := val.(type) {
		case int64:
			size = float64(n)
		case float64:
			if math.IsNaN(n) || math.IsInf(n, 0) {
				return "is not a finite number"
			}
			size = n
		default:
			return fmt.Sprintf("%v is not a number", val)
		}
	case ParamBool:
		if _, ok := val.(bool); !ok {
			return fmt.Sprintf("%v is not true or false", val)
		}
		return ""
	case ParamList:
		l, ok := val.([]any)
		if !ok {
			return fmt.Sprintf("%v is not a list", val)
		}
		for _, x := range l {
			s, ok := x.(string)
			if !ok {
				return fmt.Sprintf("holds %v, which is not a string", x)
			}
			strs = append(strs, s)
		}
		size = float64(len(l))
	default:
		return ""
	}
	if p.Min != nil && size < *p.Min {
		return fmt.Sprintf("is below min %v", *p.Min)
	}
	if p.Max != nil && size > *p.Max {
		return fmt.Sprintf("is above max %v", *p.Max)
	}
	if len(p.Enum) > 0 {
		for _, s := range strs {
			if !contains(p.Enum, s) {
				return fmt.Sprintf("%q is not one of the enum", s)
			}
		}
	}
	return ""
}

func (v *validator) stage(sc *scope, s *Stage, item bool) {
	id := s.ID
	for _, ref := range s.exprs {
		ref.item = ref.item || item
		v.check(sc, ref, id)
	}
	if _, ok := s.keys["skip_to"]; ok && s.Condition.Src == "" {
		v.r.at(s.at("skip_to"), id, "skip_to needs a condition")
	}
	switch s.Type {
	case TypeSkill, TypeAction:
		_, hasSkill := s.keys["skill"]
		_, hasAction := s.keys["action"]
		switch {
		case s.Type == TypeAction && hasSkill && hasAction:
			v.r.at(s.at("action"), id, "an action stage names skill or action, not both")
		case s.Type == TypeAction && hasAction:
			v.checkAction(s.Action, s.at("action"), s.Pos, s.With, id)
			if _, ok := s.keys["outputs"]; ok {
				v.r.at(s.at("outputs"), id, "outputs do not apply to a built-in action: its outputs are fixed (docs/workflows.md)")
			}
		case s.Type == TypeAction && !hasSkill:
			v.r.at(s.Pos, id, "an action stage needs action (%s) or skill: the name of a registered handler", strings.Join(Actions(), ", "))
		case !hasSkill:
			v.r.at(s.Pos, id, "%s %s stage needs skill: the name of a registered handler", article(s.Type), s.Type)
		}
		if _, ok := s.keys["required"]; ok && s.Type == TypeAction && !hasAction {
			v.r.at(s.at("required"), id, "required applies to a built-in action (action: NAME)")
		}
		if hasSkill && s.Skill != "" && !contains(v.opt.Skills, s.Skill) {
			v.r.at(s.at("skill"), id, "skill %q is not registered", s.Skill)
		}
		seen := map[string]bool{}
		for _, o := range s.Outputs {
			if o.Name != "" && seen[o.Name] {
				v.r.at(o.Pos, id, "output %q is declared twice", o.Name)
			}
			seen[o.Name] = true
		}
	case TypeSet:
		if _, ok := s.keys["set"]; !ok {
			v.r.at(s.Pos, id, "a set stage needs set: a map of context keys to expressions")
		}
	case TypeGate:
		if _, ok := s.keys["form"]; ok {
			if s.Approval != nil {
				v.r.at(s.at("approval"), s.ID, "approval does not apply to a gate with a form: the form asks one person")
			}
			v.formGate(s)
			break
		}
		if len(s.Conditions) == 0 && len(s.Options) == 0 {
			v.r.at(s.Pos, id, "a gate needs conditions, options or both")
		}
		if s.Approval != nil {
			v.approval(s)
		}
		if len(s.Options) > 0 && s.OnPass.ID != "" {
			v.r.at(s.at("on_pass"), id, "on_pass does not apply to a gate with options: each option names its next stage")
		}
		if s.OnFail != nil && len(s.Conditions) == 0 && !s.OnFail.MaxIterations.Set() {
			v.r.at(s.at("on_fail"), id, "on_fail applies when conditions fail, and this gate has none")
		}
		if f := s.OnFail; f != nil && f.Goto.ID == "" && f.Then.Action == "" && !f.MaxIterations.Set() {
			v.r.at(s.at("on_fail"), id, "on_fail needs goto or then")
		}
		v.gateTimeout(s)
	case TypeParallel:
		v.parallel(sc, s)
	case TypeDelay:
		_, hasD := s.keys["duration"]
		_, hasU := s.keys["until"]
		if hasD == hasU {
			v.r.at(s.Pos, id, "a delay needs exactly one of duration or until")
		}
		if hasU && !strings.Contains(s.Until, "{{") {
			if _, err := time.Parse(time.RFC3339, s.Until); err != nil {
				v.r.at(s.at("until"), id, "until %q is neither an RFC 3339 time (2026-01-31T09:00:00Z) nor a {{ template }}", s.Until)
			}
		}
	case TypeWebhook:
		if s.Request == nil {
			if _, ok := s.keys["request"]; !ok {
				v.r.at(s.Pos, id, "a webhook stage needs a request")
			}
		} else if s.Request.URL != "" {
			v.webhookURL(s.Request, id)
		}
	}
}

func (v *validator) parallel(sc *scope, s *Stage) {
	id := s.ID
	if _, ok := s.keys["branches"]; !ok {
		v.r.at(s.Pos, id, "a parallel stage needs branches")
	}
	forEach := s.ForEach.Src != ""
	if forEach && len(s.Branches) != 1 {
		v.r.at(s.at("branches"), id, "with for_each, branches holds exactly one branch: the stages run once per item")
	}
	if s.Join.Mode == JoinN && !forEach && s.Join.N > len(s.Branches) {
		v.r.at(s.Join.Pos, id, "join %d is more than the %d branches", s.Join.N, len(s.Branches))
	}
	seen := map[string]bool{}
	for _, b := range s.Branches {
		if b.ID == "" {
			continue
		}
		if !identRe.MatchString(b.ID) {
			v.r.at(b.Pos, id, "branch id %q must be letters, digits and _", b.ID)
		}
		if seen[b.ID] {
			v.r.at(b.Pos, id, "branch id %q is used twice", b.ID)
		}
		seen[b.ID] = true
		if b.Condition.Src != "" {
			v.check(sc, exprRef{src: b.Condition.Src, pos: b.Condition.Pos, kind: exprBool, item: forEach}, id)
		}
		for _, bs := range b.Stages {
			v.stage(sc, bs, forEach)
		}
		v.graph(b.Stages, b.ID)
	}
}

// webhookURL checks that the scheme and host are written out (templates
// may fill the path and query only) and that the host is allowed.
func (v *validator) webhookURL(r *Request, stage string) {
	raw := r.URL
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	hostEnd := len(raw) - len(rest) + strings.IndexAny(rest+"/", "/?#")
	if i := strings.Index(raw, "{{"); i >= 0 && i < hostEnd {
		v.r.at(r.Pos, stage, "url %q: the scheme and host must be written out, not templated", raw)
		return
	}
	u, err := url.Parse(raw[:hostEnd])
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		v.r.at(r.Pos, stage, "url %q must be an absolute http or https URL", raw)
		return
	}
	if HostAllowed(v.opt.WebhookHosts, u) {
		return
	}
	v.r.at(r.Pos, stage, "url host %q is not in the webhook allowlist (QUARRY_WEBHOOK_HOSTS)", u.Host)
}

// edge is one transition of the graph.
type edge struct {
	to      string
	pos     Pos
	key     string
	bounded bool
}

// bounded reports whether a stage limits how often it can send the run on:
// its own max_iterations, or a gate's on_fail.max_iterations (which counts
// every time the gate sends the run back).
func bounded(s *Stage) bool {
	return s.MaxIterations.Set() || s.Type == TypeGate && s.OnFail != nil && s.OnFail.MaxIterations.Set()
}

// edges lists where a stage can send the run; next is the stage after it
// in the file (or complete), the default of on_complete and on_pass.
func edges(s *Stage, next string) []edge {
	var out []edge
	b := bounded(s)
	add := func(t Target, key string) {
		if t.ID != "" {
			out = append(out, edge{to: t.ID, pos: t.Pos, key: key, bounded: b})
		}
	}
	dflt := func(t Target, key string) {
		if t.ID == "" {
			out = append(out, edge{to: next, pos: s.Pos, key: key + " (default: the next stage)", bounded: b})
			return
		}
		add(t, key)
	}
	if s.Condition.Src != "" {
		dflt(s.SkipTo, "skip_to")
	}
	if s.OnError != nil && s.OnError.Then.Action == ThenGoto {
		add(s.OnError.Then.Goto, "on_error.then.goto")
	}
	switch s.Type {
	case TypeGate:
		for _, o := range s.Options {
			add(o.Next, "options.next")
		}
		if len(s.Options) == 0 {
			dflt(s.OnPass, "on_pass")
		}
		if f := s.OnFail; f != nil {
			add(f.Goto, "on_fail.goto")
			if f.Then.Action == ThenGoto {
				add(f.Then.Goto, "on_fail.then.goto")
			}
		}
		if o := s.OnTimeout; o != nil && o.Then.Action == ThenGoto {
			add(o.Then.Goto, "on_timeout.then.goto")
		}
	case TypeParallel:
		dflt(s.OnComplete, "on_complete")
		add(s.OnAnyReject, "on_any_reject")
		add(s.OnAllReject, "on_all_reject")
	default:
		dflt(s.OnComplete, "on_complete")
	}
	return out
}

// graph checks one list of stages (the workflow, or a branch when branch
// is its id): targets exist, every stage is reachable from the first, the
// first reaches complete, and every loop is bounded.
func (v *validator) graph(stages []*Stage, branch string) {
	if len(stages) == 0 {
		return
	}
	where := "a stage"
	if branch != "" {
		where = "a stage of branch " + branch
	}
	// Stages without a usable id were reported already; a graph over
	// them would only report echoes.
	index := map[string]int{}
	for i, s := range stages {
		if _, dup := index[s.ID]; dup || !identRe.MatchString(s.ID) || s.ID == Complete {
			return
		}
		index[s.ID] = i
	}
	adj := make([][]edge, len(stages))
	for i, s := range stages {
		next := Complete
		if i+1 < len(stages) {
			next = stages[i+1].ID
		}
		for _, e := range edges(s, next) {
			if e.to == Complete {
				adj[i] = append(adj[i], e)
				continue
			}
			if _, ok := index[e.to]; !ok {
				if branch == "" && v.ids[e.to] {
					v.r.at(e.pos, s.ID, "%s: %q is a stage inside a parallel branch; only its branch goes to it", e.key, e.to)
				} else if branch != "" && v.ids[e.to] {
					v.r.at(e.pos, s.ID, "%s: %q is not %s (a branch's stages go to each other or to complete)", e.key, e.to, where)
				} else {
					v.r.at(e.pos, s.ID, "%s: %q is not a stage (nor complete)", e.key, e.to)
				}
				// Reported; counted as an exit so it echoes no
				// "never completes".
				e.to, e.bounded = Complete, true
			}
			adj[i] = append(adj[i], e)
		}
	}
	// Reachability from the entry.
	reached := make([]bool, len(stages))
	var walk func(int)
	walk = func(i int) {
		if reached[i] {
			return
		}
		reached[i] = true
		for _, e := range adj[i] {
			if e.to != Complete {
				walk(index[e.to])
			}
		}
	}
	walk(0)
	for i, s := range stages {
		if !reached[i] {
			v.r.at(s.Pos, s.ID, "not reachable from the entry %q", stages[0].ID)
		}
	}
	// Completion: which stages can reach complete.
	ends := make([]bool, len(stages))
	for changed := true; changed; {
		changed = false
		for i := range stages {
			if ends[i] {
				continue
			}
			for _, e := range adj[i] {
				if e.to == Complete || ends[index[e.to]] {
					ends[i], changed = true, true
					break
				}
			}
		}
	}
	if !ends[0] {
		v.r.at(stages[0].Pos, stages[0].ID, "no path from the entry reaches complete: the run could never finish")
	} else {
		for i, s := range stages {
			if reached[i] && !ends[i] {
				v.r.at(s.Pos, s.ID, "no path from this stage reaches complete")
			}
		}
	}
	// Loops: without the bounded edges, the graph must have no cycle. A
	// DFS from every stage reports each edge that closes one.
	state := make([]int, len(stages)) // 0 new, 1 on the path, 2 done
	var dfs func(int)
	dfs = func(i int) {
		state[i] = 1
		for _, e := range adj[i] {
			if e.to == Complete || e.bounded {
				continue
			}
			j := index[e.to]
			switch state[j] {
			case 0:
				dfs(j)
			case 1:
				v.r.at(e.pos, stages[i].ID, "%s: going back to %q makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)", e.key, e.to)
			}
		}
		state[i] = 2
	}
	for i := range stages {
		if state[i] == 0 {
			dfs(i)
		}
	}
}

// HostAllowed reports whether u's host is in the webhook allowlist: an
// entry "host" allows that host on any port, an entry "host:port" that
// port only. The loader checks each webhook's URL with
// it, and the caller checks it again on the URL as sent.
func HostAllowed(hosts []string, u *url.URL) bool {
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && (h == strings.ToLower(u.Host) || h == strings.ToLower(u.Hostname())) {
			return true
		}
	}
	return false
}

// gateTimeout checks a gate's timeout, on_timeout and notify: a timeout
// is how long a person has to choose, so it needs options and says what
// happens when nobody did; the default is one of the options, taken
// without input; notices go to allowed webhook hosts or e-mail addresses.
func (v *validator) gateTimeout(s *Stage) {
	id := s.ID
	_, timed := s.keys["timeout"]
	o := s.OnTimeout
	switch {
	case timed && len(s.Options) == 0:
		v.r.at(s.at("timeout"), id, "a gate's timeout is how long a person has to choose, and this gate has no options")
	case timed && o == nil:
		if _, ok := s.keys["on_timeout"]; !ok {
			v.r.at(s.at("timeout"), id, "timeout needs on_timeout: {default: OPTION} or {extend: DURATION, max_extensions: N, then: …}")
		}
	case !timed && o != nil:
		v.r.at(s.at("on_timeout"), id, "on_timeout needs timeout: how long the person has")
	}
	if o != nil {
		_, hasDefault := o.keys["default"]
		_, hasExtend := o.keys["extend"]
		switch {
		case hasDefault == hasExtend:
			v.r.at(o.Pos, id, "on_timeout needs exactly one of default (an option) or extend (a duration)")
		case hasDefault:
			for _, k := range []string{"max_extensions", "then"} {
				if _, ok := o.keys[k]; ok {
					v.r.at(o.at(k), id, "on_timeout.%s applies with extend, not with default", k)
				}
			}
			labels := make([]string, 0, len(s.Options))
			found := false
			for _, opt := range s.Options {
				labels = append(labels, fmt.Sprintf("%q", opt.Label))
				if opt.Label != o.Default {
					continue
				}
				found = true
				if opt.RequiresInput {
					v.r.at(o.at("default"), id, "on_timeout.default: option %q requires input, which nobody gives when the time is up", o.Default)
				}
			}
			if !found && len(s.Options) > 0 {
				v.r.at(o.at("default"), id, "on_timeout.default: %q is not one of the gate's options (%s)", o.Default, strings.Join(labels, ", "))
			}
		case hasExtend:
			if _, ok := o.keys["max_extensions"]; !ok {
				v.r.at(o.Pos, id, "on_timeout with extend needs max_extensions: how many times the time is extended")
			}
			if _, ok := o.keys["then"]; !ok {
				v.r.at(o.Pos, id, "on_timeout with extend needs then: escalate, fail or {goto: STAGE}, once the extensions are used up")
			}
		}
	}
	for _, n := range s.Notify {
		switch {
		case strings.Contains(n.Webhook, "{{"):
			v.r.at(n.Pos, id, "notify: webhook %q is called as written: it takes no {{ templates }}", n.Webhook)
		case n.Webhook != "":
			v.webhookURL(&Request{URL: n.Webhook, Pos: n.Pos}, id)
		case n.Email != "":
			if a, err := mail.ParseAddress(n.Email); err != nil || a.Address != n.Email {
				v.r.at(n.Pos, id, "notify: %q is not an e-mail address", n.Email)
			}
		}
	}
}

// approval checks a gate's approval against its options: it needs them,
// its options are some of their labels (not all: the gate takes one of
// the others when it fails), and of, when given, leaves count reachable.
func (v *validator) approval(s *Stage) {
	a, id := s.Approval, s.ID
	if len(s.Options) == 0 {
		v.r.at(a.Pos, id, "approval applies to a gate with options: the people vote for one")
		return
	}
	if _, ok := a.keys["count"]; !ok {
		v.r.at(a.Pos, id, "approval needs count: how many people must choose the same option")
	}
	if p, ok := a.keys["of"]; ok && a.Count >= 1 && a.Of < a.Count {
		v.r.at(p, id, "approval.of (%d) must be at least approval.count (%d)", a.Of, a.Count)
	}
	v.voters(a, id)
	if p, ok := a.keys["from"]; ok && len(a.Voters) > 0 {
		v.r.at(p, id, "approval names its voters and a role (from): give one of them")
	}
	if len(a.Options) == 0 {
		v.r.at(a.at("options"), id, "approval needs options: the labels of the options that pass the gate")
		return
	}
	labels := make([]string, 0, len(s.Options))
	for _, o := range s.Options {
		labels = append(labels, fmt.Sprintf("%q", o.Label))
	}
	passing := map[string]bool{}
	for i, l := range a.Options {
		switch {
		case passing[l]:
			v.r.at(a.optionPos[i], id, "approval.options: %q is given twice", l)
		case !slices.ContainsFunc(s.Options, func(o Option) bool { return o.Label == l }):
			v.r.at(a.optionPos[i], id, "approval.options: %q is not one of the gate's options (%s)", l, strings.Join(labels, ", "))
		}
		passing[l] = true
	}
	if !a.Inline && !slices.ContainsFunc(s.Options, func(o Option) bool { return !passing[o.Label] }) {
		v.r.at(a.at("options"), id, "approval.options lists every option: leave one out, for the gate to take when it fails")
	}
}

// voters checks approval.voters: each named once (names compare without
// case, as votes do), enough of them to reach count, and of, if also
// given, their number; of is then set from them.
func (v *validator) voters(a *Approval, id string) {
	p, ok := a.keys["voters"]
	if !ok {
		return
	}
	seen := map[string]bool{}
	for i, name := range a.Voters {
		k := strings.ToLower(name)
		if seen[k] {
			v.r.at(a.voterPos[i], id, "approval.voters: %q is named twice", name)
		}
		seen[k] = true
	}
	switch {
	case len(a.Voters) == 0:
		v.r.at(p, id, "approval.voters is empty: name the people who vote, or leave it out so anyone may")
	case a.Count >= 1 && len(seen) < a.Count:
		v.r.at(p, id, "approval.voters names only %d of the %d people approval.count needs", len(seen), a.Count)
	}
	if q, ok := a.keys["of"]; ok && a.Of != len(a.Voters) {
		v.r.at(q, id, "approval.of (%d) is not the number of approval.voters (%d): leave of out, the voters say it", a.Of, len(a.Voters))
	}
	if len(a.Voters) > 0 && a.Of == 0 {
		a.Of = len(a.Voters)
	}
}
