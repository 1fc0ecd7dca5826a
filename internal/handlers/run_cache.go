package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/a-h/templ"

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
}

func newRunCache() *runCache { return &runCache{entries: map[string]*cachedRun{}} }

// cachedRun is one run at one stamp: loaded once, its page props and its
// JSON each built once on first use, and read-only after.
type cachedRun struct {
	stamp store.RunStamp

	load sync.Once
	run  engine.Run
	view runview.View
	sets pipeline.Sets
	// marks are the papers' current marks (with who and when).
	marks []research.Mark
	err   error

	pageOnce sync.Once
	page     views.RunData
	pageErr  error

	// lists are the review's pages as asked for (sort, filters, page),
	// each cut and rendered once: a run of thousands of papers renders
	// only the page a person looks at.
	listMu sync.Mutex
	lists  map[views.ReviewQuery]*cachedList

	apiOnce sync.Once
	api     RunJSON
	apiBody []byte
	apiErr  error
}

// get returns the run id as it is now, loading it when its stamp moved.
func (c *runCache) get(ctx context.Context, rs RunStore, id string) (*cachedRun, error) {
	st, err := rs.RunStamp(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	e := c.entries[id]
	if e == nil || e.stamp != st {
		if e == nil && len(c.entries) >= maxCachedRuns {
			for k := range c.entries { // any one: map order is random
				delete(c.entries, k)
				break
			}
		}
		e = &cachedRun{stamp: st}
		c.entries[id] = e
	}
	c.mu.Unlock()
	e.load.Do(func() {
		// Requests arriving meanwhile wait for this load, so one
		// leaving early must not cancel it for them.
		ctx := context.WithoutCancel(ctx)
		if e.run, e.err = rs.Run(ctx, id); e.err != nil {
			return
		}
		if e.view, e.err = loadView(ctx, rs, e.run); e.err != nil {
			return
		}
		e.sets, e.marks, e.err = runSetsMarks(ctx, rs, e.run)
	})
	if e.err != nil {
		c.mu.Lock()
		if c.entries[id] == e {
			delete(c.entries, id)
		}
		c.mu.Unlock()
		return nil, e.err
	}
	return e, nil
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
// with the whole review (see review for the page of it shown).
func (e *cachedRun) pageData(eng *engine.Engine) (views.RunData, error) {
	e.pageOnce.Do(func() {
		e.page, e.pageErr = runDataOf(eng, e.run, e.view, e.sets, views.Page{})
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

// json is the run's GET /api/runs/:id answer and its encoding as echo's
// c.JSON writes it.
func (e *cachedRun) json() (RunJSON, []byte, error) {
	e.apiOnce.Do(func() {
		e.api, e.apiErr = runJSONOf(e.run, e.view, e.sets)
		if e.apiErr != nil {
			return
		}
		var buf bytes.Buffer
		e.apiErr = json.NewEncoder(&buf).Encode(e.api)
		e.apiBody = buf.Bytes()
	})
	return e.api, e.apiBody, e.apiErr
}

// runJSONOf lays a run out for the API.
func runJSONOf(run engine.Run, v runview.View, sets pipeline.Sets) (RunJSON, error) {
	out := RunJSON{
		ID: run.ID, Question: v.Question, Status: string(run.Status),
		Iteration: run.Iteration, MaxIterations: run.Params.Int(paramMaxIterations),
		AccumulatedPapers: v.Accumulated, Collection: collectionJSON(v.Collection(), sets), History: iterationsJSON(v.History),
		Notes: v.Notes, Error: run.Error,
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
	}
	return out, nil
}
