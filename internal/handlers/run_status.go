package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/views"
)

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
	if st, err := h.runs.RunStamp(ctx, run.ID); err == nil {
		s.Branches = st.Branches // the drawing moves as branches end, too
	}
	s.Queued = queuedBehindLimit(ctx, h.runs, run)
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

// pageChanged reports whether a page drawn at checkpoint cp with status
// shows something the run has left behind: another checkpoint, or another
// status, except that pending and running look the same on the page.
func pageChanged(cp, status string, run engine.Run) bool {
	if cp != run.CheckpointID {
		return true
	}
	busy := func(s string) bool { return s == string(engine.StatusPending) || s == string(engine.StatusRunning) }
	return status != string(run.Status) && !(busy(status) && busy(string(run.Status)))
}

// statusOf is the run's status line as the page draws and polls it.
func statusOf(run engine.Run) views.RunStatus {
	return views.RunStatus{
		ID: run.ID, Version: run.Version, Status: string(run.Status), Iteration: run.Iteration,
		Step: run.Step, CheckpointID: run.CheckpointID, Error: run.Error,
	}
}

// queueStore is implemented by stores that bound the runs executing at
// once (*store.Store).
type queueStore interface {
	QueuedBehindLimit(ctx context.Context, id string) (string, error)
}

// queuedBehindLimit says why a run that has not stopped waits its turn
// behind a concurrency limit ("" when it does not, or cannot be told).
func queuedBehindLimit(ctx context.Context, runs any, run engine.Run) string {
	q, ok := runs.(queueStore)
	if !ok || (run.Status != engine.StatusPending && run.Status != engine.StatusRunning && run.Status != engine.StatusWaiting) {
		return ""
	}
	why, err := q.QueuedBehindLimit(ctx, run.ID)
	if err != nil {
		return ""
	}
	return why
}
