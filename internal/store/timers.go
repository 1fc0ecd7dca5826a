package store

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"
)

// timers make jobs due later start on time in this process. River moves a
// job scheduled for later to available only when its scheduler runs,
// every 5 s (fixed in River v0.51), so a delay of 1 s fired up to 5 s
// late, and so did a branch's retry after its backoff. A commit that
// schedules a job for later therefore also sets a timer here which, when
// due, makes that job available and wakes the workers of its queue: what
// the scheduler would do a few seconds later. The job stays the durable
// record: after a restart, with the timer gone, the scheduler still finds
// it; and a job the scheduler moved first is left alone.
type timers struct {
	mu  sync.Mutex
	set map[*time.Timer]struct{}
}

// promptAt arms a timer for the scheduled job jobID
// of queue, due at at. Call it once the transaction inserting the job
// has committed.
func (s *Store) promptAt(at time.Time, jobID int64, queue string) {
	if s.worker == nil || jobID == 0 {
		return
	}
	s.timers.mu.Lock()
	defer s.timers.mu.Unlock()
	if s.timers.set == nil {
		s.timers.set = map[*time.Timer]struct{}{}
	}
	var t *time.Timer
	t = time.AfterFunc(time.Until(at), func() {
		s.timers.mu.Lock()
		_, live := s.timers.set[t]
		delete(s.timers.set, t)
		s.timers.mu.Unlock()
		if live {
			s.promote(jobID, queue)
		}
	})
	s.timers.set[t] = struct{}{}
}

// promote makes a scheduled job available now and wakes its queue. It
// is only an optimisation (the scheduler does the same later), so an
// error is logged.
func (s *Store) promote(jobID int64, queue string) {
	w := s.worker
	if w == nil {
		return
	}
	ctx := context.Background()
	res, err := s.write.ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE id = ? AND state = 'scheduled'`, jobID)
	if err != nil {
		s.log.Warn("store: make a due job available", "job", jobID, "err", err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return
	}
	if _, err := w.Insert(ctx, wakeArgs{}, &river.InsertOpts{Queue: queue}); err != nil {
		s.log.Warn("store: wake workers", "queue", queue, "err", err)
	}
}

// stopTimers forgets every armed timer (the workers stop).
func (s *Store) stopTimers() {
	s.timers.mu.Lock()
	defer s.timers.mu.Unlock()
	for t := range s.timers.set {
		t.Stop()
	}
	s.timers.set = nil
}
