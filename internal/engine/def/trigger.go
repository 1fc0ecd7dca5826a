package def

import (
	"fmt"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/robfig/cron/v3"
)

// TriggerKind is how a trigger starts runs.
type TriggerKind string

// The trigger kinds.
const (
	TriggerSchedule TriggerKind = "schedule"
	TriggerWebhook  TriggerKind = "webhook"
)

// Trigger starts runs of its workflow without a person: on a cron
// schedule, or when an inbound webhook is called with its token. Name is
// unique in the workflow: a webhook's name, or for a schedule its name:
// key, else "schedule" (then "schedule_2", … for more than one).
type Trigger struct {
	Name     string
	Kind     TriggerKind
	Schedule string // the cron spec as written
	// Params are a scheduled run's parameters (checked at load against
	// the declared ones); a webhook's run takes its request's JSON.
	Params []Field
	Pos    Pos

	namePos Pos // where the name was written (Pos when it was not)
	cron    cron.Schedule
}

// Next is the first due time of a schedule trigger strictly after t (the
// zero time for a webhook, or a schedule that is never due).
func (t Trigger) Next(after time.Time) time.Time {
	if t.cron == nil {
		return time.Time{}
	}
	return t.cron.Next(after)
}

// ParamValues are a scheduled run's parameters as plain values.
func (t Trigger) ParamValues() map[string]any {
	out := map[string]any{}
	for _, f := range t.Params {
		out[f.Key] = f.Value
	}
	return out
}

// cronParser reads the standard 5-field spec (minute hour day-of-month
// month day-of-week), the @daily-style descriptors and a leading
// CRON_TZ=Zone; a spec without a zone is read in UTC.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule checks a cron spec as a definition's schedule trigger
// reads it.
func ParseSchedule(spec string) (cron.Schedule, error) {
	return cronParser.Parse(spec)
}

// triggers decodes trigger: one mapping, or a list of them. A mapping may
// hold both schedule and webhook, which makes two triggers; its name and
// params are then the schedule's.
func (d *decoder) triggers(e kv, def *Definition) {
	n, ok := d.plainNode(e.value, "")
	if !ok {
		return
	}
	items := []ast.Node{n}
	if s, ok := n.(*ast.SequenceNode); ok {
		items = s.Values
		if len(items) == 0 {
			d.r.at(posOf(n), "", "trigger is an empty list")
		}
	}
	schedules := 0
	for _, it := range items {
		kvs, ok := d.mapping(it, "", "a trigger", "name", "schedule", "webhook", "params")
		if !ok {
			continue
		}
		var sched, hook *kv
		var name *kv
		var params *kv
		for i := range kvs {
			switch kvs[i].key {
			case "schedule":
				sched = &kvs[i]
			case "webhook":
				hook = &kvs[i]
			case "name":
				name = &kvs[i]
			case "params":
				params = &kvs[i]
			}
		}
		if sched == nil && hook == nil {
			d.r.at(posOf(it), "", "a trigger needs schedule (a cron spec) or webhook (a name)")
			continue
		}
		if sched != nil {
			t := Trigger{Kind: TriggerSchedule, Pos: posOf(sched.value)}
			if spec, ok := d.str(*sched, ""); ok {
				t.Schedule = spec
				if t.cron, ok = d.cron(spec, t.Pos); !ok {
					continue
				}
			}
			schedules++
			switch {
			case name != nil:
				t.Name, _ = d.str(*name, "")
				t.namePos = posOf(name.value)
			case schedules == 1:
				t.Name = string(TriggerSchedule)
			default:
				t.Name = fmt.Sprintf("%s_%d", TriggerSchedule, schedules)
			}
			if params != nil {
				t.Params = d.fields(*params, "", func(string, Pos) {})
			}
			def.Triggers = append(def.Triggers, t)
		}
		if hook != nil {
			t := Trigger{Kind: TriggerWebhook, Pos: posOf(hook.value)}
			t.Name, _ = d.str(*hook, "")
			if name != nil && sched == nil {
				d.r.at(name.pos, "", "a webhook trigger is named by webhook: NAME; name applies to a schedule")
			}
			if params != nil && sched == nil {
				d.r.at(params.pos, "", "a webhook trigger takes its run's params from the request's JSON body, not from params")
			}
			def.Triggers = append(def.Triggers, t)
		}
	}
}

// cron parses a schedule, reporting a bad spec where it was written.
func (d *decoder) cron(spec string, p Pos) (cron.Schedule, bool) {
	s, err := ParseSchedule(spec)
	if err != nil {
		d.r.at(p, "", "schedule %q is not a cron spec (minute hour day-of-month month day-of-week, e.g. \"0 6 * * MON\"): %v", spec, err)
		return nil, false
	}
	return s, true
}

// triggers checks trigger names and a schedule's params: each names a
// declared parameter and has a value it accepts, and every required
// parameter is given, so a scheduled run cannot fail to start for its
// params.
func (v *validator) triggers(d *Definition) {
	seen := map[string]bool{}
	declared := map[string]Param{}
	for _, p := range d.Params {
		declared[p.Name] = p
	}
	for _, t := range d.Triggers {
		if t.Name == "" {
			continue
		}
		at := t.Pos
		if t.namePos.Line > 0 {
			at = t.namePos
		}
		if !nameRe.MatchString(t.Name) {
			v.r.at(at, "", "trigger name %q must be lower-case letters, digits, - and _", t.Name)
		}
		if seen[t.Name] {
			v.r.at(at, "", "trigger %q is named twice", t.Name)
		}
		seen[t.Name] = true
		if t.Kind != TriggerSchedule {
			continue
		}
		given := map[string]bool{}
		for _, f := range t.Params {
			given[f.Key] = true
			p, ok := declared[f.Key]
			if !ok {
				v.r.at(f.Pos, "", "trigger %q: params.%s is not a declared parameter", t.Name, f.Key)
				continue
			}
			if msg := p.checkValue(f.Value); msg != "" {
				v.r.at(f.Pos, "", "trigger %q: params.%s %s", t.Name, f.Key, msg)
			}
		}
		for _, p := range d.Params {
			if p.Required && !given[p.Name] {
				v.r.at(t.Pos, "", "trigger %q: the required parameter %q has no value in the trigger's params", t.Name, p.Name)
			}
		}
	}
}

// concurrency decodes concurrency: {runs: N}.
func (d *decoder) concurrency(e kv, def *Definition) {
	kvs, ok := d.mapping(e.value, "", "concurrency", "runs")
	if !ok {
		return
	}
	for _, m := range kvs {
		if n, ok := d.integer(m, ""); ok {
			if n < 1 {
				d.r.at(posOf(m.value), "", "concurrency.runs must be at least 1")
				continue
			}
			def.MaxActiveRuns = n
		}
	}
}
