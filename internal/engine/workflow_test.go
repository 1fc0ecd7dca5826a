package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

func noop(context.Context, engine.StepContext) (engine.Outcome, engine.Update, error) {
	return engine.OK, nil, nil
}

func gate() *engine.Gate { return reviewGate(kindNote) }

func TestValidate(t *testing.T) {
	t.Parallel()
	step := func(id string, next engine.Next) engine.StepDef {
		return engine.StepDef{ID: id, Handler: noop, Next: next}
	}
	wf := func(entry string, steps ...engine.StepDef) *engine.Workflow {
		return &engine.Workflow{Name: "w", Entry: entry, MaxIterations: 3, Steps: steps}
	}
	end := engine.Next{engine.OK: engine.End}
	tests := []struct {
		name    string
		wf      *engine.Workflow
		culprit string // must appear in the error
	}{
		{"OK", wf("a", step("a", engine.Next{engine.OK: "b"}), step("b", end)), ""},
		{"NoName", &engine.Workflow{Entry: "a", Steps: []engine.StepDef{step("a", end)}}, "no name"},
		{"NoEntry", wf("", step("a", end)), "no entry point"},
		{"EntryMissing", wf("zz", step("a", end)), `entry point "zz" is not a step`},
		{"UnknownTarget", wf("a", step("a", engine.Next{engine.OK: "nowhere"})), `goes to "nowhere"`},
		{"Unreachable", wf("a", step("a", end), step("orphan", end)), `step "orphan" is not reachable`},
		{"NoTerminal", wf("a", step("a", engine.Next{engine.OK: "b"}), step("b", engine.Next{engine.OK: "a"})), "end marker"},
		{"DuplicateID", wf("a", step("a", end), step("a", end)), "used twice"},
		{"ReservedID", wf("a", step("a", engine.Next{engine.OK: engine.End}), step(engine.End, end)), "reserved"},
		{"NoTransitions", wf("a", step("a", nil), step("b", end)), `step "a" has no transitions`},
		{"UnknownOutcome", wf("a", step("a", engine.Next{"maybe": engine.End})), `unknown outcome "maybe"`},
		{"GotoOutcome", wf("a", step("a", engine.Next{engine.Goto("b"): "b"}), step("b", engine.Next{engine.Goto(engine.End): engine.End})), ""},
		{"GotoElsewhere", wf("a", step("a", engine.Next{engine.Goto("b"): engine.End})), `outcome "goto:b" must go to "b"`},
		{"RetryThenUndeclared", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Retry: engine.RetryPolicy{Then: engine.Goto("b")}}), "transitions do not declare"},
		{"HandlerAndGate", wf("a", engine.StepDef{ID: "a", Handler: noop, Gate: gate(), Next: end}), "exactly one of a handler, a gate or branches"},
		{"NeitherHandlerNorGate", wf("a", engine.StepDef{ID: "a", Next: end}), "exactly one of a handler, a gate or branches"},
		{"GateWithoutApply", wf("a", engine.StepDef{ID: "a", Gate: &engine.Gate{Kind: kindNote, Payload: gate().Payload}, Next: end}), "no decision applier"},
		{"GateWithoutKind", wf("a", engine.StepDef{ID: "a", Gate: &engine.Gate{Payload: gate().Payload, Apply: gate().Apply}, Next: end}), "no checkpoint kind"},
		{"IterateUnbounded", &engine.Workflow{Name: "w", Entry: "a", Steps: []engine.StepDef{step("a", engine.Next{engine.OK: engine.End, engine.Iterate: "a"})}}, "max_iterations"},
		{"ExitUnknown", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Exit: "gone"}), `exit path "gone"`},
		{"ConditionWithoutCheck", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Preconditions: []engine.Condition{{Name: "x"}}}), "needs a name and a check"},
		{"NegativeRetry", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Retry: engine.RetryPolicy{MaxAttempts: -1}}), "negative"},
		{"ParamMinAboveMax", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "n", Type: engine.ParamInt, Min: engine.Bound(5), Max: engine.Bound(1)}}}), "min 5 is greater than max 1"},
		{"ParamDefaultOutOfRange", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "n", Type: engine.ParamInt, Max: engine.Bound(3), Default: 9}}}), "default 9"},
		{"ParamDefaultNotAChoice", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "s", Type: engine.ParamString, Choices: []string{"x"}, Default: "y"}}}), "must be one of x"},
		{"ParamChoicesOnInt", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "n", Type: engine.ParamInt, Choices: []string{"1"}}}}), "only string parameters"},
		{"ParamRequiredWithDefault", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "q", Type: engine.ParamString, Required: true, Default: "x"}}}), "required and has a default"},
		{"ParamUnknownType", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "q", Type: "date"}}}), "unknown type"},
		{"ParamNoName", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Type: engine.ParamBool}}}), "has no name"},
		{"ParamBoolBounds", wf("a", engine.StepDef{ID: "a", Handler: noop, Next: end, Params: []engine.Param{{Name: "b", Type: engine.ParamBool, Max: engine.Bound(1)}}}), "cannot have bounds"},
		{"ParamDeclaredTwiceDifferently", wf("a",
			engine.StepDef{ID: "a", Handler: noop, Next: engine.Next{engine.OK: "b"}, Params: []engine.Param{{Name: "n", Type: engine.ParamInt}}},
			engine.StepDef{ID: "b", Handler: noop, Next: end, Params: []engine.Param{{Name: "n", Type: engine.ParamString}}}), `declares parameter "n" differently`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.wf.Validate()
			if tt.culprit == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.Contains(t, err.Error(), tt.culprit)
		})
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	a, b := linear("a", nil, "x"), linear("b", nil, "y")
	reg, err := engine.NewRegistry(a, b)
	require.NoError(t, err)
	require.Equal(t, []*engine.Workflow{a, b}, reg.List())
	got, err := reg.Get("b")
	require.NoError(t, err)
	require.Same(t, b, got)
	_, err = reg.Get("c")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))
	_, err = engine.NewRegistry(a, linear("a", nil, "z"))
	require.ErrorContains(t, err, "registered twice")
	_, err = engine.NewRegistry(&engine.Workflow{Name: "bad"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

func TestGraph(t *testing.T) {
	t.Parallel()
	wf := loopWorkflow("loop", 3, nil)
	wf.Steps[1].Exit = engine.End
	g := wf.Graph()
	require.Equal(t, "loop", g.Name)
	require.Equal(t, []engine.Node{
		{ID: "work", Title: "work", Entry: true},
		{ID: "review", Title: "review", Gate: kindNote},
		{ID: engine.End, Title: "end"},
	}, g.Nodes)
	require.Equal(t, []engine.Edge{
		{From: "work", To: "review", Outcome: "ok"},
		{From: "review", To: "work", Outcome: "iterate"},
		{From: "review", To: engine.End, Outcome: "ok"},
		{From: "review", To: engine.End, Outcome: "exit"},
	}, g.Edges)
}

func TestResolveParams(t *testing.T) {
	t.Parallel()
	wf := &engine.Workflow{Name: "p", Entry: "a", Steps: []engine.StepDef{{ID: "a", Handler: noop, Next: engine.Next{engine.OK: engine.End},
		Params: []engine.Param{
			{Name: "question", Type: engine.ParamString, Required: true, Min: engine.Bound(3), Max: engine.Bound(20)},
			{Name: "n", Type: engine.ParamInt, Default: 5, Min: engine.Bound(1), Max: engine.Bound(10)},
			{Name: "sources", Type: engine.ParamStrings, Choices: []string{"local", "arxiv"}, Default: []string{"local"}},
			{Name: "confirm", Type: engine.ParamBool, Default: true},
		}}}}
	require.NoError(t, wf.Validate())
	tests := []struct {
		name   string
		in     map[string]any
		want   engine.Params
		fields []string
	}{
		{"Defaults", map[string]any{"question": "why sqlite"}, engine.Params{"question": "why sqlite", "n": 5, "sources": []string{"local"}, "confirm": true}, nil},
		{"JSONNumbers", map[string]any{"question": "why sqlite", "n": 7.0, "sources": []any{"arxiv"}, "confirm": false}, engine.Params{"question": "why sqlite", "n": 7, "sources": []string{"arxiv"}, "confirm": false}, nil},
		{"MissingRequired", map[string]any{}, nil, []string{"question"}},
		{"TooShort", map[string]any{"question": "ab"}, nil, []string{"question"}},
		{"OutOfRange", map[string]any{"question": "abc", "n": 11}, nil, []string{"n"}},
		{"NotWhole", map[string]any{"question": "abc", "n": 1.5}, nil, []string{"n"}},
		{"WrongType", map[string]any{"question": 3, "confirm": "yes"}, nil, []string{"question", "confirm"}},
		{"BadChoice", map[string]any{"question": "abc", "sources": []any{"google"}}, nil, []string{"sources"}},
		{"Unknown", map[string]any{"question": "abc", "qestion": "typo"}, nil, []string{"qestion"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := wf.ResolveParams(tt.in)
			if tt.fields == nil {
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			fields := fault.ErrorFields(err)
			require.Len(t, fields, len(tt.fields), "%v", fields)
			for _, f := range tt.fields {
				require.Contains(t, fields, f)
			}
		})
	}
}

func TestCheckpointKindPayloadPairing(t *testing.T) {
	t.Parallel()
	_, err := engine.NewCheckpoint(engine.CheckpointKind("result_review"), notePayload{}, "r", 1, time.Time{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), `cannot carry a "note" payload`)
	_, err = engine.NewCheckpoint(kindNote, nil, "r", 1, time.Time{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	cp, err := engine.NewCheckpoint(kindNote, notePayload{Text: "hi"}, "r", 2, time.Time{})
	require.NoError(t, err)
	require.Equal(t, time.UTC, cp.Timestamp.Location())
	require.WithinDuration(t, time.Now(), cp.Timestamp, 2*time.Second)
	_, err = engine.PayloadAs[engine.EscalationPayload](cp)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	raw := cp
	raw.Payload = engine.RawPayload{Kind: kindNote, JSON: []byte(`{"text":"hi"}`)}
	p, err := engine.PayloadAs[notePayload](raw)
	require.NoError(t, err)
	require.Equal(t, "hi", p.Text)
	raw.Kind = engine.KindEscalation
	raw.Payload = engine.RawPayload{Kind: engine.KindEscalation, JSON: []byte(`{"step":"s"}`)}
	_, err = engine.PayloadAs[notePayload](raw)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "a stored escalation must not decode as a note")
}
