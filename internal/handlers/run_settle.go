package handlers

import (
	"context"
	"time"

	"quarry/internal/engine"
)

// settleWait bounds how long a form that set a run going (start, a
// checkpoint decision) holds its redirect while the run works. On the
// local library the next checkpoint comes 10-300 ms later, so the page the
// browser then loads already shows its form: one page load instead of a
// "running" page, its event stream, a status request and a second page
// load. A run that takes longer (network sources) gets its running page
// after this, which follows it through the event stream. 2 s: on a loaded
// machine (the race detector, two cores shared by browser tests) the
// local search took over 750 ms, and the running page then reloaded to
// show the review the moment it came.
const settleWait = 2 * time.Second

// settle waits, at most settleWait, until run id stops for a person or
// ends (see changesPage), or ctx or done ends first. It never fails: at
// worst the page shows the run still running, as it did before.
func settle(ctx context.Context, e *engine.Engine, rs RunStore, id string, done <-chan struct{}) {
	// Subscribed before the run is read, so the event of a run settling
	// between the read and the wait is not missed.
	events, stop := e.Events().Subscribe(id)
	defer stop()
	run, err := rs.Run(ctx, id)
	if err != nil || (run.Status != engine.StatusPending && run.Status != engine.StatusRunning) {
		return
	}
	timer := time.NewTimer(settleWait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-timer.C:
			return
		case ev, ok := <-events:
			if !ok || (changesPage(ev) && ev.Type != engine.EventDecision) {
				return
			}
		}
	}
}
