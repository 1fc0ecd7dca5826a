package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/store"
	"quarry/migrations"
)

// reviewPayload stands for the search workflow's review payload: a payload
// that lists papers (the store's paperLister).
type reviewPayload struct {
	Papers []string `json:"papers"`
}

func (reviewPayload) CheckpointKind() engine.CheckpointKind { return "review" }
func (p reviewPayload) PaperIDs() []string                  { return p.Papers }

// seedRun creates run id with params and moves it to status; with papers,
// it stops at a review checkpoint showing them (iteration it).
func seedRun(t *testing.T, st *store.Store, id string, at time.Time, params engine.Params, status engine.Status, it int, papers ...string) engine.Run {
	t.Helper()
	ctx := context.Background()
	r := engine.Run{ID: id, Workflow: "search", Params: params, Status: engine.StatusPending, Iteration: 1, CreatedAt: at, UpdatedAt: at}
	require.NoError(t, st.CreateRun(ctx, r))
	next := r
	next.Status, next.Iteration = status, it
	c := engine.Commit{Run: next, From: r.Status}
	if len(papers) > 0 {
		cp := engine.Checkpoint{ID: fmt.Sprintf("%s-cp%d", id, it), RunID: id, Step: "review", Kind: "review",
			Payload: reviewPayload{Papers: papers}, Iteration: it, Timestamp: at}
		c.NewCheckpoint = &cp
		c.Run.CheckpointID = cp.ID
	}
	got, err := st.Commit(ctx, c)
	require.NoError(t, err)
	return got
}

func openRuns(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.OpenForTest(t, context.Background(), filepath.Join(t.TempDir(), "q.db"), store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func runIDs(rs []store.RunListItem) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestListRuns: newest first, pages that add up to the total, a status
// filter, a case-insensitive substring search of the question in which
// LIKE's wildcards are plain characters, and the paper count.
func TestListRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openRuns(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	questions := []string{"Sleep loss and cognition", "Raft consensus", "sleep in 50% of nights", "Prospect theory", "SLEEP_SPINDLES"}
	statuses := []engine.Status{engine.StatusCompleted, engine.StatusWaiting, engine.StatusFailed, engine.StatusWaiting, engine.StatusRunning}
	for i, q := range questions {
		var papers []string
		if statuses[i] == engine.StatusWaiting {
			papers = []string{"doi:10.1/a", "doi:10.1/b" + fmt.Sprint(i)}
		}
		seedRun(t, st, fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Hour), engine.Params{"question": q}, statuses[i], 1, papers...)
	}
	list := func(f store.RunFilter) store.RunList {
		t.Helper()
		f.TextParam = "question"
		if f.Limit == 0 {
			f.Limit = 25
		}
		got, err := st.ListRuns(ctx, f)
		require.NoError(t, err)
		return got
	}

	all := list(store.RunFilter{})
	require.Equal(t, 5, all.Total)
	require.Equal(t, []string{"r4", "r3", "r2", "r1", "r0"}, runIDs(all.Runs), "newest first")
	require.Equal(t, "SLEEP_SPINDLES", all.Runs[0].Text)
	require.Equal(t, t0.Add(4*time.Hour), all.Runs[0].CreatedAt)
	require.Equal(t, 2, all.Runs[1].Papers, "r3 showed two papers")
	require.Equal(t, 0, all.Runs[0].Papers)

	p1, p2, p3 := list(store.RunFilter{Limit: 2}), list(store.RunFilter{Limit: 2, Offset: 2}), list(store.RunFilter{Limit: 2, Offset: 4})
	require.Equal(t, []string{"r4", "r3"}, runIDs(p1.Runs))
	require.Equal(t, []string{"r2", "r1"}, runIDs(p2.Runs))
	require.Equal(t, []string{"r0"}, runIDs(p3.Runs))
	require.Equal(t, 5, p3.Total)
	require.Empty(t, list(store.RunFilter{Limit: 2, Offset: 6}).Runs, "past the end")

	require.Equal(t, []string{"r3", "r1"}, runIDs(list(store.RunFilter{Status: engine.StatusWaiting}).Runs))
	require.Equal(t, []string{"r4", "r2", "r0"}, runIDs(list(store.RunFilter{Text: "sleep"}).Runs), "case-insensitive")
	require.Equal(t, []string{"r2"}, runIDs(list(store.RunFilter{Text: "50%"}).Runs), "% is a character")
	require.Equal(t, []string{"r4"}, runIDs(list(store.RunFilter{Text: "p_s"}).Runs), "_ is a character")
	require.Empty(t, list(store.RunFilter{Text: "sleep", Status: engine.StatusWaiting}).Runs)
	got := list(store.RunFilter{Text: "  THEORY "})
	require.Equal(t, 1, got.Total)
	require.Equal(t, []string{"r3"}, runIDs(got.Runs))

	_, err := st.ListRuns(ctx, store.RunFilter{TextParam: "question", Limit: 0})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	_, err = st.ListRuns(ctx, store.RunFilter{TextParam: `q") OR 1 --`, Limit: 5})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

// TestPaperRuns: a review checkpoint records the papers it shows, so a
// paper lists the runs that showed it, newest first, with its current mark
// in each and the first iteration that showed it.
func TestPaperRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openRuns(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	seedRun(t, st, "old", t0, engine.Params{"question": "first"}, engine.StatusWaiting, 1, "doi:10.1093/sleep/26.2.117", "x")
	seedRun(t, st, "new", t0.Add(time.Hour), engine.Params{"question": "second"}, engine.StatusWaiting, 2, "doi:10.1093/sleep/26.2.117")
	seedRun(t, st, "none", t0.Add(2*time.Hour), engine.Params{"question": "third"}, engine.StatusWaiting, 1, "y")

	_, err := st.SaveMarks(ctx, "old", "old-cp1", []research.Mark{{PaperID: "doi:10.1093/sleep/26.2.117", Mark: "unsure", By: "Ada"}})
	require.NoError(t, err)
	_, err = st.SaveMarks(ctx, "old", "old-cp1", []research.Mark{{PaperID: "doi:10.1093/sleep/26.2.117", Mark: "relevant", Note: "key paper", By: "Bob"}})
	require.NoError(t, err)

	runs, total, err := st.PaperRuns(ctx, store.PaperRunsFilter{PaperID: "doi:10.1093/sleep/26.2.117", TextParam: "question", Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 2, total)
	require.Len(t, runs, 2)
	require.Equal(t, "new", runs[0].ID)
	require.Equal(t, "second", runs[0].Text)
	require.Equal(t, 2, runs[0].FirstIteration)
	require.Nil(t, runs[0].Mark)
	require.Equal(t, "old", runs[1].ID)
	require.NotNil(t, runs[1].Mark)
	require.Equal(t, "relevant", runs[1].Mark.Mark, "the newest mark")
	require.Equal(t, "key paper", runs[1].Mark.Note)
	require.Equal(t, "Bob", runs[1].Mark.By)
	require.Equal(t, 2, runs[1].Papers)

	runs, total, err = st.PaperRuns(ctx, store.PaperRunsFilter{PaperID: "doi:10.1093/sleep/26.2.117", TextParam: "question", Limit: 1})
	require.NoError(t, err)
	require.Equal(t, 2, total, "the total counts past the limit")
	require.Len(t, runs, 1)

	runs, total, err = st.PaperRuns(ctx, store.PaperRunsFilter{PaperID: "nowhere", TextParam: "question", Limit: 10})
	require.NoError(t, err)
	require.Zero(t, total)
	require.Empty(t, runs)
}

// oldReview is a review payload as a binary from before run_papers stored
// it: the search workflow's JSON shape, recorded without its papers.
type oldReview struct {
	Collection struct {
		Papers []struct {
			ID string `json:"id"`
		} `json:"papers"`
	} `json:"collection"`
}

func (oldReview) CheckpointKind() engine.CheckpointKind { return "result_review" }

// TestRunPapersBackfill: migration 00010 fills run_papers from the review
// checkpoints runs already have, so a paper's page lists runs reviewed
// before the upgrade, with the first iteration that showed each paper.
func TestRunPapersBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	old := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations.FS, ".")
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() < "00010_run_papers" {
			data, err := migrations.FS.ReadFile(e.Name())
			require.NoError(t, err)
			old[e.Name()] = &fstest.MapFile{Data: data}
		}
	}
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF", Migrations: old})
	require.NoError(t, err)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	r := engine.Run{ID: "r1", Workflow: "search", Params: engine.Params{"question": "sleep"}, Status: engine.StatusPending, Iteration: 1, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, st.CreateRun(ctx, r))
	for it := 1; it <= 2; it++ {
		var p oldReview
		for _, id := range []string{"doi:10.1/shared", fmt.Sprintf("only-%d", it)} {
			p.Collection.Papers = append(p.Collection.Papers, struct {
				ID string `json:"id"`
			}{id})
		}
		cp := engine.Checkpoint{ID: fmt.Sprint("cp", it), RunID: "r1", Step: "review", Kind: "result_review", Payload: p, Iteration: it,
			Timestamp: t0.Add(time.Duration(it) * time.Minute), Status: engine.CheckpointExpired}
		next := r
		next.Iteration = it
		r, err = st.Commit(ctx, engine.Commit{Run: next, From: r.Status, NewCheckpoint: &cp})
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())

	st, err = store.OpenForTest(t, ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer st.Close()
	for id, first := range map[string]int{"doi:10.1/shared": 1, "only-1": 1, "only-2": 2} {
		runs, total, err := st.PaperRuns(ctx, store.PaperRunsFilter{PaperID: id, TextParam: "question", Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 1, total, id)
		require.Equal(t, "r1", runs[0].ID)
		require.Equal(t, first, runs[0].FirstIteration, id)
		require.Equal(t, 3, runs[0].Papers)
	}
}

// TestMarkResolutionsRoundTrip: a dual-screening resolution is stored as
// one (research.Mark.Resolves) and read back as one, apart from the
// reviewers' own marks.
func TestMarkResolutionsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openRuns(t)
	seedRun(t, st, "r", time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC), engine.Params{"question": "q"}, engine.StatusWaiting, 1, "p")
	_, err := st.SaveMarks(ctx, "r", "r-cp1", []research.Mark{{PaperID: "p", Mark: "relevant", By: "Ada"}, {PaperID: "p", Mark: "irrelevant", By: "Bob"}})
	require.NoError(t, err)
	_, err = st.SaveMarks(ctx, "r", "r-cp1", []research.Mark{{PaperID: "p", Mark: "relevant", By: "Cy", Resolves: true}})
	require.NoError(t, err)
	events, err := st.MarkEvents(ctx, "r")
	require.NoError(t, err)
	require.Len(t, events, 3)
	require.Equal(t, []bool{false, false, true}, []bool{events[0].Resolves, events[1].Resolves, events[2].Resolves})
	got := research.Counting(research.ScreeningPlan{Reviewers: 2}, events)
	require.Len(t, got, 1)
	require.Equal(t, "Cy", got[0].By)
}

// TestPaperRunsOfProjectsAndBlind: a paper lists only the runs of the
// projects asked for, and no mark of a blind-screened run (several
// screeners a paper), whose latest mark may be a reviewer's of a paper
// still being screened.
func TestPaperRunsOfProjectsAndBlind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openRuns(t)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	seedRun(t, st, "single", t0, engine.Params{"question": "one"}, engine.StatusWaiting, 1, "p")
	seedRun(t, st, "dual", t0.Add(time.Hour), engine.Params{"question": "two", "screeners": 2}, engine.StatusWaiting, 1, "p")
	for _, run := range []string{"single", "dual"} {
		_, err := st.SaveMarks(ctx, run, run+"-cp1", []research.Mark{{PaperID: "p", Mark: "relevant", By: "Ada"}})
		require.NoError(t, err)
	}
	list := func(f store.PaperRunsFilter) map[string]*research.Mark {
		f.PaperID, f.TextParam, f.Limit = "p", "question", 10
		runs, total, err := st.PaperRuns(ctx, f)
		require.NoError(t, err)
		require.Len(t, runs, total)
		out := map[string]*research.Mark{}
		for _, r := range runs {
			out[r.ID] = r.Mark
		}
		return out
	}
	all := list(store.PaperRunsFilter{BlindParam: "screeners"})
	require.Len(t, all, 2)
	require.NotNil(t, all["single"])
	require.Nil(t, all["dual"], "a blind run's mark is not shown")
	require.NotNil(t, list(store.PaperRunsFilter{})["dual"], "without a blind parameter every mark is shown")
	require.Empty(t, list(store.PaperRunsFilter{Projects: []string{}}), "no project, no run")
	require.Empty(t, list(store.PaperRunsFilter{Projects: []string{"other"}}), "another project's runs are not listed")
	require.Len(t, list(store.PaperRunsFilter{Projects: []string{""}}), 2, "the runs of no project")
}
