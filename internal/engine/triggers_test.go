package engine_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
)

const weeklyYAML = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: weekly}
params: [{name: q, type: string, required: true}]
trigger: {schedule: "0 6 * * MON", params: {q: "sqlite durability"}}
stages:
  - {id: a, type: set, set: {seen: params.q}}
`

// scheduled opens the database at path (a process starting) with an
// engine running the weekly workflow.
func scheduled(t *testing.T, path string) (*store.Store, *engine.Scheduler) {
	t.Helper()
	d, err := def.Load("weekly.yaml", []byte(weeklyYAML), def.Options{})
	require.NoError(t, err)
	wf, err := flow.CompileWith(d, flow.Options{})
	require.NoError(t, err)
	b := setup(t, setupOpts{path: path, wfs: []*engine.Workflow{wf}})
	s, err := b.eng.Scheduler()
	require.NoError(t, err)
	require.Equal(t, 1, s.Len())
	return b.store, s
}

func countRuns(t *testing.T, st *store.Store) int {
	t.Helper()
	l, err := st.ListRuns(context.Background(), store.RunFilter{Limit: 10, TextParam: "q"})
	require.NoError(t, err)
	return l.Total
}

// TestScheduleFiresOncePerSlot: a schedule fires each slot once, whether
// ticked twice, after a restart on the same database, or by two
// processes at once; after downtime it fires once for the missed slots
// and says how many it missed.
func TestScheduleFiresOncePerSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "quarry.db")
	mon := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday
	require.Equal(t, time.Monday, mon.Weekday())
	slot := mon.Add(6 * time.Hour)

	st, s := scheduled(t, path)
	fired, err := s.Tick(ctx, mon.Add(5*time.Hour))
	require.NoError(t, err)
	require.Empty(t, fired, "first sight: due at the next slot, not now")
	fired, err = s.Tick(ctx, slot.Add(10*time.Second))
	require.NoError(t, err)
	require.Len(t, fired, 1)
	require.Equal(t, slot, *fired[0].Due)
	require.Zero(t, fired[0].Missed)
	require.Empty(t, fired[0].Error)
	run, err := st.Run(ctx, fired[0].RunID)
	require.NoError(t, err)
	require.Equal(t, "sqlite durability", run.Params["q"])
	fired, err = s.Tick(ctx, slot.Add(20*time.Second))
	require.NoError(t, err)
	require.Empty(t, fired, "a second tick in the same slot")
	require.Equal(t, 1, countRuns(t, st))

	// A restart: the store closes and opens again on the same file.
	require.NoError(t, st.Close())
	st, s = scheduled(t, path)
	fired, err = s.Tick(ctx, slot.Add(30*time.Second))
	require.NoError(t, err)
	require.Empty(t, fired, "the slot fired before the restart")
	require.Equal(t, 1, countRuns(t, st))

	// Two processes on one database tick at once, at the next slot.
	st2, s2 := scheduled(t, path)
	next := slot.AddDate(0, 0, 7)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var all []engine.Firing
	for _, sc := range []*engine.Scheduler{s, s2, s, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := sc.Tick(ctx, next.Add(time.Second))
			require.NoError(t, err)
			mu.Lock()
			all = append(all, f...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Len(t, all, 1, "four concurrent ticks, two processes: one firing")
	require.Equal(t, 2, countRuns(t, st))
	require.Equal(t, 2, countRuns(t, st2))

	// Down for three weeks: the slot due fires once, late, and the two
	// slots after it are counted as missed; then the next future slot.
	back := next.AddDate(0, 0, 21).Add(time.Hour)
	fired, err = s2.Tick(ctx, back)
	require.NoError(t, err)
	require.Len(t, fired, 1)
	require.Equal(t, next.AddDate(0, 0, 7), *fired[0].Due)
	require.Equal(t, 2, fired[0].Missed)
	fired, err = s.Tick(ctx, back.Add(time.Minute))
	require.NoError(t, err)
	require.Empty(t, fired)
	states, err := st.TriggerStates(ctx, "weekly")
	require.NoError(t, err)
	require.Equal(t, next.AddDate(0, 0, 28), *states["schedule"].NextDue)
	require.Equal(t, 3, countRuns(t, st))

	firings, err := st.Firings(ctx, "weekly", 10)
	require.NoError(t, err)
	require.Len(t, firings, 3)
	require.Equal(t, 2, firings[0].Missed)
	for _, f := range firings {
		require.NotEmpty(t, f.RunID)
		require.Equal(t, engine.TriggerSchedule, f.Kind)
	}
}

// TestScheduleSlotAndRunCommitTogether: when the run a slot starts cannot
// be stored, the slot is not taken and no firing is recorded, so the next
// tick fires it: a failure neither skips the slot nor leaves half of it.
func TestScheduleSlotAndRunCommitTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, s := scheduled(t, filepath.Join(t.TempDir(), "quarry.db"))
	mon := time.Date(2026, 11, 2, 5, 0, 0, 0, time.UTC)
	_, err := s.Tick(ctx, mon)
	require.NoError(t, err)
	due := mon.Add(time.Hour)
	tr := engine.Trigger{Workflow: "weekly", Name: "schedule", Kind: engine.TriggerSchedule, Schedule: "0 6 * * MON"}
	got, err := st.TriggerDue(ctx, tr, time.Time{})
	require.NoError(t, err)
	require.Equal(t, due, got)

	taken := engine.Run{ID: "taken", Workflow: "weekly", Status: engine.StatusPending, Step: "a", CreatedAt: mon, UpdatedAt: mon}
	require.NoError(t, st.CreateRun(ctx, taken))
	ok, err := st.FireSchedule(ctx, engine.Firing{Workflow: "weekly", Trigger: "schedule", Kind: engine.TriggerSchedule, At: due, Due: &due, RunID: "taken"},
		due.AddDate(0, 0, 7), &taken)
	require.Error(t, err, "the run's id exists: its insert fails")
	require.False(t, ok)
	got, err = st.TriggerDue(ctx, tr, time.Time{})
	require.NoError(t, err)
	require.Equal(t, due, got, "the slot is still due")
	firings, err := st.Firings(ctx, "weekly", 10)
	require.NoError(t, err)
	require.Empty(t, firings)

	fired, err := s.Tick(ctx, due.Add(time.Second))
	require.NoError(t, err)
	require.Len(t, fired, 1, "the next tick fires the slot")
}
