package def_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"quarry/internal/engine/def"
	"quarry/internal/fault"

	"github.com/stretchr/testify/require"
)

// head is the first three lines every case shares; stages start on line 4.
const head = "apiVersion: quarry/v1\nkind: Workflow\nmetadata: {name: t}\n"

// errs loads src and returns every problem as file:line:col: message.
func errs(t *testing.T, src string) []string {
	t.Helper()
	_, err := def.Load("t.yaml", []byte(src), opts)
	if err == nil {
		return nil
	}
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	var list def.Errors
	require.True(t, errors.As(err, &list), "error %v wraps no def.Errors", err)
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Error()
	}
	return out
}

func TestDefinitionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"Valid", head + `
stages:
  - {id: a, type: skill, skill: s}
`, nil},
		{"YAMLSyntax", head + "stages: [a\n", []string{
			`t.yaml:4:9: YAML: sequence end token ']' not found`,
		}},
		{"Empty", "# nothing\n", []string{
			`t.yaml:1:1: the file is empty`,
		}},
		{"MissingTopKeys", "apiVersion: quarry/v1\n", []string{
			`t.yaml:1:1: missing key "kind"`,
			`t.yaml:1:1: missing key "metadata"`,
			`t.yaml:1:1: missing key "stages"`,
		}},
		{"WrongAPIVersionAndKind", "apiVersion: quarry/v2\nkind: Flow\nmetadata: {name: t}\nstages: [{id: a, type: set, set: {x: 1}}]\n", []string{
			`t.yaml:1:13: apiVersion must be "quarry/v1", not "quarry/v2"`,
			`t.yaml:2:7: kind must be "Workflow", not "Flow"`,
		}},
		{"UnknownTopKey", head + "stages: [{id: a, type: set, set: {x: 1}}]\nsteps: []\n", []string{
			`t.yaml:5:1: unknown key "steps" in the definition`,
		}},
		{"BadMetadata", "apiVersion: quarry/v1\nkind: Workflow\nmetadata: {name: Bad Name, version: 0, owner: me}\nstages: [{id: a, type: set, set: {x: 1}}]\n", []string{
			`t.yaml:3:18: metadata.name "Bad Name" must be lower-case letters, digits, - and _`,
			`t.yaml:3:37: metadata.version must be at least 1`,
			`t.yaml:3:40: unknown key "owner" in metadata`,
		}},
		{"UnknownStageKeyAndWrongTypeKey", head + `stages:
  - id: a
    type: skill
    skill: s
    on_sucess: b
    duration: 5s
`, []string{
			`t.yaml:8:5: stage "a": unknown key "on_sucess" in a stage`,
			`t.yaml:9:5: stage "a": key "duration" does not apply to a skill stage`,
		}},
		{"StageWithoutIDOrType", head + `stages:
  - {skill: s}
`, []string{
			`t.yaml:5:5: a stage has no id`,
			`t.yaml:5:5: a stage has no type`,
		}},
		{"UnknownStageType", head + `stages:
  - {id: a, type: script}
`, []string{
			`t.yaml:5:13: stage "a": unknown stage type "script" (skill, action, set, gate, parallel, delay, webhook)`,
		}},
		{"BadStageID", head + `stages:
  - {id: 1a, type: set, set: {x: 1}}
  - {id: complete, type: set, set: {x: 1}}
`, []string{
			`t.yaml:5:6: stage "1a": stage id must be letters, digits and _, not starting with a digit`,
			`t.yaml:6:6: stage "complete": stage id "complete" is reserved: it is the target that ends the run`,
		}},
		{"DuplicateStageID", head + `stages:
  - {id: a, type: set, set: {x: 1}}
  - {id: a, type: set, set: {x: 2}}
`, []string{
			`t.yaml:6:6: stage "a": stage id "a" is used twice`,
		}},
		{"DuplicateKey", head + `stages:
  - id: a
    type: set
    set: {x: 1}
    set: {y: 2}
`, []string{
			`t.yaml:8:5: stage "a": key "set" is written twice in a stage`,
		}},
		{"UnknownTarget", head + `stages:
  - {id: a, type: skill, skill: s, on_complete: nowhere}
`, []string{
			`t.yaml:5:49: stage "a": on_complete: "nowhere" is not a stage (nor complete)`,
		}},
		{"UnknownTargetsEverywhere", head + `stages:
  - id: a
    type: gate
    conditions: ["true"]
    on_pass: p
    on_fail: {goto: g, then: {goto: t}}
    on_error: {then: {goto: e}}
    condition: "false"
    skip_to: s
  - id: b
    type: gate
    options: [{label: Go, next: o}]
`, []string{
			`t.yaml:8:14: stage "a": on_pass: "p" is not a stage (nor complete)`,
			`t.yaml:9:21: stage "a": on_fail.goto: "g" is not a stage (nor complete)`,
			`t.yaml:9:37: stage "a": on_fail.then.goto: "t" is not a stage (nor complete)`,
			`t.yaml:10:29: stage "a": on_error.then.goto: "e" is not a stage (nor complete)`,
			`t.yaml:12:14: stage "a": skip_to: "s" is not a stage (nor complete)`,
			`t.yaml:13:5: stage "b": not reachable from the entry "a"`,
			`t.yaml:15:33: stage "b": options.next: "o" is not a stage (nor complete)`,
		}},
		{"UnregisteredSkill", head + `stages:
  - {id: a, type: skill, skill: nope}
  - {id: b, type: action}
`, []string{
			`t.yaml:5:26: stage "a": skill "nope" is not registered`,
			`t.yaml:6:5: stage "b": an action stage needs action (export, notify, snapshot, start_workflow) or skill: the name of a registered handler`,
		}},
		{"Unreachable", head + `stages:
  - {id: a, type: set, set: {x: 1}, on_complete: complete}
  - {id: b, type: set, set: {x: 1}}
`, []string{
			`t.yaml:6:5: stage "b": not reachable from the entry "a"`,
		}},
		{"NoTerminal", head + `stages:
  - {id: a, type: set, set: {x: 1}, max_iterations: 3}
  - {id: b, type: set, set: {x: 1}, on_complete: a}
`, []string{
			`t.yaml:5:5: stage "a": no path from the entry reaches complete: the run could never finish`,
		}},
		{"StageNeverCompletes", head + `stages:
  - id: a
    type: gate
    options: [{label: Loop, next: b}, {label: End, next: complete}]
    on_fail: {max_iterations: 3}
  - {id: b, type: set, set: {x: 1}, on_complete: c}
  - {id: c, type: set, set: {x: 1}, on_complete: b, max_iterations: 2}
`, []string{
			`t.yaml:9:5: stage "b": no path from this stage reaches complete`,
			`t.yaml:10:5: stage "c": no path from this stage reaches complete`,
		}},
		{"UnboundedLoop", head + `stages:
  - {id: a, type: skill, skill: s}
  - id: b
    type: gate
    options: [{label: Again, next: a}, {label: Done, next: complete}]
`, []string{
			`t.yaml:8:36: stage "b": options.next: going back to "a" makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)`,
		}},
		{"UnboundedSelfLoopOnFail", head + `stages:
  - id: a
    type: gate
    conditions: ["context.ok == true"]
    on_fail: {goto: a}
`, []string{
			`t.yaml:8:21: stage "a": on_fail.goto: going back to "a" makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)`,
		}},
		{"LoopBoundOffTheLoop", head + `stages:
  - {id: a, type: skill, skill: s, max_iterations: 2}
  - {id: b, type: skill, skill: s}
  - {id: c, type: set, set: {x: 1}, on_complete: b}
`, []string{
			`t.yaml:5:5: stage "a": no path from the entry reaches complete: the run could never finish`,
			`t.yaml:7:50: stage "c": on_complete: going back to "b" makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)`,
		}},
		{"LoopInsideBranch", head + `stages:
  - id: p
    type: parallel
    branches:
      - id: br
        stages:
          - {id: x, type: skill, skill: s}
          - {id: y, type: gate, conditions: ["context.ok == true"], on_fail: {goto: x}}
`, []string{
			`t.yaml:11:85: stage "y": on_fail.goto: going back to "x" makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)`,
		}},
		{"TargetInsideABranch", head + `stages:
  - id: p
    type: parallel
    branches: [{id: x, type: skill, skill: s}]
  - {id: q, type: set, set: {v: 1}, on_complete: x}
`, []string{
			`t.yaml:8:50: stage "q": on_complete: "x" is a stage inside a parallel branch; only its branch goes to it`,
		}},
		{"ParamErrors", head + `params:
  - {name: n, type: int, default: 50, min: 1, max: 20}
  - {name: s, type: string, default: 3}
  - {name: r, type: string, required: true, default: x}
  - {name: b, type: bool, min: 0}
  - {name: e, type: int, enum: [a]}
  - {name: n, type: float}
  - {name: f, type: float, min: 2, max: 1}
  - {name: l, type: list, default: [a, b], enum: [a]}
  - {name: x, type: date}
  - {type: string}
  - {name: q, type: string, secret: true}
stages: [{id: a, type: set, set: {x: 1}}]
`, []string{
			`t.yaml:5:5: parameter "n": default is above max 20`,
			`t.yaml:6:5: parameter "s": default 3 is not a string`,
			`t.yaml:7:5: parameter "r" is required and has a default; choose one`,
			`t.yaml:8:5: parameter "b": a bool cannot have min or max`,
			`t.yaml:9:5: parameter "e": only string and list parameters can have an enum`,
			`t.yaml:10:5: parameter "n" is declared twice`,
			`t.yaml:11:5: parameter "f": min 2 is greater than max 1`,
			`t.yaml:12:5: parameter "l": default "b" is not one of the enum`,
			`t.yaml:13:21: parameter type "date" is not one of string, int, float, bool, list`,
			`t.yaml:14:5: a parameter has no name`,
			`t.yaml:15:29: unknown key "secret" in a parameter`,
		}},
		{"BadDurations", head + `stages:
  - id: a
    type: skill
    skill: s
    timeout: 10 minutes
    on_error: {retry: 2, backoff: -5s}
  - {id: b, type: delay, duration: 0s}
  - {id: c, type: delay, duration: 2x}
`, []string{
			`t.yaml:8:14: stage "a": timeout: "10 minutes" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
			`t.yaml:9:35: stage "a": backoff: "-5s" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
			`t.yaml:10:36: stage "b": duration: "0s" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
			`t.yaml:11:36: stage "c": duration: "2x" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
		}},
		{"DelayShape", head + `stages:
  - {id: a, type: delay}
  - {id: b, type: delay, duration: 1d, until: "2026-01-01T00:00:00Z"}
  - {id: c, type: delay, until: tomorrow}
  - {id: d, type: delay, duration: 1h, poll: {interval: 5m}}
`, []string{
			`t.yaml:5:5: stage "a": a delay needs exactly one of duration or until`,
			`t.yaml:6:5: stage "b": a delay needs exactly one of duration or until`,
			`t.yaml:7:26: stage "c": until "tomorrow" is neither an RFC 3339 time (2026-01-31T09:00:00Z) nor a {{ template }}`,
			`t.yaml:8:46: stage "d": poll needs an interval and a condition`,
		}},
		{"JoinMoreThanBranches", head + `stages:
  - id: p
    type: parallel
    branches:
      - {id: x, type: skill, skill: s}
      - {id: y, type: skill, skill: s}
    join: 3
`, []string{
			`t.yaml:10:11: stage "p": join 3 is more than the 2 branches`,
		}},
		{"JoinBadValue", head + `stages:
  - id: p
    type: parallel
    branches: [{id: x, type: skill, skill: s}]
    join: most
`, []string{
			`t.yaml:8:11: stage "p": join must be all, any or a number, not "most"`,
		}},
		{"BranchErrors", head + `stages:
  - id: p
    type: parallel
    branches:
      - {id: x, type: skill, skill: s, on_complete: q}
      - [{id: y, type: parallel, branches: []}]
      - {id: z, condition: "item > 1", stages: []}
      - {id: w, stages: [{id: w1, type: set, set: {v: 1}}], retry: 1}
  - {id: q, type: set, set: {x: 1}}
`, []string{
			`t.yaml:8:53: stage "x": on_complete: "q" is not a stage of branch x (a branch's stages go to each other or to complete)`,
			`t.yaml:9:18: stage "y": a parallel stage cannot sit inside a branch`,
			`t.yaml:9:44: stage "y": branches is empty`,
			`t.yaml:10:9: stage "p": a branch has no stages`,
			`t.yaml:10:28: stage "p": expression "item > 1": item is in scope only in the branch of a for_each`,
			`t.yaml:11:61: stage "p": unknown key "retry" in a branch (id, condition, stages)`,
		}},
		{"ForEachNeedsOneBranch", head + `stages:
  - id: p
    type: parallel
    for_each: context.items
    branches:
      - {id: x, type: skill, skill: s, with: {v: "{{ item }}"}}
      - {id: y, type: skill, skill: s}
`, []string{
			`t.yaml:8:5: stage "p": with for_each, branches holds exactly one branch: the stages run once per item`,
		}},
		{"ExpressionSyntax", head + `stages:
  - id: a
    type: gate
    conditions: ["context.n >", "1 + 1"]
    on_fail: {then: fail}
`, []string{
			`t.yaml:7:18: stage "a": expression "context.n >": unexpected token EOF`,
			`t.yaml:7:33: stage "a": expression "1 + 1": expected bool, but got int`,
		}},
		{"ExpressionUnknownNames", head + `params: [{name: q, type: string, required: true}]
context: {x: "{{ outputs.a.v }}"}
stages:
  - id: a
    type: skill
    skill: s
    with: {a: "{{ params.nope }}", b: "{{ outputs.ghost.v }}", c: "{{ secrets.KEY }}", d: "{{ item }}", e: "{{ foo }}"}
`, []string{
			`t.yaml:5:14: expression "outputs.a.v": the initial context may use only params`,
			`t.yaml:10:15: stage "a": expression "params.nope": params.nope is not a declared parameter`,
			`t.yaml:10:39: stage "a": expression "outputs.ghost.v": outputs.ghost: there is no stage "ghost"`,
			`t.yaml:10:67: stage "a": expression "secrets.KEY": secrets are in scope only in a webhook's request`,
			`t.yaml:10:91: stage "a": expression "item": item is in scope only in the branch of a for_each`,
			`t.yaml:10:108: stage "a": expression "foo": unknown name foo`,
		}},
		{"ExpressionTypes", head + `params: [{name: q, type: string, required: true}, {name: n, type: int, default: 2}]
stages:
  - id: a
    type: set
    set: {x: params.q + 1, y: "{{ params.n }}"}
    condition: params.n
    skip_to: complete
`, []string{
			`t.yaml:8:14: stage "a": expression "params.q + 1": invalid operation: + (mismatched types string and int)`,
			`t.yaml:8:31: stage "a": expression "{{ params.n }}": write the expression without {{ }}`,
			`t.yaml:9:16: stage "a": expression "params.n": expected bool, but got int`,
		}},
		{"TemplateUnclosed", head + `stages:
  - {id: a, type: skill, skill: s, with: {x: "{{ context.a", y: "a }} b", z: "{{ }}"}}
`, []string{
			`t.yaml:5:46: stage "a": template "{{ context.a": "{{" is never closed by "}}"`,
			`t.yaml:5:65: stage "a": template "a }} b": "}}" without "{{"`,
			`t.yaml:5:78: stage "a": template "{{ }}": empty {{ }}`,
		}},
		{"WebhookHostNotAllowed", head + `stages:
  - id: a
    type: webhook
    request: {url: "https://evil.example.com/x"}
  - id: b
    type: webhook
    request: {url: "https://{{ params.h }}/x"}
  - id: c
    type: webhook
    request: {method: FETCH, url: "ftp://hooks.example.org/x"}
    expect: {status: 700}
  - {id: d, type: webhook}
`, []string{
			`t.yaml:7:14: stage "a": url host "evil.example.com" is not in the webhook allowlist (QUARRY_WEBHOOK_HOSTS)`,
			`t.yaml:10:14: stage "b": url "https://{{ params.h }}/x": the scheme and host must be written out, not templated`,
			`t.yaml:10:20: stage "b": expression "params.h": params.h is not a declared parameter`,
			`t.yaml:13:14: stage "c": url "ftp://hooks.example.org/x" must be an absolute http or https URL`,
			`t.yaml:13:23: stage "c": method must be GET, POST, PUT, PATCH or DELETE, not "FETCH"`,
			`t.yaml:14:22: stage "c": status 700 is not an HTTP status`,
			`t.yaml:15:5: stage "d": a webhook stage needs a request`,
		}},
		{"GateShape", head + `stages:
  - {id: a, type: gate}
  - id: b
    type: gate
    options: [{label: Go, next: complete}, {next: complete}, {label: Nowhere}]
    on_pass: complete
    on_fail: {goto: a}
`, []string{
			`t.yaml:5:5: stage "a": a gate needs conditions, options or both`,
			`t.yaml:8:44: stage "b": an option has no label`,
			`t.yaml:8:62: stage "b": option "Nowhere" has no next`,
			`t.yaml:9:5: stage "b": on_pass does not apply to a gate with options: each option names its next stage`,
			`t.yaml:10:5: stage "b": on_fail applies when conditions fail, and this gate has none`,
			`t.yaml:10:21: stage "b": on_fail.goto: going back to "a" makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)`,
		}},
		{"Approval", head + `stages:
  - id: a
    type: gate
    options: [{label: Yes, next: b}, {label: No, next: complete}]
    approval: {count: 0, options: [Yes, Maybe, Yes], voters: 3}
  - id: b
    type: gate
    options: [{label: Yes, next: c}, {label: No, next: complete}]
    approval: {count: 3, of: 2, options: [Yes, No]}
  - id: c
    type: gate
    options: [{label: Yes, next: d}, {label: No, next: complete}]
    approval: {of: 2}
  - {id: d, type: gate, conditions: ["true"], approval: {count: 2, options: [Yes]}}
  - {id: e, type: gate, form: review, approval: {count: 2, options: [approve]}, options: [{label: approve, next: complete}, {label: iterate, next: e}, {label: more, next: e}], on_fail: {max_iterations: 2}}
`, []string{
			`t.yaml:8:23: stage "a": approval.count must be at least 1`,
			`t.yaml:8:41: stage "a": approval.options: "Maybe" is not one of the gate's options ("Yes", "No")`,
			`t.yaml:8:48: stage "a": approval.options: "Yes" is given twice`,
			`t.yaml:8:62: stage "a": voters must be a list`,
			`t.yaml:12:30: stage "b": approval.of (2) must be at least approval.count (3)`,
			`t.yaml:12:42: stage "b": approval.options lists every option: leave one out, for the gate to take when it fails`,
			`t.yaml:16:15: stage "c": approval needs count: how many people must choose the same option`,
			`t.yaml:16:15: stage "c": approval needs options: the labels of the options that pass the gate`,
			`t.yaml:17:57: stage "d": approval applies to a gate with options: the people vote for one`,
			`t.yaml:18:39: stage "e": approval does not apply to a gate with a form: the form asks one person`,
		}},
		{"ApprovalVoters", head + `stages:
  - id: a
    type: gate
    options: [{label: Yes, next: b}, {label: No, next: complete}]
    approval: {count: 2, of: 3, voters: [ada, Ada], options: [Yes]}
  - id: b
    type: gate
    options: [{label: Yes, next: c}, {label: No, next: complete}]
    approval: {count: 1, voters: [], options: [Yes]}
  - id: c
    type: gate
    options: [{label: Yes, next: complete}, {label: No, next: complete}]
    approval: {count: 1, voters: [ada, {name: bob}], options: [Yes]}
`, []string{
			`t.yaml:8:30: stage "a": approval.of (3) is not the number of approval.voters (2): leave of out, the voters say it`,
			`t.yaml:8:41: stage "a": approval.voters names only 1 of the 2 people approval.count needs`,
			`t.yaml:8:47: stage "a": approval.voters: "Ada" is named twice`,
			`t.yaml:12:34: stage "b": approval.voters is empty: name the people who vote, or leave it out so anyone may`,
			`t.yaml:16:40: stage "c": approval.voters lists people's names`,
		}},
		{"ApprovalFrom", head + `stages:
  - id: a
    type: gate
    options: [{label: Yes, next: b}, {label: No, next: complete}]
    approval: {count: 1, from: viewers, self_approval: maybe, options: [Yes]}
  - id: b
    type: gate
    options: [{label: Yes, next: complete}, {label: No, next: complete}]
    approval: {count: 1, from: reviewers, voters: [ada], options: [Yes]}
`, []string{
			`t.yaml:8:32: stage "a": approval.from is owners or reviewers (the project role voters must hold; owners count as reviewers), not "viewers"`,
			`t.yaml:8:56: stage "a": self_approval must be true or false`,
			`t.yaml:12:32: stage "b": approval names its voters and a role (from): give one of them`,
		}},
		{"GateTimeout", head + `stages:
  - id: a
    type: gate
    options: [{label: Yes, next: b}, {label: Why, next: b, requires_input: true}]
    timeout: 2d
    on_timeout: {default: Maybe, then: fail}
  - id: b
    type: gate
    options: [{label: Yes, next: c}]
    timeout: 1h
  - id: c
    type: gate
    options: [{label: Yes, next: d}]
    on_timeout: {extend: 1h, default: Yes}
  - id: d
    type: gate
    conditions: ["true"]
    timeout: 1h
    on_timeout: {extend: 1x, max_extensions: 0, then: later}
  - id: e
    type: gate
    options: [{label: Yes, next: f}, {label: Why, next: f, requires_input: true}]
    timeout: 1h
    on_timeout: {default: Why}
    notify: [{webhook: "https://evil.example.com/x"}, {email: "not an address"}, {email: a@b.org, webhook: "https://hooks.example.org/x"}, {sms: "555"}]
  - id: f
    type: gate
    options: [{label: Yes, next: g}]
    timeout: 1h
    on_timeout: {extend: 12h}
    notify: []
  - {id: g, type: gate, form: review, timeout: 1h, on_timeout: {default: approve}, notify: [{email: a@b.org}], options: [{label: approve, next: complete}, {label: iterate, next: g}, {label: more, next: g}], on_fail: {max_iterations: 2}}
`, []string{
			`t.yaml:9:27: stage "a": on_timeout.default: "Maybe" is not one of the gate's options ("Yes", "Why")`,
			`t.yaml:9:40: stage "a": on_timeout.then applies with extend, not with default`,
			`t.yaml:13:5: stage "b": timeout needs on_timeout: {default: OPTION} or {extend: DURATION, max_extensions: N, then: …}`,
			`t.yaml:17:5: stage "c": on_timeout needs timeout: how long the person has`,
			`t.yaml:17:17: stage "c": on_timeout needs exactly one of default (an option) or extend (a duration)`,
			`t.yaml:21:5: stage "d": a gate's timeout is how long a person has to choose, and this gate has no options`,
			`t.yaml:22:26: stage "d": extend: "1x" is not a positive duration (like "90s", "10m", "1h30m" or "2d")`,
			`t.yaml:22:46: stage "d": on_timeout.max_extensions must be between 1 and 100`,
			`t.yaml:22:55: stage "d": then must be escalate, fail or {goto: STAGE}, not "later"`,
			`t.yaml:27:27: stage "e": on_timeout.default: option "Why" requires input, which nobody gives when the time is up`,
			`t.yaml:28:14: stage "e": url host "evil.example.com" is not in the webhook allowlist (QUARRY_WEBHOOK_HOSTS)`,
			`t.yaml:28:55: stage "e": notify: "not an address" is not an e-mail address`,
			`t.yaml:28:82: stage "e": a notice is {webhook: URL} or {email: ADDRESS}: exactly one of them`,
			`t.yaml:28:140: stage "e": a notice is {webhook: URL} or {email: ADDRESS}: exactly one of them`,
			`t.yaml:28:141: stage "e": unknown key "sms" in a notice`,
			`t.yaml:33:17: stage "f": on_timeout with extend needs max_extensions: how many times the time is extended`,
			`t.yaml:33:17: stage "f": on_timeout with extend needs then: escalate, fail or {goto: STAGE}, once the extensions are used up`,
			`t.yaml:34:13: stage "f": notify is empty`,
			`t.yaml:35:39: stage "g": timeout does not apply to a gate with a form`,
			`t.yaml:35:52: stage "g": on_timeout does not apply to a gate with a form`,
			`t.yaml:35:84: stage "g": notify does not apply to a gate with a form`,
		}},
		{"ApprovalOptionsTwice", head + `stages:
  - id: a
    type: gate
    options: [{label: Yes, next: complete}]
    approval: {count: 2, options: [{label: Yes, next: complete}, {label: No, next: complete}]}
`, []string{
			`t.yaml:8:35: stage "a": the gate's options are given in options already; give them once`,
			`t.yaml:8:66: stage "a": approval.options: "No" is not one of the gate's options ("Yes")`,
		}},
		{"FormNotRegistered", head + `stages:
  - {id: g, type: gate, form: nope, options: [{label: approve, next: complete}]}
`, []string{
			`t.yaml:5:25: stage "g": form "nope" is not registered`,
		}},
		{"FormNeedsOptions", head + `stages:
  - {id: g, type: gate, form: review}
`, []string{
			`t.yaml:5:5: stage "g": a gate with a form needs options: one per outcome of form review (approve, iterate, more)`,
		}},
		{"FormOptions", head + `stages:
  - id: g
    type: gate
    form: review
    options:
      - {label: approve, next: complete}
      - {label: approve, next: complete}
      - {label: redo, next: complete}
      - {label: skip, next: complete, requires_input: true}
`, []string{
			`t.yaml:8:5: stage "g": form review's outcome "iterate" has no option`,
			`t.yaml:8:5: stage "g": form review's outcome "more" has no option`,
			`t.yaml:10:9: stage "g": option "approve" is given twice`,
			`t.yaml:11:9: stage "g": form review has no outcome "redo" (approve, iterate, more, or skip)`,
			`t.yaml:12:9: stage "g": requires_input does not apply to a form's options: the form asks what it needs`,
		}},
		{"FormKeysThatDoNotApply", head + `params: [{name: n, type: int, default: 2}]
stages:
  - id: g
    type: gate
    form: review
    condition: "true"
    max_iterations: 2
    conditions: ["true"]
    context: [x]
    options: [{label: approve, next: complete}, {label: iterate, next: g}, {label: more, next: g}]
    on_fail: {goto: g, then: fail, max_iterations: "{{ params.n }}"}
`, []string{
			`t.yaml:9:5: stage "g": condition does not apply to a gate with a form`,
			`t.yaml:10:5: stage "g": max_iterations does not apply to a gate with a form`,
			`t.yaml:11:5: stage "g": conditions does not apply to a gate with a form`,
			`t.yaml:12:5: stage "g": context does not apply to a gate with a form`,
			`t.yaml:14:5: stage "g": on_fail of a gate with a form takes max_iterations and then only`,
			`t.yaml:14:5: stage "g": on_fail.then of a gate with a form is {goto: STAGE}: where its iterate goes once max_iterations is reached`,
			`t.yaml:14:52: stage "g": on_fail.max_iterations of a gate with a form is a number or "{{ params.max_iterations }}": the run's iteration bound`,
		}},
		{"FormBoundsDiffer", head + `params: [{name: max_iterations, type: int, default: 2}]
stages:
  - id: a
    type: gate
    form: review
    options: [{label: approve, next: b}, {label: iterate, next: a}, {label: more, next: a}]
    on_fail: {max_iterations: "{{ params.max_iterations }}"}
  - id: b
    type: gate
    form: review
    options: [{label: approve, next: complete}, {label: iterate, next: a}, {label: more, next: b}]
    on_fail: {max_iterations: 3, then: {goto: complete}}
`, []string{
			`t.yaml:15:31: stage "b": gates with a form share the run's iteration bound: on_fail.max_iterations must be gate "a"'s`,
		}},
		{"FormAndTitleKeys", head + `stages:
  - {id: a, type: skill, skill: s, form: review, title: [x]}
`, []string{
			`t.yaml:5:36: stage "a": key "form" does not apply to a skill stage`,
			`t.yaml:5:57: stage "a": title must be a string`,
		}},
		{"SkipToWithoutCondition", head + `stages:
  - {id: a, type: set, set: {x: 1}, skip_to: complete}
`, []string{
			`t.yaml:5:37: stage "a": skip_to needs a condition`,
		}},
		{"OnErrorThen", head + `stages:
  - {id: a, type: skill, skill: s, on_error: {retry: -1, then: retry}}
`, []string{
			`t.yaml:5:54: stage "a": retry must be between 0 and 100`,
			`t.yaml:5:64: stage "a": then must be escalate, fail or {goto: STAGE}, not "retry"`,
		}},
		{"OnErrorResume", head + `stages:
  - {id: a, type: skill, skill: s, on_error: {retry: 1, resume: later}}
`, []string{
			`t.yaml:5:65: stage "a": resume must be auto or ask, not "later"`,
		}},
		{"OnErrorResumeWithoutRetry", head + `stages:
  - {id: a, type: skill, skill: s, on_error: {resume: ask}}
`, []string{
			`t.yaml:5:55: stage "a": resume: ask applies to retries: set retry`,
		}},
		{"Postconditions", head + `stages:
  - {id: a, type: set, set: {x: 1}, postconditions: ["context.x", "outputs.b.n > 0", 3]}
  - {id: g, type: gate, conditions: ["true"], postconditions: ["true"]}
`, []string{
			`t.yaml:5:67: stage "a": expression "outputs.b.n > 0": outputs.b: there is no stage "b"`,
			`t.yaml:5:86: stage "a": postconditions must list string expressions`,
			`t.yaml:6:47: stage "g": key "postconditions" does not apply to a gate stage`,
		}},
		{"MaxIterationsShape", head + `stages:
  - {id: a, type: set, set: {x: 1}, max_iterations: 0}
  - {id: b, type: set, set: {x: 1}, max_iterations: lots}
  - {id: c, type: set, set: {x: 1}, max_iterations: "{{ params.none }}"}
`, []string{
			`t.yaml:5:53: stage "a": max_iterations must be at least 1`,
			`t.yaml:6:53: stage "b": max_iterations must be a number or "{{ params.NAME }}"`,
			`t.yaml:7:53: stage "c": expression "params.none": params.none is not a declared parameter`,
		}},
		{"AnchorsRefused", head + `stages:
  - &a {id: a, type: set, set: {x: 1}}
  - *a
`, []string{
			`t.yaml:5:5: anchors and aliases are not supported: write the value out`,
			`t.yaml:6:5: anchors and aliases are not supported: write the value out`,
		}},
		{"SetShape", head + `stages:
  - {id: a, type: set, set: {}}
  - {id: b, type: set, set: {bad-key: 1, y: [1]}}
  - {id: c, type: set}
`, []string{
			`t.yaml:5:29: stage "a": set is empty`,
			`t.yaml:6:30: stage "b": set key "bad-key" must be a name (letters, digits, _)`,
			`t.yaml:6:45: stage "b": set y: a value must be an expression`,
			`t.yaml:7:5: stage "c": a set stage needs set: a map of context keys to expressions`,
		}},
		{"OutputsShape", head + `stages:
  - {id: a, type: skill, skill: s, outputs: [{name: x}, {name: x}, {required: true}, {name: y, type: int}]}
`, []string{
			`t.yaml:5:57: stage "a": output "x" is declared twice`,
			`t.yaml:5:68: stage "a": an output has no name`,
			`t.yaml:5:96: stage "a": unknown key "type" in an output`,
		}},
		{"ConcurrencyRuns", head + `concurrency: {runs: 0, jobs: 2}
stages: [{id: a, type: skill, skill: s}]
`, []string{
			`t.yaml:4:21: concurrency.runs must be at least 1`,
			`t.yaml:4:24: unknown key "jobs" in concurrency`,
		}},
		{"TriggerBadCron", head + `trigger: {schedule: "0 6 * *"}
stages: [{id: a, type: skill, skill: s}]
`, []string{
			`t.yaml:4:21: schedule "0 6 * *" is not a cron spec (minute hour day-of-month month day-of-week, e.g. "0 6 * * MON"): expected exactly 5 fields, found 4: [0 6 * *]`,
		}},
		{"TriggerNamesUnique", head + `trigger:
  - {schedule: "@daily", name: inbound, webhook: inbound}
stages: [{id: a, type: skill, skill: s}]
`, []string{
			`t.yaml:5:50: trigger "inbound" is named twice`,
		}},
		{"TriggerShape", head + `trigger:
  - {webhook: hook, params: {n: 1}}
  - {name: x}
  - {schedule: "@daily", name: BAD}
  - {webhook: hook}
  - {schedule: "@daily", frequency: 2}
stages: [{id: a, type: skill, skill: s}]
`, []string{
			`t.yaml:5:21: a webhook trigger takes its run's params from the request's JSON body, not from params`,
			`t.yaml:6:5: a trigger needs schedule (a cron spec) or webhook (a name)`,
			`t.yaml:7:32: trigger name "BAD" must be lower-case letters, digits, - and _`,
			`t.yaml:8:15: trigger "hook" is named twice`,
			`t.yaml:9:26: unknown key "frequency" in a trigger`,
		}},
		{"TriggerScheduleParams", head + `params:
  - {name: q, type: string, required: true}
  - {name: n, type: int, max: 3}
trigger: {schedule: "0 6 * * MON", params: {n: 5, m: 1}}
stages: [{id: a, type: skill, skill: s}]
`, []string{
			`t.yaml:7:21: trigger "schedule": the required parameter "q" has no value in the trigger's params`,
			`t.yaml:7:45: trigger "schedule": params.n is above max 3`,
			`t.yaml:7:51: trigger "schedule": params.m is not a declared parameter`,
		}},
		{"Actions", head + `stages:
  - {id: a, type: action, action: mail}
  - {id: b, type: action, action: export, with: {format: doc, file: ../x.ris, to: y}}
  - {id: c, type: action, action: notify, with: {text: hi}}
  - {id: d, type: action, action: notify, with: {text: hi, webhook: "https://evil.example/x"}}
  - {id: e, type: action, action: start_workflow, with: {workflow: "{{ params.w }}", wait: "yes"}}
  - {id: f, type: action, action: snapshot, skill: s, required: true}
  - {id: g, type: skill, skill: s, required: true}
on_complete:
  - {action: notify, with: {text: done}}
  - {with: {text: done}}
`, []string{
			`t.yaml:5:27: stage "a": unknown action "mail" (export, notify, snapshot, start_workflow)`,
			`t.yaml:6:5: stage "b": action export needs with.papers`,
			`t.yaml:6:50: stage "b": export format "doc" is not one of bibtex, ris`,
			`t.yaml:6:63: stage "b": export file "../x.ris" must be a plain file name: no directory, no ..`,
			`t.yaml:6:79: stage "b": action export has no with key "to" (papers, format, file)`,
			`t.yaml:7:5: stage "c": action notify needs with.webhook, with.email or both`,
			`t.yaml:8:60: stage "d": url host "evil.example" is not in the webhook allowlist (QUARRY_WEBHOOK_HOSTS)`,
			`t.yaml:9:58: stage "e": start_workflow's workflow must be a workflow name written out`,
			`t.yaml:9:68: stage "e": expression "params.w": params.w is not a declared parameter`,
			`t.yaml:9:86: stage "e": start_workflow's wait must be true or false`,
			`t.yaml:10:27: stage "f": an action stage names skill or action, not both`,
			`t.yaml:11:36: stage "g": key "required" does not apply to a skill stage`,
			`t.yaml:13:5: action notify needs with.webhook, with.email or both`,
			`t.yaml:14:5: on_complete: a hook needs action: one of export, notify, snapshot, start_workflow`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := errs(t, tt.src)
			require.Equal(t, tt.want, got, "got:\n%s", strings.Join(got, "\n"))
		})
	}
}

// TestValidDefinitions are the edges of the rules: each loads clean.
func TestValidDefinitions(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src string }{
		{"LoopBoundedByStage", head + `stages:
  - {id: a, type: skill, skill: s}
  - {id: b, type: delay, duration: 1d, max_iterations: 3, on_complete: a, on_error: {then: {goto: complete}}}
`},
		{"LoopBoundedByGateOnFail", head + `params: [{name: n, type: int, default: 3, min: 1}]
stages:
  - {id: a, type: skill, skill: s}
  - id: b
    type: gate
    conditions: ["context.ok == true"]
    options: [{label: Again, next: a, requires_input: true}, {label: Done, next: complete}]
    on_fail: {goto: a, max_iterations: "{{ params.n }}", then: escalate}
`},
		{"LoopBoundedInTheMiddle", head + `stages:
  - {id: a, type: skill, skill: s}
  - {id: b, type: skill, skill: s, max_iterations: 4, on_error: {then: {goto: complete}}}
  - id: c
    type: gate
    options: [{label: Again, next: a}, {label: Done, next: complete}]
`},
		{"ForwardSkipIsNoLoop", head + `stages:
  - {id: a, type: set, set: {x: "1"}, condition: "context.x == nil", skip_to: c}
  - {id: b, type: set, set: {y: context.x}}
  - {id: c, type: set, set: {z: "true"}, on_complete: complete}
`},
		{"JoinEqualsBranches", head + `stages:
  - id: p
    type: parallel
    branches:
      - {id: x, type: skill, skill: s}
      - [{id: y1, type: skill, skill: s}, {id: y2, type: set, set: {v: outputs.y1.v}}]
      - {id: z, condition: "context.more == true", stages: [{id: z1, type: skill, skill: s}]}
    join: 3
    on_any_reject: q
  - {id: q, type: set, set: {n: len(outputs.p.branches)}}
`},
		{"ForEachItem", head + `stages:
  - id: p
    type: parallel
    for_each: context.items
    branches:
      - {id: each, condition: "item != nil", stages: [{id: w, type: skill, skill: s, with: {v: "{{ item }}"}}]}
    join: 5
`},
		{"WebhookWithSecrets", head + `stages:
  - id: w
    type: webhook
    request:
      method: PUT
      url: "https://hooks.example.org/runs/{{ context.id }}?t={{ secrets.TOKEN }}"
      headers: {X-Key: "{{ secrets.KEY }}"}
      body: {ids: ["{{ outputs.w.x }}"], n: 3}
    expect: {status: 204}
`},
		{"Triggers", head + `params: [{name: q, type: string, required: true}]
concurrency: {runs: 2}
trigger:
  - {schedule: "0 6 * * MON", params: {q: weekly}}
  - {schedule: "CRON_TZ=Europe/Paris 30 7 1 * *", name: monthly, params: {q: monthly}, webhook: inbound}
stages: [{id: a, type: skill, skill: s}]
`},
		{"DelayUntilTemplateAndDays", head + `stages:
  - {id: a, type: delay, until: "{{ context.end }}", timeout: 1d12h}
  - {id: b, type: delay, until: "2027-01-31T09:00:00Z", poll: {interval: 30m, condition: "context.done"}}
`},
		{"FormGate", head + `params: [{name: max_iterations, type: int, default: 3}]
stages:
  - {id: a, type: skill, skill: s, title: Work}
  - id: g
    type: gate
    title: Look
    form: review
    options:
      - {label: approve, next: complete}
      - {label: iterate, next: a}
      - {label: more, next: g}
      - {label: skip, next: complete}
    on_fail: {max_iterations: "{{params.max_iterations}}", then: {goto: complete}}
`},
		{"GateTimeouts", head + `stages:
  - id: ask
    type: gate
    options: [{label: Go, next: wait}, {label: Stop, next: complete, requires_input: true}]
    timeout: 2d
    on_timeout: {default: Go}
    notify: [{webhook: "https://hooks.example.org/notify"}, {email: lead@example.org}]
  - id: wait
    type: gate
    options: [{label: Go, next: last}, {label: Again, next: ask}]
    timeout: 24h
    on_timeout: {extend: 24h, max_extensions: 3, then: {goto: ask}}
    on_fail: {max_iterations: 3, then: fail}
  - id: last
    type: gate
    options: [{label: Go, next: complete}]
    notify: [{email: lead@example.org}]
`},
		{"BlockLiteralCondition", head + `stages:
  - id: g
    type: gate
    conditions:
      - |
        context.n > 2 &&
        context.m < 5
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := errs(t, tt.src)
			require.Empty(t, got, "got:\n%s", strings.Join(got, "\n"))
		})
	}
}

// FuzzLoad: no input makes the loader panic, and a failure always names
// a place.
func FuzzLoad(f *testing.F) {
	src, err := os.ReadFile("testdata/living-review.yaml")
	require.NoError(f, err)
	f.Add(src)
	f.Add([]byte(head + "stages: [{id: a, type: set, set: {x: 1}}]\n"))
	f.Add([]byte(head + "stages:\n  - &a {id: a}\n  - *a\n  - !!str x\n"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := def.Load("f.yaml", src, opts)
		var list def.Errors
		if err != nil && errors.As(err, &list) {
			for _, e := range list {
				if e.Line < 1 || e.Col < 1 || e.Msg == "" {
					t.Fatalf("problem without a place or message: %#v", e)
				}
			}
		}
	})
}
