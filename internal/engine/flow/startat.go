package flow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// StartState is the state a run started at a stage is given: each
// context value as context.<key>, each stage's outputs as
// outputs.<stage>, as stages would have written them.
func StartState(context map[string]any, outputs map[string]map[string]any) (engine.State, error) {
	st := engine.State{}
	for k, v := range context {
		if err := st.Set(contextKey+k, v); err != nil {
			return nil, err
		}
	}
	for s, o := range outputs {
		if o == nil {
			o = map[string]any{}
		}
		if err := st.Set(outputsKey+s, o); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// checkStart is the compiled workflow's engine.Workflow.CheckStart: a run
// may start at a top-level stage when it is given every value the stages
// it may reach read before one of them writes it (def.Needs), except what
// a run from the first stage starts without as well (a value its author
// reads as possibly absent). A workflow with native steps, which read
// the run's state in Go, starts only at its first stage.
func (c *compiler) checkStart(step string, given engine.State) error {
	entry := c.d.Stages[0].ID
	if step != entry {
		var natives []string
		for _, s := range c.d.Stages {
			if (s.Type == def.TypeSkill || s.Type == def.TypeAction) && c.natives[s.Skill] != nil {
				natives = append(natives, s.Skill)
			}
		}
		if len(natives) > 0 {
			msg := fmt.Sprintf("workflow %s runs Go steps (%s) that read the run's state themselves, so what a stage needs cannot be checked: it starts only at its first stage %q",
				c.d.Metadata.Name, strings.Join(natives, ", "), entry)
			return &fault.Error{Code: fault.EInvalid, Message: msg, Fields: map[string]string{"from": msg}}
		}
	}
	fe := fault.FieldErrors{}
	outs := map[string]map[string]any{}
	for k, raw := range given {
		switch {
		case strings.HasPrefix(k, contextKey):
		case strings.HasPrefix(k, outputsKey):
			s := strings.TrimPrefix(k, outputsKey)
			if !slices.Contains(c.stages, s) {
				fe.Add(k, fmt.Sprintf("there is no stage %q", s))
				continue
			}
			var o map[string]any
			if err := json.Unmarshal(raw, &o); err != nil {
				fe.Add(k, "must be an object of the stage's outputs by name")
				continue
			}
			outs[s] = o
		default:
			fe.Add(k, "only context.<key> and outputs.<stage> can be given")
		}
	}
	needs, err := c.d.Needs(step)
	if err != nil {
		return err
	}
	base, err := c.d.Needs(entry)
	if err != nil {
		return err
	}
	anyway := map[string]bool{}
	for _, n := range base {
		anyway[n.Key] = true
	}
	for _, n := range needs {
		if anyway[n.Key] || givenHas(given, n.Key, outs) {
			continue
		}
		fe.Add(n.Key, fmt.Sprintf("is needed: stage %q reads it", n.Stage))
	}
	return fe.Err(fmt.Sprintf("the run cannot start at stage %q: give what is marked", step))
}

// givenHas reports whether a need is given: a context key, a stage's
// outputs, or one output of a stage by name.
func givenHas(given engine.State, key string, outs map[string]map[string]any) bool {
	if _, ok := given[key]; ok {
		return true
	}
	rest, ok := strings.CutPrefix(key, outputsKey)
	if !ok {
		return false
	}
	stage, name, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	_, has := outs[stage][name]
	return has
}
