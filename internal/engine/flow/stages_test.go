package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
)

const head = "apiVersion: quarry/v1\nkind: Workflow\n"

func TestSkillOutputsFeedLaterStages(t *testing.T) {
	t.Parallel()
	c := &counter{}
	skills := flow.Skills{"echo": echo(c)}
	wf := compile(t, head+`metadata: {name: greet}
params:
  - {name: who, type: string, required: true}
  - {name: times, type: int, default: 2}
context:
  greeting: "Hello, {{ params.who }}!"
  times: "{{ params.times }}"
stages:
  - id: first
    type: skill
    skill: echo
    with: {text: "{{ context.greeting }}", n: "{{ params.times * 10 }}", fixed: 7}
    outputs: [{name: text, required: true}, {name: n}]
  - id: second
    type: skill
    skill: echo
    with: {again: "{{ outputs.first.text }} ({{ outputs.first.n }})"}
    outputs: [{name: again, required: true}]
`, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "greet", map[string]any{"who": "Ada"})
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.JSONEq(t, `{"greeting": "Hello, Ada!", "times": 2}`, jsonOf(t, contextOf(t, r)))
	require.JSONEq(t, `{"first": {"text": "Hello, Ada!", "n": 20, "fixed": 7}, "second": {"again": "Hello, Ada! (20)"}}`, jsonOf(t, outputsOf(t, r)))
	require.Equal(t, []string{"first:ok", "second:ok"}, b.steps(t, r.ID))
	stamp, ok, err := flow.RunStamp(r.State)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "greet", stamp.Name)
	require.Equal(t, 1, stamp.Version)
	require.Len(t, stamp.Hash, 64, "the file's SHA-256, hex")
}

func TestSkillMissingRequiredOutputRetriesThenEscalates(t *testing.T) {
	t.Parallel()
	calls := 0
	skills := flow.Skills{"flaky": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		calls++
		if calls <= 2 {
			return map[string]any{"other": 1}, nil // no "items": a failed attempt
		}
		return map[string]any{"items": []int{1, 2}}, nil
	}}
	wf := compile(t, head+`metadata: {name: flaky}
stages:
  - id: fetch
    type: skill
    skill: flaky
    outputs: [{name: items, required: true}]
    on_error: {retry: 1, backoff: 1s, then: escalate}
`, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "flaky", nil)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Contains(t, r.Error, `gave no "items", a required output`)
	require.Equal(t, 2, calls, "retry: 1 is two attempts")
	require.Equal(t, []string{"fetch:error", "fetch:escalated"}, b.steps(t, r.ID))

	// The person retries; the skill now delivers.
	require.NoError(t, b.eng.Decide(context.Background(), r.ID, r.CheckpointID, engine.Decision{Action: engine.Approve, DecidedBy: "ada"}))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.JSONEq(t, `{"fetch": {"items": [1, 2]}}`, jsonOf(t, outputsOf(t, r)))
}

func TestSkillErrorGoesToItsGotoAfterRetries(t *testing.T) {
	t.Parallel()
	c := &counter{}
	skills := flow.Skills{"echo": echo(c), "broken": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		c.inc(in.Stage)
		return nil, errors.New("boom")
	}}
	wf := compile(t, head+`metadata: {name: fallback}
stages:
  - id: fetch
    type: skill
    skill: broken
    on_error: {retry: 2, then: {goto: rescue}}
  - id: skipped
    type: skill
    skill: echo
  - id: rescue
    type: skill
    skill: echo
`, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "fallback", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 3, c.get("fetch"))
	require.Zero(t, c.get("skipped"))
	require.Equal(t, 1, c.get("rescue"))
	require.Equal(t, []string{"fetch:error", "fetch:error", "fetch:goto:rescue", "rescue:ok"}, b.steps(t, r.ID))
}

func TestSkillErrorWithoutOnErrorFailsTheRunAtOnce(t *testing.T) {
	t.Parallel()
	calls := 0
	skills := flow.Skills{"broken": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		calls++
		return nil, errors.New("boom")
	}}
	wf := compile(t, head+`metadata: {name: brittle}
stages:
  - {id: fetch, type: skill, skill: broken}
`, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "brittle", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Equal(t, `step "fetch" failed: boom`, r.Error)
	require.Equal(t, 1, calls)
	require.Equal(t, []string{"fetch:failed"}, b.steps(t, r.ID))
}

func TestSkillTimeoutIsAContextDeadline(t *testing.T) {
	t.Parallel()
	skills := flow.Skills{"slow": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	wf := compile(t, head+`metadata: {name: slow}
stages:
  - {id: wait, type: skill, skill: slow, timeout: 50ms}
`, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "slow", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, "timed out after 50ms")
}

func TestSetAssignsContextInOrder(t *testing.T) {
	t.Parallel()
	wf := compile(t, head+`metadata: {name: sets}
params: [{name: base, type: int, default: 4}]
context: {label: run}
stages:
  - id: calc
    type: set
    set:
      doubled: params.base * 2
      plus_one: context.doubled + 1
      label: context.label + "-" + string(context.plus_one)
      words: "'a b'"
`, flow.Skills{})
	b := setup(t, "", nil, wf)
	r := b.run(t, "sets", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.JSONEq(t, `{"label": "run-9", "doubled": 8, "plus_one": 9, "words": "a b"}`, jsonOf(t, contextOf(t, r)))
	require.Equal(t, []string{"calc:ok"}, b.steps(t, r.ID))
}

func TestGateConditions(t *testing.T) {
	t.Parallel()
	c := &counter{}
	skills := flow.Skills{"echo": echo(c)}
	wf := compile(t, head+`metadata: {name: gated}
params: [{name: n, type: int, required: true}]
stages:
  - id: check
    type: gate
    conditions: ["params.n > 2", "params.n < 10"]
    on_fail: {then: {goto: low}}
  - id: high
    type: skill
    skill: echo
    on_complete: complete
  - id: low
    type: skill
    skill: echo
`, skills)
	b := setup(t, "", nil, wf)

	pass := b.run(t, "gated", map[string]any{"n": 5})
	require.Equal(t, engine.StatusCompleted, pass.Status, pass.Error)
	require.Equal(t, []string{"check:ok", "high:ok"}, b.steps(t, pass.ID))
	checks, err := flow.Checks(pass.State, "check")
	require.NoError(t, err)
	require.Equal(t, []flow.Check{{Condition: "params.n > 2", Passed: true}, {Condition: "params.n < 10", Passed: true}}, checks)

	fail := b.run(t, "gated", map[string]any{"n": 1})
	require.Equal(t, engine.StatusCompleted, fail.Status, fail.Error)
	require.Equal(t, []string{"check:goto:low", "low:ok"}, b.steps(t, fail.ID))
	checks, err = flow.Checks(fail.State, "check")
	require.NoError(t, err)
	require.Equal(t, []flow.Check{{Condition: "params.n > 2"}, {Condition: "params.n < 10", Passed: true}}, checks, "every result is recorded")
}

func TestGateConditionFailingWithoutOnFailFailsTheRun(t *testing.T) {
	t.Parallel()
	wf := compile(t, head+`metadata: {name: strict}
params: [{name: n, type: int, required: true}]
stages:
  - {id: check, type: gate, conditions: ["params.n > 2"]}
`, flow.Skills{})
	b := setup(t, "", nil, wf)
	r := b.run(t, "strict", map[string]any{"n": 1})
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, `condition "params.n > 2" does not hold`)
}

// loopDef goes back from the gate to bump until n reaches the target, at
// most three times; then follows `then` (gave_up exists when it names it).
func loopDef(then string) string {
	src := head + `metadata: {name: loop}
params: [{name: target, type: int, required: true}]
context: {n: 0}
stages:
  - id: bump
    type: set
    set: {n: context.n + 1}
  - id: enough
    type: gate
    conditions: ["context.n >= params.target"]
    on_fail: {goto: bump, context: {note: "tried {{ context.n }}"}, max_iterations: 3, then: ` + then + `}
  - id: done
    type: skill
    skill: echo
`
	if strings.Contains(then, "gave_up") {
		src += "    on_complete: complete\n  - id: gave_up\n    type: skill\n    skill: echo\n"
	}
	return src
}

func TestGateOnFailLoopsBackBoundedByMaxIterations(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, "", nil, compile(t, loopDef("{goto: gave_up}"), flow.Skills{"echo": echo(c)}))

	r := b.run(t, "loop", map[string]any{"target": 3})
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.JSONEq(t, `{"n": 3, "note": "tried 2"}`, jsonOf(t, contextOf(t, r)))
	require.Equal(t, []string{"bump:ok", "enough:goto:bump", "bump:ok", "enough:goto:bump", "bump:ok", "enough:ok", "done:ok"}, b.steps(t, r.ID))

	r = b.run(t, "loop", map[string]any{"target": 10})
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, float64(4), contextOf(t, r)["n"], "three loops back, then the gate's then")
	require.Equal(t, 1, c.get("gave_up"))
	steps := b.steps(t, r.ID)
	require.Equal(t, []string{"enough:goto:gave_up", "gave_up:ok"}, steps[len(steps)-2:])
}

func TestGateOnFailThenEscalate(t *testing.T) {
	t.Parallel()
	b := setup(t, "", nil, compile(t, loopDef("escalate"), flow.Skills{"echo": echo(&counter{})}))
	r := b.run(t, "loop", map[string]any{"target": 10})
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Contains(t, r.Error, "sent the run back 3 times, its max_iterations")
}

const optionsDef = head + `metadata: {name: choose}
params: [{name: topic, type: string, default: bees}]
context: {topic: "{{ params.topic }}"}
stages:
  - id: draft
    type: skill
    skill: echo
    with: {topic: "{{ context.topic }}"}
  - id: review
    type: gate
    context: [topic]
    options:
      - {label: Publish, next: publish}
      - {label: Redo, next: draft, requires_input: true}
      - {label: Drop, next: complete}
    on_fail: {max_iterations: 2, then: fail}
  - id: publish
    type: skill
    skill: echo
    with: {why: "{{ outputs.review.decided_by }}: {{ outputs.review.option }}"}
`

func TestGateOptionsDecidedThroughDecide(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, "", engine.Pending(), compile(t, optionsDef, flow.Skills{"echo": echo(c)}))
	ctx := context.Background()
	r := b.run(t, "choose", nil)
	cp, p := pendingCheckpoint(t, b, r)
	require.Equal(t, flow.KindGate, cp.Kind)
	require.JSONEq(t, `{"stage": "review", "context": {"topic": "bees"}, "options": [
		{"label": "Publish", "next": "publish"},
		{"label": "Redo", "next": "draft", "requires_input": true},
		{"label": "Drop", "next": "complete"}]}`, jsonOf(t, p))

	// Refused before anything is recorded: no option, an unknown one, and
	// an option that requires input without it.
	for _, d := range []engine.Decision{
		{Action: engine.Approve, DecidedBy: "ada"},
		flow.Choose("Maybe", "", "ada"),
		flow.Choose("Redo", "  ", "ada"),
	} {
		require.Equal(t, fault.EInvalid, fault.ErrorCode(b.eng.Decide(ctx, r.ID, cp.ID, d)))
	}
	require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Redo", "shorter please", "ada")))
	r = b.advance(t, r.ID)
	require.Equal(t, "shorter please", outputsOf(t, r)["review"]["input"])
	cp, _ = pendingCheckpoint(t, b, r)
	require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Publish", "", "grace")))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, map[string]any{"why": "grace: Publish"}, outputsOf(t, r)["publish"])
	require.Equal(t, 2, c.get("draft"))
	require.Equal(t, []string{"draft:ok", "review:checkpoint", "review:goto:draft", "draft:ok", "review:checkpoint", "review:goto:publish", "publish:ok"}, b.steps(t, r.ID))
	// A second decision on a decided checkpoint is a conflict.
	require.Equal(t, fault.EConflict, fault.ErrorCode(b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Drop", "", "ada"))))
}

func TestGateOptionGoingBackIsBoundedByMaxIterations(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, "", engine.Pending(), compile(t, optionsDef, flow.Skills{"echo": echo(c)}))
	ctx := context.Background()
	r := b.run(t, "choose", nil)
	for range 3 {
		cp, _ := pendingCheckpoint(t, b, r)
		require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Redo", "again", "ada")))
		r = b.advance(t, r.ID)
	}
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, `option "Redo" goes back to "draft", and the gate has sent the run back 2 times, its max_iterations`)
	require.Equal(t, 3, c.get("draft"), "two loops back, then on_fail.then")
}

func TestGateWithoutHandlerTakesTheFirstOption(t *testing.T) {
	t.Parallel()
	b := setup(t, "", nil, compile(t, optionsDef, flow.Skills{"echo": echo(&counter{})}))
	r := b.run(t, "choose", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"draft:ok", "review:goto:publish", "publish:ok"}, b.steps(t, r.ID))
}

func TestConditionSkipTo(t *testing.T) {
	t.Parallel()
	c := &counter{}
	wf := compile(t, head+`metadata: {name: skipping}
params: [{name: fast, type: bool, default: false}]
stages:
  - id: slow_path
    type: skill
    skill: echo
    condition: "!params.fast"
    skip_to: finish
  - id: middle
    type: skill
    skill: echo
  - id: check
    type: gate
    condition: "params.fast"
    conditions: ["false"]
  - id: finish
    type: skill
    skill: echo
`, flow.Skills{"echo": echo(c)})
	b := setup(t, "", nil, wf)
	r := b.run(t, "skipping", map[string]any{"fast": true})
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"slow_path:skip", "finish:ok"}, b.steps(t, r.ID))
	require.Zero(t, c.get("slow_path"))

	r = b.run(t, "skipping", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"slow_path:ok", "middle:ok", "check:skip", "finish:ok"}, b.steps(t, r.ID), "a gate whose condition does not hold is skipped, its conditions unchecked")
}

func TestStageMaxIterationsBoundsALoop(t *testing.T) {
	t.Parallel()
	c := &counter{}
	wf := compile(t, head+`metadata: {name: ticking}
params: [{name: max, type: int, default: 3, min: 1}]
context: {n: 0}
stages:
  - id: tick
    type: set
    set: {n: context.n + 1}
    max_iterations: "{{ params.max }}"
    on_error: {then: {goto: done}}
    on_complete: tick
  - id: done
    type: skill
    skill: echo
    with: {n: "{{ context.n }}"}
`, flow.Skills{"echo": echo(c)})
	b := setup(t, "", nil, wf)
	r := b.run(t, "ticking", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, map[string]any{"n": float64(3)}, outputsOf(t, r)["done"])
	require.Equal(t, []string{"tick:ok", "tick:ok", "tick:ok", "tick:goto:done", "done:ok"}, b.steps(t, r.ID))
}

func TestCompileRefusesWhatABranchCannotRun(t *testing.T) {
	t.Parallel()
	src := head + `metadata: {name: fan}
stages:
  - id: fan
    type: parallel
    branches:
      - {id: one, type: skill, skill: echo, on_error: {retry: 1, then: escalate}}
      - {id: ask, type: gate, options: [{label: Go, next: complete}]}
`
	skills := flow.Skills{"echo": echo(&counter{})}
	d, err := def.Load("fan.yaml", []byte(src), def.Options{Skills: skills.Names()})
	require.NoError(t, err)
	_, err = flow.Compile(d, skills)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	var errs def.Errors
	require.ErrorAs(t, err, &errs)
	require.Equal(t, `fan.yaml:8:9: stage "one": on_error then escalate cannot be in a parallel branch: use fail (the branch fails) or goto a stage of the branch
fan.yaml:9:9: stage "ask": a gate with options cannot be in a parallel branch: a branch cannot ask a person; put the gate after the parallel stage`, errs.Error())

	// A skill the definition names but the map does not hold.
	d, err = def.Load("fan.yaml", []byte(head+"metadata: {name: one}\nstages:\n  - {id: a, type: skill, skill: echo}\n"), def.Options{Skills: []string{"echo"}})
	require.NoError(t, err)
	_, err = flow.Compile(d, flow.Skills{})
	require.ErrorContains(t, err, `skill "echo" is not registered`)
}

func TestActionStageAndSkippingAnEscalatedStage(t *testing.T) {
	t.Parallel()
	c := &counter{}
	skills := flow.Skills{"echo": echo(c), "broken": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		c.inc(in.Stage)
		return nil, errors.New("source down")
	}}
	wf := compile(t, head+`metadata: {name: export}
stages:
  - id: fetch
    type: skill
    skill: broken
    on_error: {then: escalate}
  - id: write
    type: action
    skill: echo
    with: {format: ris}
`, skills)
	b := setup(t, "", nil, wf)
	r := b.run(t, "export", nil)
	require.Equal(t, engine.StatusEscalated, r.Status)
	require.Equal(t, "source down", r.Error)
	// The person skips the failed stage: the run goes on as if it had
	// completed (its on_complete), without its outputs.
	require.NoError(t, b.eng.Decide(context.Background(), r.ID, r.CheckpointID, engine.Decision{Action: engine.Edit, DecidedBy: "ada"}))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"fetch:escalated", "fetch:skip", "write:ok"}, b.steps(t, r.ID))
	require.Equal(t, map[string]map[string]any{"write": {"format": "ris"}}, outputsOf(t, r))
	require.Equal(t, 1, c.get("fetch"))
}
