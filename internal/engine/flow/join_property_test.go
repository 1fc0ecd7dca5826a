package flow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// joinCase is one random parallel stage: each branch's fate (ok, fails for
// good, or fails once then succeeds on its retry), the join, and which
// reject targets exist.
type joinCase struct {
	fates     []string
	join      string
	anyReject bool
	allReject bool
}

func (jc joinCase) yaml(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%smetadata: {name: %s}\nstages:\n  - id: fan\n    type: parallel\n    join: %s\n    branches:\n", head, name, jc.join)
	for i, f := range jc.fates {
		fmt.Fprintf(&b, "      - {id: b%d, type: skill, skill: work, with: {fate: %s}, on_error: {retry: 1, backoff: 1ms, then: fail}}\n", i, f)
	}
	b.WriteString("    on_complete: passed\n")
	if jc.anyReject {
		b.WriteString("    on_any_reject: some_failed\n")
	}
	if jc.allReject {
		b.WriteString("    on_all_reject: all_failed\n")
	}
	b.WriteString("  - {id: passed, type: set, set: {end: \"'passed'\"}, on_complete: complete}\n")
	if jc.anyReject {
		b.WriteString("  - {id: some_failed, type: set, set: {end: \"'some_failed'\"}, on_complete: complete}\n")
	}
	if jc.allReject {
		b.WriteString("  - {id: all_failed, type: set, set: {end: \"'all_failed'\"}, on_complete: complete}\n")
	}
	return b.String()
}

// expected is where a run ends once every branch has run to its end,
// written from the format's reference (docs/workflows.md), not from the
// engine's code: successes ≥ need → on_complete; all failed and
// on_all_reject → there; else on_any_reject; else the run fails.
func (jc joinCase) expected() string {
	ok := 0
	for _, f := range jc.fates {
		if f != "fail" {
			ok++
		}
	}
	need := len(jc.fates)
	switch jc.join {
	case "all":
	case "any":
		need = 1
	default:
		fmt.Sscan(jc.join, &need)
	}
	switch {
	case ok >= need:
		return "completed passed"
	case ok == 0 && jc.allReject:
		return "completed all_failed"
	case jc.anyReject:
		return "completed some_failed"
	}
	return "failed <nil>"
}

// crashable is the branches' skill: it does what the branch's fate says,
// unless a crash is armed, in which case it blocks until its process
// dies (its context is canceled) — a crash in the middle of a stage.
type crashable struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
}

func (c *crashable) skill(ctx context.Context, in flow.Input) (map[string]any, error) {
	c.mu.Lock()
	armed := c.armed
	c.armed = false
	c.mu.Unlock()
	if armed {
		c.entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	switch in.With["fate"] {
	case "fail":
		return nil, errors.New("this branch fails")
	case "flaky":
		if in.Attempt == 1 {
			return nil, errors.New("first attempt fails")
		}
	}
	return map[string]any{"fate": in.With["fate"], "attempt": in.Attempt}, nil
}

// Random branch outcomes and crash points under all, any and N: no branch
// is lost or run to an end twice, and the run ends where an uninterrupted
// run of the same stage ends.
func TestJoinPropertyCrashesNeverChangeTheOutcome(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), storetest.DSN(t, &pg, t.TempDir()+"/join.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		jc := joinCase{
			fates:     rapid.SliceOfN(rapid.SampledFrom([]string{"ok", "fail", "flaky"}), 1, 5).Draw(rt, "fates"),
			anyReject: rapid.Bool().Draw(rt, "on_any_reject"),
			allReject: rapid.Bool().Draw(rt, "on_all_reject"),
		}
		switch rapid.IntRange(0, 2).Draw(rt, "join kind") {
		case 0:
			jc.join = "all"
		case 1:
			jc.join = "any"
		default:
			jc.join = fmt.Sprint(rapid.IntRange(1, len(jc.fates)).Draw(rt, "N"))
		}
		name := fmt.Sprintf("join%d", n)
		skill := &crashable{entered: make(chan struct{}, 1)}
		d, err := def.Load(name+".yaml", []byte(jc.yaml(name)), def.Options{Skills: []string{"work"}})
		require.NoError(rt, err)
		wf, err := flow.Compile(d, flow.Skills{"work": skill.skill})
		require.NoError(rt, err)
		reg, err := engine.NewRegistry(wf)
		require.NoError(rt, err)
		newEngine := func() *engine.Engine {
			e, err := engine.New(engine.Config{Store: st, Registry: reg})
			require.NoError(rt, err)
			return e
		}
		ctx := context.Background()

		// The uninterrupted run: every branch in order, each to its end.
		eng := newEngine()
		ref, err := eng.Start(ctx, name, nil)
		require.NoError(rt, err)
		want := drive(rt, eng, st, ref.ID)
		require.Equal(rt, jc.expected(), want, "the uninterrupted run ends where the join's rule says")

		// The interrupted run: branches advanced in a random order, some
		// killed mid-stage (a new engine takes over, as after a restart),
		// the run's join attempted at random moments.
		eng = newEngine()
		run, err := eng.Start(ctx, name, nil)
		require.NoError(rt, err)
		require.NoError(rt, eng.Advance(ctx, run.ID))
		rows, err := st.Branches(ctx, run.ID, "fan")
		require.NoError(rt, err)
		require.Len(rt, rows, len(jc.fates), "every branch has its row")
		for step := 0; step < 3*len(rows); step++ {
			b := rows[rapid.IntRange(0, len(rows)-1).Draw(rt, "branch")]
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0: // the process dies in the middle of the branch's stage
				skill.mu.Lock()
				skill.armed = true
				skill.mu.Unlock()
				dying, kill := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() { done <- eng.AdvanceBranch(dying, run.ID, b.Fan, b.ID) }()
				select {
				case <-skill.entered:
					kill()
					<-done
				case err := <-done: // the branch had ended: nothing ran
					kill()
					require.NoError(rt, err)
					skill.mu.Lock()
					skill.armed = false
					skill.mu.Unlock()
				}
				eng = newEngine()
			case 1:
				require.NoError(rt, eng.Advance(ctx, run.ID))
			default:
				require.NoError(rt, eng.AdvanceBranch(ctx, run.ID, b.Fan, b.ID))
			}
		}
		got := drive(rt, eng, st, run.ID)
		require.Equal(rt, want, got, "fates %v join %s", jc.fates, jc.join)

		after, err := st.Branches(ctx, run.ID, "fan")
		require.NoError(rt, err)
		require.Len(rt, after, len(jc.fates), "no branch lost or added")
		ends, err := st.BranchSteps(ctx, run.ID)
		require.NoError(rt, err)
		finished := map[string]int{}
		for _, s := range ends {
			if s.Outcome == "ok" || s.Attempt == 2 {
				finished[s.Branch]++
			}
		}
		for id, k := range finished {
			require.LessOrEqual(rt, k, 1, "branch %s ended %d times", id, k)
		}
	})
}

// drive runs a run to its end the way the queue would (each open branch's
// job, then the run's join), and returns where it ended.
func drive(t require.TestingT, eng *engine.Engine, st *store.Store, id string) string {
	ctx := context.Background()
	for range 20 {
		require.NoError(t, eng.Advance(ctx, id))
		r, err := st.Run(ctx, id)
		require.NoError(t, err)
		if r.IsComplete() {
			cx, err := flow.Context(r.State)
			require.NoError(t, err)
			return fmt.Sprintf("%s %v", r.Status, cx["end"])
		}
		rows, err := st.Branches(ctx, id, "fan")
		require.NoError(t, err)
		for _, b := range rows {
			for b.Status.Open() {
				require.NoError(t, eng.AdvanceBranch(ctx, id, b.Fan, b.ID))
				b, err = st.Branch(ctx, id, b.Fan, b.ID)
				require.NoError(t, err)
			}
		}
	}
	return "never ended"
}
