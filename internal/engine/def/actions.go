package def

import (
	"slices"
	"strings"
)

// The built-in actions an action stage (action: NAME) or a workflow's
// on_complete / on_error hook runs; docs/workflows.md lists their with
// keys.
const (
	ActionExport        = "export"
	ActionNotify        = "notify"
	ActionSnapshot      = "snapshot"
	ActionStartWorkflow = "start_workflow"
)

// actionKeys are each built-in's with keys; the required ones first,
// counted by actionRequired.
var (
	actionKeys = map[string][]string{
		ActionExport:        {"papers", "format", "file"},
		ActionNotify:        {"text", "webhook", "email", "subject"},
		ActionSnapshot:      {},
		ActionStartWorkflow: {"workflow", "params", "wait"},
	}
	actionRequired = map[string]int{ActionExport: 1, ActionStartWorkflow: 1}
)

// Actions lists the built-in action names, for messages and docs.
func Actions() []string {
	return []string{ActionExport, ActionNotify, ActionSnapshot, ActionStartWorkflow}
}

// Hook is one action of a workflow's on_complete or on_error list: it
// runs when the run completes or fails. Required makes its failure fail
// the run (on_complete) instead of being recorded only.
type Hook struct {
	Action   string
	With     []Field
	Required bool
	Pos      Pos
	keys     map[string]Pos
}

// Field returns the with field named key, if written.
func (h *Hook) Field(key string) (Field, bool) { return field(h.With, key) }

// Field returns the stage's with field named key, if written.
func (s *Stage) Field(key string) (Field, bool) { return field(s.With, key) }

func field(fs []Field, key string) (Field, bool) {
	for _, f := range fs {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// hooks decodes a workflow's on_complete or on_error list.
func (d *decoder) hooks(e kv, add func(exprRef)) []*Hook {
	items, ok := d.sequence(e, "")
	if !ok {
		return nil
	}
	var out []*Hook
	for _, it := range items {
		kvs, ok := d.mapping(it, "", "a hook", "action", "with", "required")
		if !ok {
			continue
		}
		h := &Hook{Pos: posOf(it), keys: map[string]Pos{}}
		for _, f := range kvs {
			h.keys[f.key] = f.pos
			switch f.key {
			case "action":
				h.Action, _ = d.str(f, "")
			case "with":
				h.With = d.fields(f, "", func(src string, p Pos) {
					add(exprRef{src: src, pos: p, kind: exprTemplate})
				})
			case "required":
				h.Required, _ = d.boolean(f, "")
			}
		}
		if _, ok := h.keys["action"]; !ok {
			d.r.at(h.Pos, "", "%s: a hook needs action: one of %s", e.key, strings.Join(Actions(), ", "))
		}
		out = append(out, h)
	}
	return out
}

// checkAction checks a built-in action's name and with keys: the keys it
// takes, the ones it needs, the export format and notify's webhook host
// when written out, and start_workflow's literal workflow name and wait.
func (v *validator) checkAction(name string, namePos, at Pos, with []Field, stage string) {
	keys, ok := actionKeys[name]
	if !ok {
		v.r.at(namePos, stage, "unknown action %q (%s)", name, strings.Join(Actions(), ", "))
		return
	}
	written := map[string]Field{}
	for _, f := range with {
		if !slices.Contains(keys, f.Key) {
			if len(keys) == 0 {
				v.r.at(f.Pos, stage, "action %s takes no with keys", name)
			} else {
				v.r.at(f.Pos, stage, "action %s has no with key %q (%s)", name, f.Key, strings.Join(keys, ", "))
			}
			continue
		}
		written[f.Key] = f
	}
	for _, k := range keys[:actionRequired[name]] {
		if _, ok := written[k]; !ok {
			v.r.at(at, stage, "action %s needs with.%s", name, k)
		}
	}
	switch name {
	case ActionExport:
		if f, ok := written["format"]; ok && v.opt.ExportFormats != nil {
			if s, lit := literal(f.Value); lit && !slices.Contains(v.opt.ExportFormats, s) {
				v.r.at(f.Pos, stage, "export format %q is not one of %s", s, strings.Join(v.opt.ExportFormats, ", "))
			}
		}
		if f, ok := written["file"]; ok {
			if s, lit := literal(f.Value); lit && !SafeFileName(s) {
				v.r.at(f.Pos, stage, "export file %q must be a plain file name: no directory, no ..", s)
			}
		}
	case ActionNotify:
		_, hook := written["webhook"]
		_, mail := written["email"]
		if !hook && !mail {
			v.r.at(at, stage, "action notify needs with.webhook, with.email or both")
		}
		if f, ok := written["webhook"]; ok {
			if s, isStr := f.Value.(string); !isStr {
				v.r.at(f.Pos, stage, "notify webhook must be a URL")
			} else {
				v.webhookURL(&Request{URL: s, Pos: f.Pos}, stage)
			}
		}
	case ActionStartWorkflow:
		if f, ok := written["workflow"]; ok {
			if s, lit := literal(f.Value); !lit || !nameRe.MatchString(s) {
				v.r.at(f.Pos, stage, "start_workflow's workflow must be a workflow name written out")
			} else if v.opt.Workflows != nil && !slices.Contains(v.opt.Workflows, s) {
				v.r.at(f.Pos, stage, "workflow %q is not registered", s)
			}
		}
		if f, ok := written["params"]; ok {
			if _, isMap := f.Value.(map[string]any); !isMap {
				v.r.at(f.Pos, stage, "start_workflow's params must be a mapping")
			}
		}
		if f, ok := written["wait"]; ok {
			if _, isBool := f.Value.(bool); !isBool {
				v.r.at(f.Pos, stage, "start_workflow's wait must be true or false")
			}
		}
	}
}

// literal is a string value without templates.
func literal(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && !strings.Contains(s, "{{")
}

// SafeFileName reports whether name is a plain file name that stays in
// the directory it is joined to: not empty, no separator, not . or ..,
// no NUL or colon, no "..", and not hidden.
func SafeFileName(name string) bool {
	if name == "" || len(name) > 200 || strings.ContainsAny(name, "/\\\x00:") || strings.HasPrefix(name, ".") {
		return false
	}
	return !strings.Contains(name, "..")
}

// hookAt is where a hook's key was written, or the hook itself.
func (h *Hook) at(key string) Pos {
	if p, ok := h.keys[key]; ok {
		return p
	}
	return h.Pos
}
