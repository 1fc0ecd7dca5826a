package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/views"
)

// keepAlive is how often an idle event stream sends a comment, so proxies
// and browsers do not drop it.
const keepAlive = 15 * time.Second

// Events handles GET /runs/:id/events: a text/event-stream of rendered
// progress lines ("progress") and status pings ("status") for the htmx SSE
// extension, and each mark stored at the run's review as JSON ("mark", a
// MarkEvent), which static/app.js sets on the paper in place. It ends
// when the client goes or the server stops.
//
// Its first message ("state") is the run's current state (streamState):
// a transition made before the client connected (the strategy checkpoint
// is reached milliseconds after a run starts, before its page has loaded)
// would otherwise reach the page only at its next poll. The page names the
// checkpoint and status it was drawn with (cp and s, as its status poll
// does); when the run has moved on since, a status ping follows at once,
// so the page fetches its new form without waiting for an event.
func (h *Runs) Events(c echo.Context) error {
	ctx := c.Request().Context()
	// Subscribed before the state is read, so no event falls between the
	// state sent and the first event streamed.
	events, stop := h.engine.Events().Subscribe(c.Param("id"))
	defer stop()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	state, err := json.Marshal(streamStateOf(run))
	if err != nil {
		return err
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/event-stream")
	res.Header().Set(echo.HeaderCacheControl, "no-cache")
	res.Header().Set("X-Accel-Buffering", "no")
	res.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(res, ": connected\n\n"); err != nil {
		return nil
	}
	if err := writeSSE(res, "state", string(state)); err != nil {
		return nil
	}
	if q := c.QueryParams(); q.Has("s") && pageChanged(q.Get("cp"), q.Get("s"), run) {
		if err := writeSSE(res, "status", ""); err != nil {
			return nil
		}
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
			if m, ok := markOf(ev); ok {
				// The progress line above already told it; the page sets
				// the paper from this.
				if data, err := json.Marshal(m); err == nil {
					if err := writeSSE(res, "mark", string(data)); err != nil {
						return nil
					}
				}
			}
			if changesPage(ev) {
				if err := writeSSE(res, "status", ""); err != nil {
					return nil
				}
			}
		}
		res.Flush()
	}
}

// markOf is a mark event's data: a MarkEvent when this process saved the
// mark, its JSON decoded when another replica did (the event came through
// the database's relay).
func markOf(ev engine.Event) (MarkEvent, bool) {
	if ev.Type != EventMark {
		return MarkEvent{}, false
	}
	if m, ok := ev.Data.(MarkEvent); ok {
		return m, true
	}
	raw, err := json.Marshal(ev.Data)
	if err != nil {
		return MarkEvent{}, false
	}
	var m MarkEvent
	return m, json.Unmarshal(raw, &m) == nil && m.PaperID != ""
}

// changesPage reports whether ev may change what the run's page shows, so
// the page must fetch its status: a checkpoint raised (the run waits or
// is escalated; the engine publishes it after the commit) or decided, the
// run parked (a delay, a parallel stage's branches), or the run ended.
// Every step's commit publishes a status event, "running"
// for all but the last, which the page draws like any other running one:
// pinging on those only kept status requests in flight, and the ping that
// mattered could be lost behind them (see views.RunLive).
func changesPage(ev engine.Event) bool {
	switch ev.Type {
	case engine.EventCheckpoint, engine.EventDecision:
		return true
	case engine.EventStatus:
		// waiting: parked on a timer or on branches (a checkpoint also
		// publishes its own event), so nothing more comes soon.
		return ev.Status.IsComplete() || ev.Status == engine.StatusWaiting
	}
	return false
}

// streamState is the event stream's first message: where the run is when
// the client connects.
type streamState struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Iteration    int    `json:"iteration"`
	Step         string `json:"step,omitempty"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
	Error        string `json:"error,omitempty"`
}

func streamStateOf(run engine.Run) streamState {
	return streamState{ID: run.ID, Status: string(run.Status), Iteration: run.Iteration, Step: run.Step,
		CheckpointID: run.CheckpointID, Error: run.Error}
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
