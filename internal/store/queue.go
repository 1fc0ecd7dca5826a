package store

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// Advancer is what the queue's worker calls: engine.Engine implements it.
type Advancer interface {
	Advance(ctx context.Context, runID string) error
}

// AdvanceArgs is the River job that advances one run. Jobs are idempotent:
// advancing a run with nothing to do is a no-op, so duplicates are harmless.
type AdvanceArgs struct {
	RunID string `json:"run_id"`
}

// Kind implements river.JobArgs.
func (AdvanceArgs) Kind() string { return "advance_run" }

type advanceWorker struct {
	river.WorkerDefaults[AdvanceArgs]
	adv     Advancer
	store   *Store
	onStart func(kind string, wait time.Duration)
	limits  RunLimits
	timeout time.Duration // jobTimeout's answer
}

// Work advances the run; an error makes River retry the job with backoff.
// A full disk or a busy database is not the run's fault and passes: the
// job keeps its worker, waits until the database takes writes again
// (polling gently, so a full disk does not turn into a loop of errors) and
// advances the run again at once. Returning the error instead would leave
// the job stuck, since River could not record the failure either, until
// its rescuer ran many minutes later.
func (w *advanceWorker) Work(ctx context.Context, job *river.Job[AdvanceArgs]) error {
	if w.onStart != nil && job.AttemptedAt != nil {
		w.onStart(job.Kind, max(0, job.AttemptedAt.Sub(job.ScheduledAt)))
	}
	if w.limits.active() {
		return w.store.withSlot(ctx, w.limits, job.Args.RunID, job.ID, func() error { return w.advance(ctx, job) })
	}
	return w.advance(ctx, job)
}

// advance advances the run, waiting out a full disk or busy database.
func (w *advanceWorker) advance(ctx context.Context, job *river.Job[AdvanceArgs]) error {
	for {
		err := w.adv.Advance(ctx, job.Args.RunID)
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return err
		}
		w.store.log.Warn("store: a run waits for the database to take writes again", "run", job.Args.RunID, "err", err)
		if err := w.store.waitWritable(ctx); err != nil {
			return err
		}
		w.store.log.Info("store: the database takes writes again; the run goes on", "run", job.Args.RunID)
	}
}

// Timeout is jobTimeout: none on SQLite, the rescue bound on PostgreSQL.
func (w *advanceWorker) Timeout(*river.Job[AdvanceArgs]) time.Duration { return w.timeout }

// jobTimeout is how long River lets a run's or branch's job work. On
// SQLite, none: a step (a slow source, a retry backoff) may take long, the
// engine's own retry policy bounds it, and the one process re-enqueues its
// runs when it restarts (engine.Recover). On PostgreSQL, rescueAfter:
// River's rescuer never takes a job without a positive timeout (it could
// still be working), so without one a replica killed mid-step would hold
// its run until some replica restarted. With it, a job whose process died
// is run again by another replica once rescueAfter has passed, and a live
// job still working then is canceled (and retried from the run's last
// commit) rather than run twice at once.
func (s *Store) jobTimeout(rescueAfter time.Duration) time.Duration {
	if s.postgres() {
		return rescueAfter
	}
	return -1
}

// wakeArgs is a no-op job. River's SQLite driver has no LISTEN/NOTIFY, and
// a job inserted inside our transaction (InsertTx) does not wake the local
// producer; a non-transactional insert through the worker client does. So
// after committing a transaction that queued an advance, we insert one of
// these to have the advance picked up at once instead of at the next poll.
type wakeArgs struct{}

// Kind implements river.JobArgs.
func (wakeArgs) Kind() string { return "wake" }

type wakeWorker struct {
	river.WorkerDefaults[wakeArgs]
}

// Work does nothing: the job exists only to trigger a fetch.
func (wakeWorker) Work(context.Context, *river.Job[wakeArgs]) error { return nil }

// Wake nudges this process's workers to fetch now; it is only an
// optimisation (the poll would find the job anyway), so errors are logged.
// The engine calls it after committing a run or a decision and publishing
// the event that announces it, so watchers see the decision before the
// steps it resumes.
func (s *Store) Wake(ctx context.Context) {
	w := s.worker
	if w == nil {
		return
	}
	if _, err := w.Insert(ctx, wakeArgs{}, nil); err != nil {
		s.log.Warn("store: wake workers", "err", err)
	}
}

// DefaultFetchPollInterval is how often idle workers look for jobs. River
// runs here without notifications (localDriver), but every job this
// process queues wakes its workers at once (Wake, ScheduleAdvance), so
// polling only finds jobs queued by another process; polling rarely keeps
// an idle server idle (a fetch costs a few ms of CPU: 2 s keeps an idle
// server under 1 % of a core, make bench's engine: idle_cpu_pct) and a
// full disk from turning the queue's failed fetches into a busy loop.
const DefaultFetchPollInterval = 2 * time.Second

// DefaultBranchWorkers bounds the branches running at once: enough to
// overlap branches that wait on sources or webhooks, few enough that a
// for_each over hundreds of items does not flood them.
const DefaultBranchWorkers = 8

// DefaultRescueAfter is how long a run's or branch's job may run on
// PostgreSQL (QueueOptions.RescueAfter, jobTimeout). A job whose replica
// died mid-step (kill -9, a lost machine) stays "running" in River's
// table; once it has run this long, River's rescuer (on the elected
// leader) queues it again and another replica finishes the run from its
// last commit. River has no heartbeat, so a live job reaching the bound is
// canceled and retried too: the bound must lie above the longest job a
// live replica runs. One job advances a run step after step until it
// waits (a gate, a delay, its branches), and the slowest bounded calls a
// step makes are a language-model request (90 s, tried 3 times: 4.5 min),
// a source's searches (30 s each) and a webhook stage's attempt (30 s). A
// quarter of an hour is over three times the slowest of them and a
// quarter of River's default hour, so a run held by a dead replica resumes
// within about 15 minutes. Stages given longer timeouts need a longer
// bound (QUARRY_JOB_RESCUE_AFTER). On SQLite jobs have no timeout and are
// never rescued (the one process re-enqueues its runs when it restarts),
// as before.
const DefaultRescueAfter = 15 * time.Minute

// branchPollFactor makes the branch queue poll this many times less often
// than the run queue.
const branchPollFactor = 10

// QueueOptions tune the job queue.
type QueueOptions struct {
	// Workers is how many runs advance at once (default 4).
	Workers int
	// BranchWorkers is how many branches of parallel stages run at once,
	// across runs (default DefaultBranchWorkers).
	BranchWorkers int
	// FetchPollInterval is how often the workers look for due jobs that
	// nothing announced (default DefaultFetchPollInterval).
	FetchPollInterval time.Duration
	// Limits bound the runs executing at once (zero: only Workers does,
	// per process).
	Limits RunLimits
	// RescueAfter is how long a job may run before it is taken for
	// abandoned by a dead process and run again (default
	// DefaultRescueAfter); on PostgreSQL it is also the jobs' timeout
	// (jobTimeout). Tests of a killed replica shorten it.
	RescueAfter time.Duration
	// OnJobStart, if set, is told when a worker starts a run's job and how
	// long the job waited since it was due (metrics). It is called from
	// the workers' goroutines, so it must be safe for concurrent use.
	OnJobStart func(kind string, wait time.Duration)
}

// StartWorkers starts River's workers, which advance runs as jobs arrive.
func (s *Store) StartWorkers(ctx context.Context, adv Advancer, opts QueueOptions) error {
	if s.worker != nil {
		return fmt.Errorf("store: workers already started")
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.FetchPollInterval <= 0 {
		opts.FetchPollInterval = DefaultFetchPollInterval
	}
	if opts.RescueAfter <= 0 {
		opts.RescueAfter = DefaultRescueAfter
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &advanceWorker{adv: adv, store: s, onStart: opts.OnJobStart, limits: opts.Limits,
		timeout: s.jobTimeout(opts.RescueAfter)}); err != nil {
		return fmt.Errorf("store: register worker: %w", err)
	}
	if err := river.AddWorkerSafely(workers, wakeWorker{}); err != nil {
		return fmt.Errorf("store: register worker: %w", err)
	}
	if badv, ok := adv.(BranchAdvancer); ok {
		if err := river.AddWorkerSafely(workers, &branchWorker{adv: badv, store: s, timeout: s.jobTimeout(opts.RescueAfter)}); err != nil {
			return fmt.Errorf("store: register worker: %w", err)
		}
	}
	if fire, ok := adv.(TimerFirer); ok {
		if err := river.AddWorkerSafely(workers, &gateTimerWorker{fire: fire}); err != nil {
			return fmt.Errorf("store: register worker: %w", err)
		}
	}
	if opts.BranchWorkers <= 0 {
		opts.BranchWorkers = DefaultBranchWorkers
	}
	cooldown := time.Millisecond
	if opts.FetchPollInterval < cooldown {
		cooldown = opts.FetchPollInterval
	}
	c, err := river.NewClient(s.riverDriver(), &river.Config{
		Logger: quietLogger(s.log),
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.Workers},
			// Every branch job is queued by this process, which wakes the
			// queue (WakeBranches, ScheduleBranch, promptAt): its poll is
			// only a fallback, kept rare so an idle server stays idle.
			BranchQueue: {MaxWorkers: opts.BranchWorkers, FetchPollInterval: branchPollFactor * opts.FetchPollInterval}},
		Workers:              workers,
		FetchCooldown:        cooldown,
		FetchPollInterval:    opts.FetchPollInterval,
		JobTimeout:           -1,
		RescueStuckJobsAfter: opts.RescueAfter,
		MaxAttempts:          10,
	})
	if err != nil {
		return fmt.Errorf("store: river worker client: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("store: start workers: %w", err)
	}
	s.worker = c
	return nil
}

// StopWorkers stops the workers, letting jobs in flight finish.
func (s *Store) StopWorkers(ctx context.Context) error {
	if s.worker == nil {
		return nil
	}
	s.stopTimers()
	err := s.worker.Stop(ctx)
	s.worker = nil
	return err
}

// ScheduleAdvance queues an advance of the run, through this process's
// workers when they run, so they pick it up at once.
func (s *Store) ScheduleAdvance(ctx context.Context, runID string) error {
	c := s.jobs
	if s.worker != nil {
		c = s.worker
	}
	if _, err := c.Insert(ctx, AdvanceArgs{RunID: runID}, nil); err != nil {
		return fmt.Errorf("store: schedule run %s: %w", runID, err)
	}
	return nil
}

// scheduleAdvanceTx queues an advance inside tx, so the job exists exactly
// when what it acts on (a new run, a decision) is committed.
func (s *Store) scheduleAdvanceTx(ctx context.Context, tx *tx, runID string) error {
	if _, err := s.jobs.InsertTx(ctx, tx.Tx, AdvanceArgs{RunID: runID}, nil); err != nil {
		return fmt.Errorf("store: schedule run %s: %w", runID, err)
	}
	return nil
}

// scheduleAdvanceAtTx queues an advance due at `at` inside tx: a run
// waiting on a timer and the job that wakes it commit together. It
// returns the job's ID, for promptAt once tx has committed.
func (s *Store) scheduleAdvanceAtTx(ctx context.Context, tx *tx, runID string, at time.Time) (int64, error) {
	res, err := s.jobs.InsertTx(ctx, tx.Tx, AdvanceArgs{RunID: runID}, &river.InsertOpts{ScheduledAt: at})
	if err != nil {
		return 0, fmt.Errorf("store: schedule run %s at %s: %w", runID, at.Format(time.RFC3339), err)
	}
	return res.Job.ID, nil
}

// riverHolds is, on PostgreSQL, a condition (starting AND) keeping only
// rows for which River holds no job of kind still to be worked (match
// relates the job j to the row): recovery at start leaves those to River,
// whose workers on every replica fetch them and whose rescuer re-queues
// the ones a dead replica was running. On SQLite, "": the one process
// that starts is the only one that could have been working them, and a
// job left running by its crash is never rescued (no timeout).
func (s *Store) riverHolds(kind, match string) string {
	if !s.postgres() {
		return ""
	}
	return `AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.kind = '` + kind + `'
		AND j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled') AND ` + match + `)`
}

// localDriver is River's SQLite driver without its notifications. That
// driver emulates LISTEN/NOTIFY with an outbox table it polls every 50 ms,
// so a job waited 25 ms on average before a worker saw it, and an idle
// server woke twenty times a second. Without a listener River triggers
// this process's workers the moment a job is inserted outside a
// transaction (Wake, ScheduleAdvance), and finds anything else (jobs due
// later, jobs queued by another process) at FetchPollInterval.
type localDriver struct{ *riversqlite.Driver }

// SupportsListener implements riverdriver.Driver.
func (localDriver) SupportsListener() bool { return false }

// SupportsListenNotify implements riverdriver.Driver.
func (localDriver) SupportsListenNotify() bool { return false }
