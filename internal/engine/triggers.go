package engine

import (
	"context"
	"errors"
	"time"
)

// TriggerKind is how a trigger starts runs.
type TriggerKind string

// The trigger kinds (a definition's trigger: schedule or webhook).
const (
	TriggerSchedule TriggerKind = "schedule"
	TriggerWebhook  TriggerKind = "webhook"
)

// Trigger starts runs of its workflow without a person: on a schedule
// (Scheduler.Tick) or from an inbound webhook (Engine.Fire).
type Trigger struct {
	Workflow string
	Name     string
	Kind     TriggerKind
	// Schedule is the cron spec as written; Next is its first due time
	// strictly after a time. Params are a scheduled run's parameters.
	Schedule string
	Next     func(after time.Time) time.Time `json:"-"`
	Params   map[string]any
}

// Firing is one time a trigger fired: the run it started, or why none.
type Firing struct {
	ID       int64       `json:"id"`
	Workflow string      `json:"workflow"`
	Trigger  string      `json:"trigger"`
	Kind     TriggerKind `json:"kind"`
	At       time.Time   `json:"at"`
	// Due is the slot a schedule fired for; Missed counts the slots
	// after it that passed while the server was down, which fired with it
	// once rather than each.
	Due    *time.Time `json:"due,omitempty"`
	Missed int        `json:"missed,omitempty"`
	RunID  string     `json:"run_id,omitempty"`
	Error  string     `json:"error,omitempty"`
}

// TriggerStore is the persistence triggers need; internal/store
// implements it.
type TriggerStore interface {
	// TriggerDue returns the schedule's stored next due time; a schedule
	// seen for the first time, or whose spec changed, is stored as due at
	// first.
	TriggerDue(ctx context.Context, t Trigger, first time.Time) (time.Time, error)
	// FireSchedule takes the slot f.Due by compare-and-swap (the stored
	// due time is still f.Due; it becomes next) and, in the same
	// transaction, stores run (nil when it could not start) with its
	// first advance and records f. false: another tick took the slot, and
	// nothing was written.
	FireSchedule(ctx context.Context, f Firing, next time.Time, run *Run) (bool, error)
	// RecordFiring records f and, in the same transaction, stores run
	// (nil when it could not start) with its first advance.
	RecordFiring(ctx context.Context, f Firing, run *Run) error
}

// maxMissed bounds counting the slots a long downtime missed (a schedule
// every minute down for a year would count half a million).
const maxMissed = 10000

// Scheduler fires schedule triggers: each due slot starts one run, once,
// across restarts and processes sharing the database.
type Scheduler struct {
	e        *Engine
	st       TriggerStore
	triggers []Trigger
}

// Scheduler returns the scheduler of the schedule triggers of every
// registered workflow.
func (e *Engine) Scheduler() (*Scheduler, error) {
	st, ok := e.cfg.Store.(TriggerStore)
	if !ok {
		return nil, errors.New("engine: this store keeps no triggers")
	}
	s := &Scheduler{e: e, st: st}
	for _, wf := range e.cfg.Registry.List() {
		for _, t := range wf.Triggers {
			if t.Kind == TriggerSchedule && t.Next != nil {
				s.triggers = append(s.triggers, t)
			}
		}
	}
	return s, nil
}

// Len is how many schedules the scheduler fires.
func (s *Scheduler) Len() int { return len(s.triggers) }

// Tick fires every schedule due at now and returns the firings it made.
// A slot missed while nothing ticked fires once, late, with the count of
// slots missed after it; the schedule then waits for its next slot after
// now. Calling Tick twice, or from two processes at once, fires a slot
// once: the slot is taken by compare-and-swap with the run it starts.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) ([]Firing, error) {
	var fired []Firing
	var errs []error
	for _, t := range s.triggers {
		f, ok, err := s.fire(ctx, t, now.UTC())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			fired = append(fired, f)
		}
	}
	return fired, errors.Join(errs...)
}

func (s *Scheduler) fire(ctx context.Context, t Trigger, now time.Time) (Firing, bool, error) {
	due, err := s.st.TriggerDue(ctx, t, t.Next(now))
	if err != nil || due.IsZero() || now.Before(due) {
		return Firing{}, false, err
	}
	next := t.Next(now)
	missed := 0
	for at := t.Next(due); !at.IsZero() && !at.After(now) && missed < maxMissed; at = t.Next(at) {
		missed++
	}
	f := Firing{Workflow: t.Workflow, Trigger: t.Name, Kind: TriggerSchedule, At: now, Due: &due, Missed: missed}
	var run *Run
	if r, err := s.e.newRun(t.Workflow, t.Params); err != nil {
		f.Error = err.Error()
	} else {
		run, f.RunID = &r, r.ID
	}
	ok, err := s.st.FireSchedule(ctx, f, next, run)
	if err != nil || !ok {
		return Firing{}, false, err
	}
	log := s.e.cfg.Logger
	switch {
	case f.Error != "":
		log.Warn("a scheduled trigger could not start its run", "workflow", t.Workflow, "trigger", t.Name, "due", due, "err", f.Error)
	case missed > 0:
		log.Warn("a scheduled trigger fired late, once for missed slots", "workflow", t.Workflow, "trigger", t.Name, "due", due, "missed", missed, "run", f.RunID)
	default:
		log.Info("a scheduled trigger started a run", "workflow", t.Workflow, "trigger", t.Name, "due", due, "run", f.RunID)
	}
	if run != nil {
		s.e.started(ctx, *run)
	}
	return f, true, nil
}

// Fire starts a run of workflow from its webhook trigger name with input
// as params, and records the firing with the run in one transaction. A
// refused input (fault.EInvalid) is recorded as a firing that started
// nothing, and returned. The caller has checked the trigger's token.
func (e *Engine) Fire(ctx context.Context, workflow, name string, input map[string]any) (Run, error) {
	st, ok := e.cfg.Store.(TriggerStore)
	if !ok {
		return Run{}, errors.New("engine: this store keeps no triggers")
	}
	f := Firing{Workflow: workflow, Trigger: name, Kind: TriggerWebhook, At: e.cfg.Now().UTC()}
	r, startErr := e.newRun(workflow, input)
	var run *Run
	if startErr != nil {
		f.Error = startErr.Error()
	} else {
		run, f.RunID = &r, r.ID
	}
	if err := st.RecordFiring(ctx, f, run); err != nil {
		return Run{}, err
	}
	if startErr != nil {
		return Run{}, startErr
	}
	e.started(ctx, r)
	return r, nil
}

// WebhookTrigger returns workflow's webhook trigger called name, or
// false.
func (e *Engine) WebhookTrigger(workflow, name string) (Trigger, bool) {
	wf, err := e.cfg.Registry.Get(workflow)
	if err != nil {
		return Trigger{}, false
	}
	for _, t := range wf.Triggers {
		if t.Kind == TriggerWebhook && t.Name == name {
			return t, true
		}
	}
	return Trigger{}, false
}
