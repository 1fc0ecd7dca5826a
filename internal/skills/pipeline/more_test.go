package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources"
	"quarry/internal/store"
)

// pagedPool is a sources.Counter over n papers that serves them page by
// page from req.Offset. While hold is set, a next page waits for it (or
// for its call's context), so a test can stop the process mid-fetch.
type pagedPool struct {
	name string
	n    int
	mu   *sync.Mutex
	hold *chan struct{}
	// entered is told each time a next page is asked.
	entered chan int
}

func (s pagedPool) Name() string { return s.name }

func (s pagedPool) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

func (s pagedPool) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if req.Offset > 0 {
		s.mu.Lock()
		hold := *s.hold
		s.mu.Unlock()
		select {
		case s.entered <- req.Offset:
		default:
		}
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return sources.Page{Total: sources.TotalUnknown}, ctx.Err()
			}
		}
	}
	var out []research.RawPaper
	for i := req.Offset; i < min(s.n, req.Offset+req.MaxResults); i++ {
		out = append(out, research.RawPaper{Title: fmt.Sprintf("Paged paper %02d from %s on sqlite durability", i, s.name), DOI: fmt.Sprintf("10.9/%s.%d", s.name, i), Year: 2000 + i})
	}
	return sources.Page{Papers: out, Total: s.n}, nil
}

// reviewOf returns the run's pending review checkpoint and its payload.
func reviewOf(t *testing.T, st *store.Store, runID string) (engine.Checkpoint, pipeline.ResultPayload) {
	t.Helper()
	ctx := context.Background()
	run, err := st.Run(ctx, runID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, run.Status)
	cp, _, err := st.Checkpoint(ctx, run.CheckpointID)
	require.NoError(t, err)
	require.Equal(t, pipeline.KindResultReview, cp.Kind)
	p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
	require.NoError(t, err)
	return cp, p
}

// TestShowMore is "Show more" at the review (issue 16, item 7) against the
// real store: two clicks at once fetch one page; a process stopped in the
// middle of the fetch loses nothing and, restarted, appends the page once;
// the new papers are deduplicated, scored and appended in a group of their
// own with the marks made before kept; the counts never show more than
// found; and once the sources have nothing more, asking again is refused.
func TestShowMore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	var hold chan struct{}
	src := pagedPool{name: "alpha", n: 12, mu: &sync.Mutex{}, hold: &hold, entered: make(chan int, 4)}
	sk, chain := fakeSkills(src)
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamStrategyCheckpoint: false})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	cp1, p1 := reviewOf(t, st, run.ID)
	require.Len(t, p1.Collection.Papers, 5)
	require.True(t, pipeline.HasMore(p1.Collection))
	require.Equal(t, "5 shown of 12 found", p1.Collection.Sources["alpha"].Found().String())
	marked := p1.Collection.Papers[0].ID
	_, err = st.SaveMarks(ctx, run.ID, cp1.ID, []research.Mark{{PaperID: marked, Mark: research.MarkRelevant, By: "ada"}})
	require.NoError(t, err)

	// Two clicks at once: one decision is recorded, the other is a conflict.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- eng.Decide(ctx, run.ID, cp1.ID, pipeline.ShowMoreDecision("ada", "")) }()
	}
	var codes []string
	for range 2 {
		codes = append(codes, fault.ErrorCode(<-errs))
	}
	require.ElementsMatch(t, []string{"", fault.EConflict}, codes)

	// The process stops while the next page is being fetched.
	hold = make(chan struct{})
	stop, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- eng.Advance(stop, run.ID) }()
	require.Equal(t, 5, <-src.entered)
	cancel()
	require.Error(t, <-done)
	mid, err := st.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusRunning, mid.Status)
	require.Equal(t, pipeline.StepMore, mid.Step, "the decision is committed; the fetch is not")

	// Restarted: a new engine over the same file resumes the fetch once.
	close(hold)
	eng = newEngine(t, st, wf, engine.Pending())
	n, err := eng.Recover(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, eng.Advance(ctx, run.ID))
	require.NoError(t, eng.Advance(ctx, run.ID), "advancing again appends nothing")
	cp2, p2 := reviewOf(t, st, run.ID)
	require.NotEqual(t, cp1.ID, cp2.ID)
	require.Equal(t, cp1.Iteration, cp2.Iteration, "showing more is not another iteration")
	require.Len(t, p2.Collection.Papers, 10)
	require.Equal(t, p1.Collection.Papers, p2.Collection.Papers[:5], "the papers under review keep their order and scores")
	last := p2.Collection.Groups[len(p2.Collection.Groups)-1]
	require.Equal(t, pipeline.MoreGroupLabel(2), last.Label)
	require.Len(t, last.PaperIDs, 5)
	alpha := p2.Collection.Sources["alpha"]
	require.Equal(t, "10 shown of 12 found", alpha.Found().String())
	require.Equal(t, 2, alpha.Pages())
	marks, err := st.Marks(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, marks, 1)
	require.Equal(t, marked, marks[0].PaperID, "marks made before stay")
	rs := stateOf(t, st, run.ID)
	h := rs.Workflow.History[len(rs.Workflow.History)-1]
	require.Equal(t, 10, h.ResultCount)
	require.Equal(t, alpha, h.Sources["alpha"], "the history (and so the report) counts the page")

	// The last page: everything found is shown, and nothing more is offered.
	require.NoError(t, eng.Decide(ctx, run.ID, cp2.ID, pipeline.ShowMoreDecision("ada", "")))
	require.NoError(t, eng.Advance(ctx, run.ID))
	cp3, p3 := reviewOf(t, st, run.ID)
	require.Len(t, p3.Collection.Papers, 12)
	f := p3.Collection.Sources["alpha"].Found()
	require.Equal(t, "12 found", f.String())
	require.False(t, pipeline.HasMore(p3.Collection))
	err = eng.Decide(ctx, run.ID, cp3.ID, pipeline.ShowMoreDecision("ada", ""))
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "show_more")
	require.Empty(t, chain.violations())

	// Approving finishes with the stored marks as before.
	require.NoError(t, eng.Decide(ctx, run.ID, cp3.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ada"}))
	require.NoError(t, eng.Advance(ctx, run.ID))
	done2, err := st.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusCompleted, done2.Status)
}

// TestShowMoreDropsWhatTheReviewHas checks a next page's records already
// under review (an index that moved between pages, a paper two sources
// found) are not appended again.
func TestShowMoreDropsWhatTheReviewHas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	var hold chan struct{}
	src := pagedPool{name: "alpha", n: 8, mu: &sync.Mutex{}, hold: &hold, entered: make(chan int, 4)}
	shifted := shiftingPool{pagedPool{name: "beta", n: 8, mu: &sync.Mutex{}, hold: &hold, entered: make(chan int, 4)}}
	sk, _ := fakeSkills(src, shifted)
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamStrategyCheckpoint: false})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	cp, p := reviewOf(t, st, run.ID)
	require.Len(t, p.Collection.Papers, 10)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, pipeline.ShowMoreDecision("ada", "")))
	require.NoError(t, eng.Advance(ctx, run.ID))
	_, p2 := reviewOf(t, st, run.ID)
	ids := map[string]bool{}
	for _, paper := range p2.Collection.Papers {
		require.False(t, ids[paper.ID], "paper %s twice", paper.ID)
		ids[paper.ID] = true
	}
	require.Len(t, p2.Collection.Papers, 16, "3 new papers of each source; beta's page repeated one of its first, which is not appended again")
}

// shiftingPool is a source whose next page starts one record early, as an
// index that gained a record between two pages does.
type shiftingPool struct{ pagedPool }

func (s shiftingPool) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if req.Offset > 0 {
		req.Offset--
	}
	return s.pagedPool.SearchCounted(ctx, req)
}

func (s shiftingPool) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

// aloneScorer is the fake scorer as a model-backed one: it judges each
// paper alone, and records how many papers each call was given.
type aloneScorer struct {
	fakeScorer
	mu    *sync.Mutex
	calls *[]int
}

func (s aloneScorer) ScoresAlone() bool { return true }

func (s aloneScorer) Score(ctx context.Context, in skills.ScoreInput) ([]research.ScoredPaper, error) {
	s.mu.Lock()
	*s.calls = append(*s.calls, len(in.Papers))
	s.mu.Unlock()
	return s.fakeScorer.Score(ctx, in)
}

// TestShowMoreScoresOnlyTheNewPapersWithAModel: a scorer that judges each
// paper alone (an LLM's) is given the next page's papers only, not the
// review's again, which would cost a request per batch already scored.
func TestShowMoreScoresOnlyTheNewPapersWithAModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	var hold chan struct{}
	src := pagedPool{name: "alpha", n: 8, mu: &sync.Mutex{}, hold: &hold, entered: make(chan int, 4)}
	sk, c := fakeSkills(src)
	var calls []int
	sk.Scorer = aloneScorer{fakeScorer: fakeScorer{c}, mu: &sync.Mutex{}, calls: &calls}
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamStrategyCheckpoint: false})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	cp, _ := reviewOf(t, st, run.ID)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, pipeline.ShowMoreDecision("ada", "")))
	require.NoError(t, eng.Advance(ctx, run.ID))
	_, p := reviewOf(t, st, run.ID)
	require.Len(t, p.Collection.Papers, 8)
	require.Equal(t, []int{5, 3}, calls, "the first page, then the next page's 3 papers alone")
}

// TestShowMoreProgressSaysWhatThePageAdded: while the next page is
// fetched, the live progress says what it added ("next page, 3 more"),
// not a page's count as if it were the search's.
func TestShowMoreProgressSaysWhatThePageAdded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	var hold chan struct{}
	src := pagedPool{name: "alpha", n: 8, mu: &sync.Mutex{}, hold: &hold, entered: make(chan int, 4)}
	sk, _ := fakeSkills(src)
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	run, err := eng.Start(ctx, pipeline.Name, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamStrategyCheckpoint: false})
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	cp, _ := reviewOf(t, st, run.ID)
	events, stop := eng.Events().Subscribe(run.ID)
	defer stop()
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, pipeline.ShowMoreDecision("ada", "")))
	require.NoError(t, eng.Advance(ctx, run.ID))
	var lines []string
	for len(events) > 0 {
		if ev := <-events; ev.Type == engine.EventProgress && strings.HasPrefix(ev.Message, "alpha: ") {
			lines = append(lines, ev.Message)
		}
	}
	require.Contains(t, lines, "alpha: next page, 3 more")
}
