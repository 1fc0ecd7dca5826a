package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

const kindFirst engine.CheckpointKind = "first_gate"

type firstPayload struct{}

func (firstPayload) CheckpointKind() engine.CheckpointKind { return kindFirst }

// twoGateLoop has the search pipeline's shape: work → first gate (reject
// skips to the next iteration) → more work → second gate (approve ends,
// edit or reject iterate).
func twoGateLoop(maxIter int) *engine.Workflow {
	first := &engine.Gate{
		Kind:    kindFirst,
		Payload: func(context.Context, engine.StepContext) (engine.Payload, error) { return firstPayload{}, nil },
		Apply: func(_ context.Context, _ engine.StepContext, _ engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			if d.Action == engine.Reject {
				return engine.Iterate, nil, nil
			}
			return engine.OK, nil, nil
		},
	}
	return &engine.Workflow{
		Name: "two", Entry: "build", MaxIterations: maxIter,
		Steps: []engine.StepDef{
			{ID: "build", Handler: appendStep(nil), Next: engine.Next{engine.OK: "confirm"},
				Params: []engine.Param{{Name: engine.MaxIterationsParam, Type: engine.ParamInt, Min: engine.Bound(1), Max: engine.Bound(20)}}},
			{ID: "confirm", Gate: first, Next: engine.Next{engine.OK: "search", engine.Iterate: "build"}, Exit: engine.End},
			{ID: "search", Handler: appendStep(nil), Next: engine.Next{engine.OK: "review"}},
			{ID: "review", Gate: reviewGate(kindNote), Next: engine.Next{engine.OK: engine.End, engine.Iterate: "build"}},
		},
	}
}

func TestPropKindPayloadConsistency(t *testing.T) {
	t.Parallel()
	payloads := []engine.Payload{notePayload{}, firstPayload{}, engine.EscalationPayload{}}
	rapid.Check(t, func(t *rapid.T) {
		kind := engine.CheckpointKind(rapid.SampledFrom([]string{"note", "first_gate", "escalation", "strategy_confirmation", "result_review", ""}).Draw(t, "kind"))
		p := rapid.SampledFrom(payloads).Draw(t, "payload")
		cp, err := engine.NewCheckpoint(kind, p, "run", 1, time.Time{})
		if kind == p.CheckpointKind() && kind != "" {
			require.NoError(t, err)
			require.Equal(t, kind, cp.Kind)
			require.Equal(t, kind, cp.Payload.CheckpointKind())
		} else {
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
		}
	})
}

func TestPropTimestampsAreRFC3339(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		sec := rapid.Int64Range(-62135596800+86400, 253402300799-86400).Draw(t, "sec") // years 0001–9999
		nsec := rapid.Int64Range(0, 999999999).Draw(t, "nsec")
		zone := time.FixedZone("z", rapid.IntRange(-14*3600, 14*3600).Draw(t, "offset"))
		cp, err := engine.NewCheckpoint(kindNote, notePayload{}, "r", 1, time.Unix(sec, nsec).In(zone))
		require.NoError(t, err)
		s := cp.TimestampRFC3339()
		back, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err, s)
		require.True(t, back.Equal(cp.Timestamp), "%s != %s", back, cp.Timestamp)
		require.Equal(t, time.UTC, cp.Timestamp.Location())
	})
}

// TestPropLoopInvariants drives random decisions (by a programmatic handler
// or by people through Decide) and checks, for every run: it completes;
// iterations never exceed max_iterations and grow by exactly one per loop;
// within each iteration the first gate comes before the second; and every
// action had the behaviour defined for it.
func TestPropLoopInvariants(t *testing.T) {
	t.Parallel()
	actions := engine.DecisionActions()
	pb := setup(t, setupOpts{handler: engine.Pending(), wfs: []*engine.Workflow{twoGateLoop(5)}})
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		maxIter := rapid.IntRange(1, 5).Draw(t, "max_iterations")
		script := rapid.SliceOfN(rapid.SampledFrom(actions), 0, 14).Draw(t, "actions")
		human := rapid.Bool().Draw(t, "human")
		next := func() engine.DecisionAction {
			if len(script) == 0 {
				return engine.Approve
			}
			a := script[0]
			script = script[1:]
			return a
		}
		b := pb
		if !human {
			reg, err := engine.NewRegistry(twoGateLoop(5))
			require.NoError(t, err)
			eng, err := engine.New(engine.Config{Store: pb.store, Registry: reg, Handler: engine.HandlerFunc(
				func(context.Context, engine.Checkpoint) (engine.Decision, error) {
					return engine.Decision{Action: next(), DecidedBy: "bot", RevisedData: []byte(`{}`)}, nil
				})})
			require.NoError(t, err)
			b = &bundle{store: pb.store, eng: eng}
		}
		r, err := b.eng.Start(ctx, "two", map[string]any{"max_iterations": maxIter})
		require.NoError(t, err)
		require.NoError(t, b.eng.Advance(ctx, r.ID))
		for guard := 0; ; guard++ {
			require.Less(t, guard, 100, "run never completed")
			r, err = b.store.Run(ctx, r.ID)
			require.NoError(t, err)
			if r.Status != engine.StatusWaiting {
				break
			}
			require.True(t, human)
			require.NoError(t, b.eng.Decide(ctx, r.ID, r.CheckpointID, engine.Decision{Action: next(), DecidedBy: "ada"}))
			require.NoError(t, b.eng.Advance(ctx, r.ID))
		}
		require.Equal(t, engine.StatusCompleted, r.Status)
		require.True(t, r.IsComplete())
		require.Empty(t, r.CheckpointID)
		require.LessOrEqual(t, r.Iteration, maxIter)

		cps, err := b.store.Checkpoints(ctx, r.ID)
		require.NoError(t, err)
		steps, err := b.store.StepRuns(ctx, r.ID)
		require.NoError(t, err)
		// Iterations seen by checkpoints run 1, 2, … r.Iteration without gaps.
		iter := 1
		lastKind := engine.CheckpointKind("")
		for i, c := range cps {
			require.NotNil(t, c.Decision, "checkpoint %d undecided", i)
			require.Equal(t, engine.CheckpointDecided, c.Checkpoint.Status)
			if c.Checkpoint.Iteration != iter {
				require.Equal(t, iter+1, c.Checkpoint.Iteration, "iterations grow by exactly one")
				iter = c.Checkpoint.Iteration
				lastKind = ""
			}
			if c.Checkpoint.Kind == kindNote {
				require.Equal(t, kindFirst, lastKind, "the second gate follows the first within iteration %d", iter)
			} else {
				require.Equal(t, engine.CheckpointKind(""), lastKind, "the first gate opens iteration %d", iter)
			}
			lastKind = c.Checkpoint.Kind
		}
		require.Equal(t, r.Iteration, iter)
		// Every decision did what its action means.
		gateSteps := slices.DeleteFunc(slices.Clone(steps), func(s engine.StepRecord) bool {
			return s.Step != "confirm" && s.Step != "review" || s.Outcome == "checkpoint"
		})
		require.Len(t, gateSteps, len(cps))
		for i, c := range cps {
			want := engine.OK
			switch {
			case c.Checkpoint.Kind == kindFirst && c.Decision.Action == engine.Reject,
				c.Checkpoint.Kind == kindNote && c.Decision.Action != engine.Approve:
				want = engine.Iterate
			}
			require.Equal(t, string(want), gateSteps[i].Outcome, "checkpoint %d (%s, %s)", i, c.Checkpoint.Kind, c.Decision.Action)
		}
		// The handler steps ran once per iteration they were reached in.
		builds := 0
		for _, s := range steps {
			if s.Step == "build" {
				builds++
				require.Equal(t, builds, s.Iteration)
			}
		}
		require.Equal(t, r.Iteration, builds)
	})
}
