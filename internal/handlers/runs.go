package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/report"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
	"quarry/internal/views"
)

// RunStore is what the run pages read; *store.Store implements it.
type RunStore interface {
	Run(ctx context.Context, id string) (engine.Run, error)
	Runs(ctx context.Context, ids []string) ([]engine.Run, error)
	Checkpoints(ctx context.Context, runID string) ([]store.CheckpointDecision, error)
}

// RunFileStore keeps files attached to runs; *store.Store implements it.
type RunFileStore interface {
	AttachRunFile(ctx context.Context, f store.RunFile) (store.RunFile, error)
}

// Runs serves the run page, its live status and its event stream.
type Runs struct {
	people *people
	runs   RunStore
	// files keeps files attached to runs at the strategy checkpoint.
	files  RunFileStore
	engine *engine.Engine
	// done ends event streams when the server shuts down.
	done <-chan struct{}
}

// keepAlive is how often an idle event stream sends a comment, so proxies
// and browsers do not drop it.
const keepAlive = 15 * time.Second

// Show handles GET /runs/:id: the share link. Opening it remembers the run
// in this browser's list.
func (h *Runs) Show(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.people.remember(c, run.ID); err != nil {
		return err
	}
	d, err := runData(ctx, h.runs, h.engine, run, h.people.page(c))
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunPage(d))
}

// ReportMarkdown handles GET /runs/:id/report.md: the run's PRISMA-S
// search-strategy report as a Markdown download, for a review's appendix.
func (h *Runs) ReportMarkdown(c echo.Context) error {
	return h.report(c, "md", "text/markdown; charset=utf-8", func(w io.Writer, run engine.Run, rs pipeline.RunState) error {
		info := report.RunInfo{ID: run.ID, Question: run.Params.String(paramQuestion), StartedBy: run.Params.String(pipeline.ParamStartedBy),
			StartedAt: run.CreatedAt, Status: string(run.Status)}
		return report.SearchStrategyMarkdown(w, info, rs)
	})
}

// ReportCSV handles GET /runs/:id/report.csv: the same report as one row
// per search made, for spreadsheets and review tools.
func (h *Runs) ReportCSV(c echo.Context) error {
	return h.report(c, "csv", "text/csv; charset=utf-8", func(w io.Writer, _ engine.Run, rs pipeline.RunState) error {
		return report.SearchStrategyCSV(w, rs)
	})
}

// report renders a search run's report into memory (so a failure is a
// clean error response) and sends it as an attachment named after the run.
func (h *Runs) report(c echo.Context, ext, contentType string, write func(io.Writer, engine.Run, pipeline.RunState) error) error {
	run, err := h.runs.Run(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	rs, err := pipeline.StateOf(run)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := write(&buf, run, rs); err != nil {
		return err
	}
	name := "quarry-run-" + run.ID + "-search-strategy." + ext
	c.Response().Header().Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	return c.Blob(http.StatusOK, contentType, buf.Bytes())
}

// Status handles GET /runs/:id/status: the status fragment the page polls.
// cp and s are the checkpoint and status the page was drawn with; when the
// run has reached another checkpoint or status that changes the page, the
// answer sends htmx to the run's page (HX-Redirect) so the new form appears. A page
// holding input is never reloaded, since that would silently throw away
// what the person typed: it gets a banner saying who decided, with a link
// to reload. The banner polls too (banner=1, see stalePoll).
//
// A page holds input when it shows a losing submit's values (typed=1;
// form=1 from pages drawn before typed=1 existed) or when its form was
// edited. static/app.js says which on every poll (dirty=1 or dirty=0), so
// an untouched form is reloaded like any other page and a person merely
// watching follows the run. A form page whose poll says neither (an
// app.js cached from before it tracked edits) is taken as edited: keeping
// a banner up is the lesser mistake.
func (h *Runs) Status(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	q := c.QueryParams()
	if q.Get("banner") == "1" {
		return h.stalePoll(c, run)
	}
	s := statusOf(run)
	s.HoldsInput = q.Get("typed") == "1" || q.Get("form") == "1"
	cp, drawn := q.Get("cp"), q.Get("s")
	if !pageChanged(cp, drawn, run) {
		return render(c, http.StatusOK, views.RunStatusFragment(s))
	}
	dirty := q.Get("dirty")
	edited := dirty == "1" || (dirty == "" && showsForm(cp, drawn))
	if !s.HoldsInput && !edited {
		// A redirect (a GET of the run), not HX-Refresh: a page that is
		// the answer to a POST (an attached file, a refused decision)
		// would be reloaded by re-sending that POST.
		c.Response().Header().Set("HX-Redirect", "/runs/"+run.ID)
		return render(c, http.StatusOK, views.RunStatusFragment(s))
	}
	return h.renderStale(c, run)
}

// showsForm reports whether a page drawn at checkpoint cp with status s
// showed a checkpoint form: a run waits, or is escalated, only at a pending
// checkpoint, and its page then shows that checkpoint's form.
func showsForm(cp, s string) bool {
	return cp != "" && (s == string(engine.StatusWaiting) || s == string(engine.StatusEscalated))
}

// stalePoll answers the banner's own poll. seen_cp and seen_s are what the
// banner shows: while the run is still there the answer is 204, which htmx
// does not swap, so the banner is not redrawn (and re-announced by screen
// readers) every two seconds; once the run has moved again the banner is
// redrawn with the newest state. It is never a reload: the page still
// holds what the person typed.
func (h *Runs) stalePoll(c echo.Context, run engine.Run) error {
	q := c.QueryParams()
	if !pageChanged(q.Get("seen_cp"), q.Get("seen_s"), run) {
		return c.NoContent(http.StatusNoContent)
	}
	return h.renderStale(c, run)
}

// renderStale renders the status line with the banner for a page drawn at
// the checkpoint and status in the query's cp and s.
func (h *Runs) renderStale(c echo.Context, run engine.Run) error {
	q := c.QueryParams()
	l := views.StaleLine{Status: statusOf(run), DrawnCheckpoint: q.Get("cp"), DrawnStatus: q.Get("s")}
	var err error
	l.Notice, l.Latest, err = h.staleNotice(c.Request().Context(), l.DrawnCheckpoint, run)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunStatusStale(l))
}

// staleNotice says what became of the checkpoint cp a page was drawn for
// (who decided it, how and when, if anyone did) and the newest decision on
// a checkpoint raised after it. A page drawn with no checkpoint cannot
// tell which decisions it missed, so it gets none.
func (h *Runs) staleNotice(ctx context.Context, cp string, run engine.Run) (views.StaleNotice, views.StaleDecision, error) {
	n := views.StaleNotice{Status: string(run.Status)}
	var latest views.StaleDecision
	if cp == "" {
		return n, latest, nil
	}
	cps, err := h.runs.Checkpoints(ctx, run.ID)
	if err != nil {
		return n, latest, err
	}
	after := false
	for _, cd := range cps {
		switch {
		case cd.Checkpoint.ID == cp:
			after = true
			if cd.Decision != nil {
				n.By, n.Action, n.At = cd.Decision.DecidedBy, string(cd.Decision.Action), cd.Decision.DecidedAt
			}
		case after && cd.Decision != nil:
			latest = views.StaleDecision{By: cd.Decision.DecidedBy, Action: string(cd.Decision.Action),
				Kind: string(cd.Checkpoint.Kind), At: cd.Decision.DecidedAt}
		}
	}
	return n, latest, nil
}

func pageChanged(cp, status string, run engine.Run) bool {
	if cp != run.CheckpointID {
		return true
	}
	busy := func(s string) bool { return s == string(engine.StatusPending) || s == string(engine.StatusRunning) }
	return status != string(run.Status) && !(busy(status) && busy(string(run.Status)))
}

// Events handles GET /runs/:id/events: a text/event-stream of rendered
// progress lines ("progress") and status pings ("status") for the htmx SSE
// extension. It ends when the client goes or the server stops.
func (h *Runs) Events(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	events, stop := h.engine.Events().Subscribe(run.ID)
	defer stop()
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/event-stream")
	res.Header().Set(echo.HeaderCacheControl, "no-cache")
	res.Header().Set("X-Accel-Buffering", "no")
	res.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(res, ": connected\n\n"); err != nil {
		return nil
	}
	res.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.done:
			return nil
		case <-tick.C:
			if _, err := fmt.Fprint(res, ": keep-alive\n\n"); err != nil {
				return nil
			}
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			var buf bytes.Buffer
			if err := views.ProgressLine(eventText(ev)).Render(ctx, &buf); err != nil {
				return nil
			}
			if err := writeSSE(res, "progress", buf.String()); err != nil {
				return nil
			}
			switch ev.Type {
			case engine.EventStatus, engine.EventCheckpoint, engine.EventDecision:
				if err := writeSSE(res, "status", ""); err != nil {
					return nil
				}
			}
		}
		res.Flush()
	}
}

// writeSSE writes one event; every line of data gets its own "data:" field.
func writeSSE(w http.ResponseWriter, event, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := w.Write([]byte(b.String()))
	return err
}

// eventText is one event as a line a person can read.
func eventText(ev engine.Event) string {
	parts := []string{ev.At.UTC().Format("15:04:05")}
	if ev.Step != "" {
		parts = append(parts, ev.Step)
	}
	switch ev.Type {
	case engine.EventStatus:
		parts = append(parts, "status "+string(ev.Status))
	case engine.EventStepStarted:
		parts = append(parts, "started")
	case engine.EventStepFinished:
		parts = append(parts, "finished "+string(ev.Outcome))
	case engine.EventCheckpoint:
		parts = append(parts, "waiting for a decision ("+string(ev.Kind)+")")
	default:
		parts = append(parts, string(ev.Type))
	}
	if ev.Message != "" {
		parts = append(parts, "— "+ev.Message)
	}
	return strings.Join(parts, " ")
}

func statusOf(run engine.Run) views.RunStatus {
	return views.RunStatus{
		ID: run.ID, Status: string(run.Status), Iteration: run.Iteration,
		Step: run.Step, CheckpointID: run.CheckpointID, Error: run.Error,
	}
}

// runView is a run read back with its checkpoints decoded, shared by the
// run page and the JSON API.
type runView struct {
	run         engine.Run
	pending     *engine.Checkpoint
	lastResult  *pipeline.ResultPayload
	accumulated []research.ScoredPaper
	history     []research.IterationRecord
	decisions   []views.DecisionRow
	// final is the run's final collection once it ended (nil before).
	final *research.PaperCollection
	// searched holds the iterations whose search has run.
	searched map[int]bool
	// rejected are the papers whose latest mark is irrelevant; notes the
	// researcher's notes on papers (search runs only).
	rejected []research.ScoredPaper
	notes    map[string]string
	// skillNotes are what the skills reported about how they worked,
	// such as an LLM skill falling back to its offline variant.
	skillNotes []research.Note
}

// loadRunView reads a run's checkpoints and decisions and derives its
// history: the strategy used per iteration (edited if edited), the result
// count and the feedback given, and the papers accumulated so far with the
// last review's relevant marks merged in.
func loadRunView(ctx context.Context, rs RunStore, run engine.Run) (runView, error) {
	v := runView{run: run, searched: map[int]bool{}}
	cps, err := rs.Checkpoints(ctx, run.ID)
	if err != nil {
		return v, err
	}
	byIter := map[int]*research.IterationRecord{}
	rec := func(i int) *research.IterationRecord {
		if r, ok := byIter[i]; ok {
			return r
		}
		byIter[i] = &research.IterationRecord{Iteration: i}
		return byIter[i]
	}
	var lastFeedback *research.UserFeedback
	for _, cd := range cps {
		cp, dec := cd.Checkpoint, cd.Decision
		if cp.ID == run.CheckpointID && cp.Status == engine.CheckpointPending {
			c := cp
			v.pending = &c
		}
		if dec != nil {
			v.decisions = append(v.decisions, views.DecisionRow{
				Kind: string(cp.Kind), Iteration: cp.Iteration, Action: string(dec.Action),
				By: dec.DecidedBy, At: dec.DecidedAt, Note: dec.Note,
			})
		}
		switch cp.Kind {
		case engine.KindStrategyConfirmation:
			p, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
			if err != nil {
				return v, err
			}
			r := rec(cp.Iteration)
			r.Strategy = p.Strategy
			if dec != nil && dec.Action == engine.Edit && len(dec.RevisedData) > 0 {
				var s research.SearchStrategy
				if json.Unmarshal(dec.RevisedData, &s) == nil {
					r.Strategy = s
				}
			}
		case engine.KindResultReview:
			p, err := engine.PayloadAs[pipeline.ResultPayload](cp)
			if err != nil {
				return v, err
			}
			v.lastResult = &p
			v.searched[cp.Iteration] = true
			r := rec(cp.Iteration)
			r.ResultCount = len(p.Collection.Papers)
			lastFeedback = nil
			if dec != nil && len(dec.RevisedData) > 0 {
				var fb research.UserFeedback
				if json.Unmarshal(dec.RevisedData, &fb) == nil {
					r.Feedback = &fb
					lastFeedback = &fb
				}
			}
		}
	}
	for i := 1; i <= run.Iteration+1; i++ {
		if r, ok := byIter[i]; ok {
			v.history = append(v.history, *r)
		}
	}
	if v.lastResult != nil {
		st := research.WorkflowState{AccumulatedPapers: slices.Clone(v.lastResult.AccumulatedPapers)}
		if lastFeedback != nil {
			for _, id := range lastFeedback.MarkedRelevant {
				if p, ok := v.lastResult.Collection.Paper(id); ok {
					st.Accumulate(p)
				}
			}
		}
		v.accumulated = st.AccumulatedPapers
	}
	if run.Workflow == pipeline.Name {
		// The search pipeline's own state is authoritative where it has
		// an answer: recorded iterations, accumulated papers, final result.
		rs, err := pipeline.StateOf(run)
		if err != nil {
			return v, err
		}
		recorded := map[int]bool{}
		for _, h := range rs.Workflow.History {
			recorded[h.Iteration] = true
			v.searched[h.Iteration] = true
		}
		merged := slices.Clone(rs.Workflow.History)
		for _, h := range v.history {
			if !recorded[h.Iteration] {
				merged = append(merged, h)
			}
		}
		slices.SortStableFunc(merged, func(a, b research.IterationRecord) int { return a.Iteration - b.Iteration })
		v.history = merged
		if rs.Workflow.AccumulatedPapers != nil || v.accumulated == nil {
			v.accumulated = rs.Workflow.AccumulatedPapers
		}
		v.final = rs.Final
		v.rejected, v.notes, v.skillNotes = rs.MarkedIrrelevant, rs.Workflow.PaperNotes, rs.Notes
	}
	if v.final == nil && run.IsComplete() && v.lastResult != nil {
		c := v.lastResult.Collection
		v.final = &c
	}
	return v, nil
}

// runData builds the run page's props.
func runData(ctx context.Context, rs RunStore, e *engine.Engine, run engine.Run, page views.Page) (views.RunData, error) {
	v, err := loadRunView(ctx, rs, run)
	if err != nil {
		return views.RunData{}, err
	}
	bound := loopBound(e, run)
	d := views.RunData{
		Page: page, Question: run.Params.String(paramQuestion), MaxIterations: bound,
		Status: statusOf(run), Decisions: v.decisions, Accumulated: v.accumulated,
		HasReport: run.Workflow == pipeline.Name,
		HasPapers: run.Workflow == pipeline.Name && v.lastResult != nil, HasAccumulated: len(v.accumulated) > 0,
		Notes: v.skillNotes,
	}
	// An iteration whose strategy was rejected was never searched: the
	// pipeline records it with 0 results, which must not read as a search
	// that found nothing.
	rejected := map[int]bool{}
	for _, dr := range v.decisions {
		if dr.Kind == string(engine.KindStrategyConfirmation) && dr.Action == string(engine.Reject) {
			rejected[dr.Iteration] = true
		}
	}
	for _, h := range v.history {
		row := views.IterationRow{Iteration: h.Iteration, ResultCount: h.ResultCount, Sources: h.Strategy.Sources,
			Searched: v.searched[h.Iteration], StrategyRejected: rejected[h.Iteration] && !h.Searched()}
		for _, q := range h.Strategy.Queries {
			row.Queries = append(row.Queries, q.Text)
		}
		if h.Feedback != nil {
			row.Relevant, row.Irrelevant, row.Feedback = len(h.Feedback.MarkedRelevant), len(h.Feedback.MarkedIrrelevant), h.Feedback.FreeTextFeedback
		}
		d.History = append(d.History, row)
	}
	if v.pending != nil {
		switch v.pending.Kind {
		case engine.KindStrategyConfirmation:
			p, err := engine.PayloadAs[pipeline.StrategyPayload](*v.pending)
			if err != nil {
				return d, err
			}
			f := strategyFormOf(run.ID, *v.pending, p, knownSources(e))
			f.MaxIterations = bound
			d.Strategy = &f
		case engine.KindResultReview:
			p, err := engine.PayloadAs[pipeline.ResultPayload](*v.pending)
			if err != nil {
				return d, err
			}
			notes, err := paperNotesOf(run)
			if err != nil {
				return d, err
			}
			f := reviewFormOf(run.ID, *v.pending, p, notes)
			f.MaxIterations = bound
			d.Review = &f
		case engine.KindEscalation:
			p, err := engine.PayloadAs[engine.EscalationPayload](*v.pending)
			if err != nil {
				return d, err
			}
			d.Escalation = &views.EscalationForm{RunID: run.ID, CheckpointID: v.pending.ID, Step: p.Step, Error: p.Error,
				Attempts: p.Attempts, CanSkip: skippable(e, run.Workflow, p.Step)}
		}
	}
	if run.IsComplete() && v.final != nil {
		// Runs finalised before rejected papers were left out of the
		// final collection still hold them: they are listed apart.
		final := *v.final
		rejected := map[string]bool{}
		for _, p := range v.rejected {
			rejected[p.ID] = true
		}
		final.Papers = slices.DeleteFunc(slices.Clone(final.Papers), func(p research.ScoredPaper) bool { return rejected[p.ID] })
		d.Final = &views.PaperGroupSet{Groups: groupsOf(final), Rejected: v.rejected, Notes: v.notes}
	}
	return d, nil
}

// loopBound is the run's max_iterations as the engine applies it: the
// run's parameter, else its workflow's bound (0 when neither is known).
// The checkpoint forms need it to say when a decision ends the run.
func loopBound(e *engine.Engine, run engine.Run) int {
	if n := run.Params.Int(paramMaxIterations); n > 0 {
		return n
	}
	if wf, err := e.Registry().Get(run.Workflow); err == nil {
		return wf.MaxIterations
	}
	return 0
}

// skippable reports whether the workflow lets a person skip step.
func skippable(e *engine.Engine, workflow, step string) bool {
	wf, err := e.Registry().Get(workflow)
	if err != nil {
		return false
	}
	s, ok := wf.Step(step)
	return ok && s.Skippable()
}

// knownSources are the sources the search workflow accepts.
func knownSources(e *engine.Engine) []string {
	params, ok := searchParams(e)
	if !ok {
		return nil
	}
	return params[paramSources].Choices
}

// groupsOf lays a collection out by the organizer's groups, with papers no
// group names gathered under "Other".
func groupsOf(c research.PaperCollection) []views.PaperGroup {
	placed := map[string]bool{}
	var out []views.PaperGroup
	for _, g := range c.Groups {
		pg := views.PaperGroup{Label: g.Label}
		for _, id := range g.PaperIDs {
			if p, ok := c.Paper(id); ok && !placed[id] {
				pg.Papers = append(pg.Papers, p)
				placed[id] = true
			}
		}
		if len(pg.Papers) > 0 {
			out = append(out, pg)
		}
	}
	var rest views.PaperGroup
	rest.Label = "Other"
	if len(out) == 0 {
		rest.Label = "Papers"
	}
	for _, p := range c.Papers {
		if !placed[p.ID] {
			rest.Papers = append(rest.Papers, p)
		}
	}
	if len(rest.Papers) > 0 {
		out = append(out, rest)
	}
	return out
}

// conflictPage re-renders the run's current state with the conflict
// message (409), so the person sees who decided and what happens now. Any
// other error (or nil) is returned as is, so a decision handler hands it
// every error of finding the pending checkpoint.
func (h *Runs) conflictPage(c echo.Context, runID string, cause error) error {
	return h.conflictPageWith(c, runID, cause, nil)
}

// conflictPageWith is conflictPage that also shows what a losing review
// submitted (nil: nothing to show), so the person can copy it.
func (h *Runs) conflictPageWith(c echo.Context, runID string, cause error, submitted *views.SubmittedReview) error {
	return h.conflictPageShowing(c, runID, cause, func(d *views.RunData) { d.Submitted = submitted })
}

// conflictPageWithStrategy is conflictPage that also shows the strategy
// form as a losing submit carried it (nil: nothing to show).
func (h *Runs) conflictPageWithStrategy(c echo.Context, runID string, cause error, submitted *views.SubmittedStrategy) error {
	return h.conflictPageShowing(c, runID, cause, func(d *views.RunData) { d.SubmittedStrategy = submitted })
}

// conflictPageShowing renders the conflict page after show has put what
// the losing submit carried into the page's data. An htmx request (a form's
// add/remove/keep buttons, which swap only the form) gets the page's whole
// <main> swapped in instead: the form it targeted may be gone, and the
// conflict and the submitted values must be seen, not nested in the form.
func (h *Runs) conflictPageShowing(c echo.Context, runID string, cause error, show func(*views.RunData)) error {
	if fault.ErrorCode(cause) != fault.EConflict {
		return cause
	}
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, runID)
	if err != nil {
		return err
	}
	d, err := runData(ctx, h.runs, h.engine, run, h.people.page(c))
	if err != nil {
		return err
	}
	d.Conflict = fault.ErrorMessage(cause)
	show(&d)
	if isHTMX(c) {
		hdr := c.Response().Header()
		hdr.Set("HX-Retarget", "#main")
		hdr.Set("HX-Reselect", "#main")
		hdr.Set("HX-Reswap", "outerHTML show:window:top")
	}
	return render(c, http.StatusConflict, views.RunPage(d))
}

func itoaOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
