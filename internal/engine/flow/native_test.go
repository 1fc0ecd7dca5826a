package flow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
)

const nativeSrc = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: native}
params:
  - {name: max_iterations, type: int, default: 2, min: 1}
stages:
  - {id: work, type: skill, title: Work, skill: count}
  - id: ask
    type: gate
    title: Ask
    form: ask
    options:
      - {label: approve, next: complete}
      - {label: iterate, next: work}
    on_fail: {max_iterations: "{{ params.max_iterations }}", then: {goto: last}}
  - {id: last, type: skill, skill: count}
`

type askPayload struct {
	N int `json:"n"`
}

func (askPayload) CheckpointKind() engine.CheckpointKind { return "ask" }

// nativeOptions registers count, a native step adding one to the state's
// "n", and ask, a form gate whose reject iterates.
func nativeOptions() flow.Options {
	count := func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		n, _, err := engine.Get[int](sc.State, "n")
		if err != nil {
			return "", nil, err
		}
		u := engine.Update{}
		return engine.OK, u, u.Set("n", n+1)
	}
	ask := &engine.Gate{
		Kind: "ask",
		Payload: func(ctx context.Context, sc engine.StepContext) (engine.Payload, error) {
			n, _, err := engine.Get[int](sc.State, "n")
			return askPayload{N: n}, err
		},
		Apply: func(ctx context.Context, sc engine.StepContext, cp engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			if d.Action == engine.Reject {
				return engine.Iterate, nil, nil
			}
			return engine.OK, nil, nil
		},
	}
	return flow.Options{
		Natives: flow.Natives{"count": count},
		Forms:   flow.Forms{"ask": {Gate: ask, Outcomes: map[string]engine.Outcome{"approve": engine.OK, "iterate": engine.Iterate}}},
	}
}

func compileNative(t *testing.T, src string, o flow.Options) (*engine.Workflow, error) {
	t.Helper()
	d, err := def.Load("test.yaml", []byte(src), def.Options{Skills: o.Natives.Names(), Forms: o.Forms.Outcomes()})
	require.NoError(t, err)
	return flow.CompileWith(d, o)
}

// TestNativeStepsAndFormGates: a native step is the registered handler
// itself (its update is the run's state, with no outputs or counters),
// not skippable; a form gate is the registered gate, its options route
// its outcomes, its iterate is the engine's iteration bounded by
// max_iterations (the param's default, or the run's own), and past the
// bound iterate goes to on_fail.then.goto.
func TestNativeStepsAndFormGates(t *testing.T) {
	t.Parallel()
	o := nativeOptions()
	wf, err := compileNative(t, nativeSrc, o)
	require.NoError(t, err)
	require.Equal(t, 2, wf.MaxIterations)
	work, _ := wf.Step("work")
	require.Equal(t, "Work", work.Title)
	require.Equal(t, engine.Next{engine.OK: "ask"}, work.Next)
	require.False(t, work.Skippable())
	ask, _ := wf.Step("ask")
	require.Equal(t, "Ask", ask.Title)
	require.Same(t, o.Forms["ask"].Gate, ask.Gate)
	require.Equal(t, engine.Next{engine.OK: engine.End, engine.Iterate: "work"}, ask.Next)
	require.Equal(t, "last", ask.Exit)

	reject := engine.Decision{Action: engine.Reject, DecidedBy: "t"}
	b := setup(t, "", engine.Scripted(reject, reject, reject), wf)
	r := b.run(t, "native", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"work:ok", "ask:iterate", "work:ok", "ask:iterate", "last:ok"}, b.steps(t, r.ID))
	n, _, err := engine.Get[int](r.State, "n")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	outs, err := flow.Outputs(r.State)
	require.NoError(t, err)
	require.Empty(t, outs)

	// The run's own max_iterations bounds it instead.
	b = setup(t, "", engine.Scripted(reject), wf)
	r = b.run(t, "native", map[string]any{"max_iterations": 1})
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"work:ok", "ask:iterate", "last:ok"}, b.steps(t, r.ID))
}

// TestNativeCompileErrors: what a native stage or a form gate cannot have
// is reported at the stage, as file:line:col.
func TestNativeCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		o    func(flow.Options) flow.Options
		want string
	}{
		{"WithOnANative", strings.Replace(nativeSrc, "{id: last, type: skill, skill: count}", "{id: last, type: skill, skill: count, with: {x: 1}}", 1), nil,
			`test.yaml:16:5: stage "last": skill "count" works on the run's state: with and outputs do not apply`},
		{"FormNotGiven", nativeSrc, func(o flow.Options) flow.Options { o.Forms = nil; return o },
			`test.yaml:8:5: stage "ask": form "ask" is not registered`},
		{"BothSkillAndNative", nativeSrc, func(o flow.Options) flow.Options {
			o.Skills = flow.Skills{"count": func(context.Context, flow.Input) (map[string]any, error) { return nil, nil }}
			return o
		}, `test.yaml:7:5: stage "work": skill "count" is registered both as a skill and as a native step`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := nativeOptions()
			d, err := def.Load("test.yaml", []byte(tt.src), def.Options{Skills: o.Natives.Names(), Forms: o.Forms.Outcomes()})
			require.NoError(t, err)
			if tt.o != nil {
				o = tt.o(o)
			}
			_, err = flow.CompileWith(d, o)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
			var errs def.Errors
			require.ErrorAs(t, err, &errs)
			require.Equal(t, tt.want, errs[0].Error())
		})
	}
}
