package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
	"quarry/internal/views"
)

// maxCachedRuns bounds the runs a runCache keeps: a run of thousands of
// papers decodes to megabytes.
const maxCachedRuns = 32

// runCache keeps what a run's page and its JSON are built from under the
// run's stamp (store.RunStamp), so reading a run that has not changed
// costs one small query instead of decoding its state, checkpoints and
// marks again: the page and GET /api/runs/:id are polled by every open
// browser and client. A new commit, decision or mark changes the stamp
// and the next read builds afresh; what is built is the same as without
// the cache.
type runCache struct {
	mu      sync.Mutex
	entries map[string]*cachedRun
	// bufs are render buffers the run page reuses: a page of 100 KB
	// rendered into a new buffer pays for its growth and zeroing on
	// every request.
	bufs sync.Pool
	// csrfMark and personMark stand, in a run page rendered once for
	// everyone, where each person's CSRF token and name go: random, so
	// no run's text holds them.
	csrfMark, personMark string
	// settings are the server's review settings every page shows.
	settings reviewSettings
	// workflow is the workflow a run runs (engine.Workflow: the version
	// it started with), whose stages the API lists.
	workflow func(context.Context, engine.Run) (*engine.Workflow, error)
}

// pageKey names one rendering of a run's page: the review list's query,
// the Undo it offers (?undo=) and whether it is the list alone.
type pageKey struct {
	query views.ReviewQuery
	undo  string
	list  bool
}

// cachedPage is a run page rendered once, cut where the person's CSRF
// token and name go (holes: 0 token, 1 name).
type cachedPage struct {
	once    sync.Once
	parts   [][]byte
	holes   []int
	pushURL string
	err     error
}

// page is the run page as q, undo and list ask, for the person p: rendered
// once per run stamp with marks for p's token and name, then filled in.
func (c *runCache) page(ec echo.Context, e *cachedRun, eng *engine.Engine, k pageKey, p views.Page) error {
	e.renderedMu.Lock()
	if e.rendered == nil || len(e.rendered) >= maxCachedLists {
		e.rendered = map[pageKey]*cachedPage{}
	}
	pg := e.rendered[k]
	if pg == nil {
		pg = &cachedPage{}
		e.rendered[k] = pg
	}
	e.renderedMu.Unlock()
	pg.once.Do(func() { pg.err = c.renderPage(pg, e, eng, k) })
	if pg.err != nil {
		return pg.err
	}
	if pg.pushURL != "" {
		ec.Response().Header().Set("HX-Push-Url", pg.pushURL)
	}
	buf, _ := c.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() {
		buf.Reset()
		c.bufs.Put(buf)
	}()
	fill := [2]string{html.EscapeString(p.CSRF), html.EscapeString(p.Person)}
	for i, part := range pg.parts {
		buf.Write(part)
		if i < len(pg.holes) {
			buf.WriteString(fill[pg.holes[i]])
		}
	}
	return ec.HTMLBlob(http.StatusOK, buf.Bytes())
}

// renderPage renders pg once, with the marks in the person's places.
func (c *runCache) renderPage(pg *cachedPage, e *cachedRun, eng *engine.Engine, k pageKey) error {
	d, err := e.pageData(eng, c.settings)
	if err != nil {
		return err
	}
	var comp templ.Component
	if d.Review != nil {
		f, err := e.review(*d.Review, k.query)
		if err != nil {
			return err
		}
		f.List.Undo = restUndo(e.marks, k.undo)
		d.Review = &f
		if k.list {
			// The address htmx pushes is the list's own, without the
			// controls' empty fields or a one-time undo.
			pg.pushURL = runListURL(e.run.ID, f.List.Query.Values())
			comp = views.ReviewList(f)
			if f.Progress != nil {
				// Marking the rest changes the counts: the bar follows.
				comp = templ.Join(comp, views.ReviewProgress(*f.Progress, true))
			}
		}
	}
	if comp == nil {
		d.Page = views.Page{CSRF: c.csrfMark, Person: c.personMark}
		comp = views.RunPage(d)
	}
	var buf bytes.Buffer
	if err := comp.Render(context.Background(), &buf); err != nil {
		return err
	}
	rest := buf.Bytes()
	marks := [2][]byte{[]byte(c.csrfMark), []byte(c.personMark)}
	for {
		at, hole := -1, 0
		for h, m := range marks {
			if i := bytes.Index(rest, m); i >= 0 && (at < 0 || i < at) {
				at, hole = i, h
			}
		}
		if at < 0 {
			break
		}
		pg.parts = append(pg.parts, rest[:at])
		pg.holes = append(pg.holes, hole)
		rest = rest[at+len(marks[hole]):]
	}
	pg.parts = append(pg.parts, rest)
	return nil
}

func newRunCache(settings reviewSettings, workflow func(context.Context, engine.Run) (*engine.Workflow, error)) *runCache {
	return &runCache{entries: map[string]*cachedRun{}, csrfMark: "q" + rand.Text(), personMark: "q" + rand.Text(), settings: settings, workflow: workflow}
}

// cachedRun is one run at one stamp: loaded once, its page props and its
// JSON each built once on first use, and read-only after.
type cachedRun struct {
	stamp store.RunStamp
	// viewer is "" for the run as everyone sees it; for a dual-screened
	// run a person's own entry shows their marks of papers still being
	// screened too (see screeningMarks).
	viewer string

	load sync.Once
	run  engine.Run
	view runview.View
	sets pipeline.Sets
	// stages and resume are where the run stands (engine.Progress).
	stages []engine.StageState
	resume engine.ResumeContext
	// checks are the run's gate checks, oldest first.
	checks []engine.GateCheck
	// fork is where the run was forked from (nil: not a fork).
	fork *engine.ForkOrigin
	// start is where the run was started when not at its first stage
	// the ordinary way (nil otherwise).
	start *engine.StartOrigin
	// parent, children and actions link the run to the runs it was
	// started by and started (without the children's status, which moves
	// without this run's stamp), and list its action attempts: all are
	// written with a commit of this run, so its stamp covers them.
	parent   *engine.Parent
	children []engine.ChildLink
	actions  []engine.ActionRecord
	// marks are the papers' current marks (with who and when).
	marks []research.Mark
	// events are a search run's marks in the order they were made, for
	// its progress plot.
	events []research.Mark
	// state is the search run's decoded state (zero for another
	// workflow), kept for the next stamp when only marks move.
	state  pipeline.RunState
	err    error
	loaded atomic.Bool

	pageOnce sync.Once
	page     views.RunData
	pageErr  error
	// pageBuilt says page is built (without error); basePage is the page
	// of the stamp before when only marks moved since, to be built on.
	pageBuilt atomic.Bool
	basePage  atomic.Pointer[views.RunData]

	// lists are the review's pages as asked for (sort, filters, page),
	// each cut and rendered once: a run of thousands of papers renders
	// only the page a person looks at.
	listMu sync.Mutex
	lists  map[views.ReviewQuery]*cachedList

	// rendered are whole pages (and list fragments) as asked for.
	renderedMu sync.Mutex
	rendered   map[pageKey]*cachedPage

	apiOnce sync.Once
	api     RunJSON
	// apiBuilt says api is built (without error); baseAPI is the answer
	// of the stamp before when only marks moved since, to be built on.
	apiBuilt atomic.Bool
	baseAPI  atomic.Pointer[cachedRun]
	// apiReview is the pending review's payload, whose paper lists the
	// API answers a page at a time (nil at any other checkpoint).
	apiReview *pipeline.ResultPayload
	apiErr    error
	apiMu     sync.Mutex
	apiPages  map[[2]int]*cachedAPIPage
}

// cachedAPIPage is one page of GET /api/runs/:id, encoded once.
type cachedAPIPage struct {
	once sync.Once
	out  RunJSON
	body []byte
	err  error
}

// get returns the run id as it is now, loading it when its stamp moved:
// as everyone sees it (the marks that count).
func (c *runCache) get(ctx context.Context, rs RunStore, id string) (*cachedRun, error) {
	return c.getAs(ctx, rs, id, "")
}

// getFor is get as person sees the run: for a blind dual-screened run,
// with their own marks of the papers still being screened (an entry of
// their own); for any other run, as everyone sees it.
func (c *runCache) getFor(ctx context.Context, rs RunStore, id, person string) (*cachedRun, error) {
	e, err := c.get(ctx, rs, id)
	if err != nil || person == "" || e.run.Workflow != pipeline.Name || !pipeline.ScreeningPlanOf(e.run).Dual() {
		return e, err
	}
	return c.getAs(ctx, rs, id, person)
}

func (c *runCache) getAs(ctx context.Context, rs RunStore, id, viewer string) (*cachedRun, error) {
	st, err := rs.RunStamp(ctx, id)
	if err != nil {
		return nil, err
	}
	key := id
	if viewer != "" {
		key = id + "\x00" + viewer
	}
	c.mu.Lock()
	e := c.entries[key]
	var prev *cachedRun
	if e == nil || e.stamp != st {
		if e == nil && len(c.entries) >= maxCachedRuns {
			for k := range c.entries { // any one: map order is random
				delete(c.entries, k)
				break
			}
		}
		prev = e
		e = &cachedRun{stamp: st, viewer: viewer}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.load.Do(func() {
		// Requests arriving meanwhile wait for this load, so one
		// leaving early must not cancel it for them.
		ctx := context.WithoutCancel(ctx)
		// The run, its links and its marks are read one after the other,
		// not in one snapshot: a commit between two reads (a parent
		// parked with the child it started) would give a page half
		// before and half after it. Read again while the stamp moved
		// under the load, a few times at most.
		for range 3 {
			c.fill(ctx, rs, id, e, prev, st)
			now, err := rs.RunStamp(ctx, id)
			if e.err != nil || err != nil || now == st {
				break
			}
			prev, st = nil, now
			e.basePage.Store(nil)
			e.baseAPI.Store(nil)
		}
		if e.err == nil {
			e.loaded.Store(true)
		}
	})
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		c.mu.Unlock()
		return nil, e.err
	}
	return e, nil
}

// fill reads run id into e: from prev where only marks moved since it was
// read, from the store otherwise.
func (c *runCache) fill(ctx context.Context, rs RunStore, id string, e, prev *cachedRun, st store.RunStamp) {
	if prev != nil && prev.loaded.Load() && prev.run.Version == st.Version && prev.stamp.Branches == st.Branches {
		// Only marks moved (a click in the review): the run, its
		// checkpoints and its state are as decoded for the stamp
		// before, which for a run of thousands of papers was most
		// of a reload.
		e.run, e.view, e.state = prev.run, prev.view, prev.state
		e.stages, e.resume, e.checks, e.fork, e.start = prev.stages, prev.resume, prev.checks, prev.fork, prev.start
		e.parent, e.children, e.actions = prev.parent, prev.children, prev.actions
		// What the stamp before built, or had to build on when it
		// built nothing (a page read between two API reads).
		if prev.pageBuilt.Load() {
			e.basePage.Store(&prev.page)
		} else {
			e.basePage.Store(prev.basePage.Load())
		}
		if prev.apiBuilt.Load() {
			e.baseAPI.Store(prev)
		} else {
			e.baseAPI.Store(prev.baseAPI.Load())
		}
	} else {
		if e.run, e.err = rs.Run(ctx, id); e.err != nil {
			return
		}
		if e.view, e.err = loadView(ctx, rs, e.run); e.err != nil {
			return
		}
		if wf, err := c.workflow(ctx, e.run); err == nil {
			var trail []engine.StepRecord
			if trail, e.err = rs.StepTrail(ctx, id); e.err != nil {
				return
			}
			var branches []engine.Branch
			if branches, e.err = rs.RunBranches(ctx, id); e.err != nil {
				return
			}
			e.stages, e.resume = engine.Progress(wf, e.run, trail, branches)
			if e.checks, e.err = rs.GateChecks(ctx, id); e.err != nil {
				return
			}
		}
		if e.fork, e.err = rs.ForkOf(ctx, id); e.err != nil {
			return
		}
		if e.start, e.err = rs.StartOf(ctx, id); e.err != nil {
			return
		}
		if e.parent, e.children, e.actions, e.err = runLinks(ctx, rs, id); e.err != nil {
			return
		}
		if e.run.Workflow == pipeline.Name {
			if e.state, e.err = pipeline.StateOf(e.run); e.err != nil {
				return
			}
		}
	}
	e.sets = pipeline.SetsOf(pipeline.RunState{}, nil)
	if e.run.Workflow == pipeline.Name {
		if e.events, e.err = rs.MarkEvents(ctx, id); e.err != nil {
			return
		}
		if plan := pipeline.ScreeningPlanOf(e.run); plan.Dual() {
			e.marks = screeningMarks(plan, e.viewer, e.events)
		} else if e.marks, e.err = rs.Marks(ctx, id); e.err != nil {
			return
		}
		e.sets = pipeline.SetsOf(e.state, e.marks)
	}
}

// maxCachedLists bounds the review pages a cachedRun keeps.
const maxCachedLists = 64

// cachedList is one page of a run's review list, cut and rendered once.
type cachedList struct {
	once sync.Once
	form views.ReviewForm
	err  error
}

// pageData is the run page's props without the per-request Page, and
// with the whole review (see review for the page of it shown); set holds
// the server's review settings.
func (e *cachedRun) pageData(eng *engine.Engine, set reviewSettings) (views.RunData, error) {
	e.pageOnce.Do(func() {
		if base := e.basePage.Swap(nil); base != nil {
			// The checkpoint's form as built before (its payload
			// decoded, its papers grouped), with the marks as they are.
			e.page = withSets(*base, e.view, e.sets)
		} else {
			e.page, e.pageErr = runDataOf(eng, e.run, e.view, e.sets, views.Page{})
		}
		e.page.Status.Branches = e.stamp.Branches // what the drawing shows moves with branches too
		if e.pageErr != nil {
			return
		}
		e.page.Workflow = e.workflowPanel()
		e.page.Links = linksView(e.parent, e.children, e.fork, e.actions)
		e.page = set.apply(e.page)
		if showsProgress(e.run, e.page.Review != nil) {
			e.page.Screening = screeningOf(e.run.ID, e.events, set.stopWindow)
		}
		e.pageBuilt.Store(true)
	})
	return e.page, e.pageErr
}

// review is the page of the run's review list q asks for, its papers
// rendered: they are most of the page and the same for everyone.
func (e *cachedRun) review(whole views.ReviewForm, q views.ReviewQuery) (views.ReviewForm, error) {
	e.listMu.Lock()
	if e.lists == nil || len(e.lists) >= maxCachedLists {
		e.lists = map[views.ReviewQuery]*cachedList{}
	}
	l := e.lists[q]
	if l == nil {
		l = &cachedList{}
		e.lists[q] = l
	}
	e.listMu.Unlock()
	l.once.Do(func() {
		l.form = listReview(whole, q)
		var buf bytes.Buffer
		if l.err = views.ReviewPapers(l.form).Render(context.Background(), &buf); l.err == nil {
			l.form.Papers = templ.Raw(buf.String())
		}
	})
	return l.form, l.err
}

// json is page page (per papers a page) of the run's GET /api/runs/:id
// answer and its encoding as echo's c.JSON writes it.
func (e *cachedRun) json(page, per int) (RunJSON, []byte, error) {
	e.apiOnce.Do(func() {
		defer func() { e.apiBuilt.Store(e.apiErr == nil) }()
		if b := e.baseAPI.Swap(nil); b != nil {
			// The answer as built before (the checkpoint's payload
			// encoded and decoded), with the marks as they are.
			e.api, e.apiReview = b.api, b.apiReview
			e.api.Collection = collectionJSON(e.view.Collection(), e.sets)
			return
		}
		e.api, e.apiErr = runJSONOf(e.run, e.view, e.sets)
		e.api.Workflow, e.api.Stages, e.api.ResumeContext = e.run.Workflow, e.stages, &e.resume
		if e.api.Stages == nil {
			e.api.Stages = []engine.StageState{}
		}
		e.api.GateChecks, e.api.ForkedFrom, e.api.StartedFrom = e.checks, e.fork, e.start
		if e.api.GateChecks == nil {
			e.api.GateChecks = []engine.GateCheck{}
		}
		e.api.Votes = e.view.Votes
		if e.api.Votes == nil {
			e.api.Votes = []runview.GateVotes{}
		}
		e.api.GateTimers, e.api.GateNotices = e.view.Timers, e.view.Notices
		if e.api.GateTimers == nil {
			e.api.GateTimers = []engine.GateTimer{}
		}
		if e.api.GateNotices == nil {
			e.api.GateNotices = []engine.Notice{}
		}
		e.api.ParentRun, e.api.ChildRuns, e.api.Actions = e.parent, e.children, e.actions
		if e.apiErr != nil || e.view.Pending == nil || e.view.Pending.Kind != pipeline.KindResultReview {
			return
		}
		p, err := engine.PayloadAs[pipeline.ResultPayload](*e.view.Pending)
		e.apiReview, e.apiErr = &p, err
	})
	if e.apiErr != nil {
		return RunJSON{}, nil, e.apiErr
	}
	key := [2]int{page, per}
	e.apiMu.Lock()
	if e.apiPages == nil || len(e.apiPages) >= maxCachedLists {
		e.apiPages = map[[2]int]*cachedAPIPage{}
	}
	pg := e.apiPages[key]
	if pg == nil {
		pg = &cachedAPIPage{}
		e.apiPages[key] = pg
	}
	e.apiMu.Unlock()
	pg.once.Do(func() {
		if pg.out, pg.err = pageJSON(e.api, e.apiReview, page, per); pg.err != nil {
			return
		}
		var buf bytes.Buffer
		pg.err = json.NewEncoder(&buf).Encode(pg.out)
		pg.body = buf.Bytes()
	})
	return pg.out, pg.body, pg.err
}

// pageJSON cuts a run's answer to one page of its paper lists: the
// collection's, the accumulated papers and, at a review, its payload's;
// the groups name the page's papers.
func pageJSON(whole RunJSON, review *pipeline.ResultPayload, page, per int) (RunJSON, error) {
	out := whole
	longest := len(whole.AccumulatedPapers)
	if whole.Collection != nil {
		longest = max(longest, len(whole.Collection.Papers))
	}
	if review != nil {
		longest = max(longest, len(review.Collection.Papers), len(review.AccumulatedPapers))
	}
	pp := PapersPageJSON{Page: page, PerPage: per, Pages: max(1, (longest+per-1)/per), AccumulatedTotal: len(whole.AccumulatedPapers)}
	out.AccumulatedPapers = window(whole.AccumulatedPapers, page, per)
	if whole.Collection != nil {
		c := *whole.Collection
		pp.CollectionTotal = len(c.Papers)
		c.Papers = window(c.Papers, page, per)
		ids := map[string]bool{}
		for _, p := range c.Papers {
			ids[p.ID] = true
		}
		c.Groups = groupsOn(c.Groups, ids)
		out.Collection = &c
	}
	if review != nil && whole.Checkpoint != nil {
		p := *review
		p.Collection.Papers = window(p.Collection.Papers, page, per)
		ids := map[string]bool{}
		for _, p := range p.Collection.Papers {
			ids[p.ID] = true
		}
		p.Collection.Groups = groupsOn(p.Collection.Groups, ids)
		p.AccumulatedPapers = window(p.AccumulatedPapers, page, per)
		raw, err := json.Marshal(p)
		if err != nil {
			return out, err
		}
		cp := *whole.Checkpoint
		cp.Payload = raw
		out.Checkpoint = &cp
	}
	out.PapersPage = &pp
	return out, nil
}

// groupsOn are the groups as they name the papers of one page (ids):
// groups with none of them are left out.
func groupsOn(groups []research.Group, ids map[string]bool) []research.Group {
	if groups == nil {
		return nil
	}
	out := []research.Group{}
	for _, g := range groups {
		var on []string
		for _, id := range g.PaperIDs {
			if ids[id] {
				on = append(on, id)
			}
		}
		if len(on) > 0 {
			g.PaperIDs = on
			out = append(out, g)
		}
	}
	return out
}

// window is page page of s, per to a page: empty (not nil) past the end.
func window[T any](s []T, page, per int) []T {
	from := len(s)
	if page-1 <= len(s)/per { // no overflow from a huge page number
		from = min((page-1)*per, len(s))
	}
	return s[from:min(from+per, len(s)):min(from+per, len(s))]
}

// runJSONOf lays a run out for the API.
func runJSONOf(run engine.Run, v runview.View, sets pipeline.Sets) (RunJSON, error) {
	out := RunJSON{
		ID: run.ID, Question: v.Question, Status: string(run.Status),
		Iteration: run.Iteration, MaxIterations: run.Params.Int(paramMaxIterations),
		AccumulatedPapers: v.Accumulated, Collection: collectionJSON(v.Collection(), sets), History: iterationsJSON(v.History),
		Notes: v.Notes, LLMUsage: v.LLMUsage, Error: run.Error,
	}
	if out.AccumulatedPapers == nil {
		out.AccumulatedPapers = []research.ScoredPaper{}
	}
	if out.Notes == nil {
		out.Notes = []research.Note{}
	}
	if v.Pending != nil {
		raw, err := json.Marshal(v.Pending.Payload)
		if err != nil {
			return out, err
		}
		out.Checkpoint = &CheckpointJSON{ID: v.Pending.ID, Kind: string(v.Pending.Kind), Iteration: v.Pending.Iteration, Payload: raw}
		if v.Pending.Kind == pipeline.KindResultReview {
			if p, err := engine.PayloadAs[pipeline.ResultPayload](*v.Pending); err == nil {
				out.Checkpoint.ShowMore = pipeline.HasMore(p.Collection)
			}
		}
	}
	return out, nil
}

// workflowPanel is the run page's workflow panel (nil when the run's
// workflow is not registered).
func (e *cachedRun) workflowPanel() *views.RunWorkflow {
	if e.stages == nil {
		return nil
	}
	w := &views.RunWorkflow{RunID: e.run.ID, Version: e.run.Version, Branches: e.stamp.Branches, Name: e.run.Workflow, Current: e.resume.Current, Completed: e.resume.Completed}
	for _, s := range e.stages {
		w.Stages = append(w.Stages, views.WorkflowStageState{ID: s.ID, Type: s.Type, State: s.State, Attempts: s.Attempts})
	}
	if st := e.start; st != nil {
		w.StartedAt, w.StartedBy, w.Given = st.Stage, st.By, st.Given
	}
	if r := e.resume.PendingRetry; r != nil {
		w.Retry = fmt.Sprintf("attempt %d failed: %s", r.Attempt, r.Error)
	}
	if o := e.resume.LastOutput; o != nil {
		w.LastOutput, w.LastOutputBytes = o.Stage, o.Bytes
	}
	return w
}
