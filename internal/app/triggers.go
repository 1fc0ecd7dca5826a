package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"quarry/internal/engine"
	"quarry/internal/store"
)

// TriggerTick is how often the server fires due schedules: a schedule
// starts within this of its slot. A tick reads one small table, so an
// idle server stays idle.
const TriggerTick = 20 * time.Second

// NewTriggerToken is a webhook trigger's secret: 256 random bits,
// URL-safe.
func NewTriggerToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("app: trigger token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// startTriggers gives every webhook trigger a token on first sight and,
// when a workflow has a schedule, fires due schedules every TriggerTick
// until ctx ends (Close waits for the loop).
func (a *App) startTriggers(ctx context.Context, loop context.Context) error {
	for _, wf := range a.registry.List() {
		for _, t := range wf.Triggers {
			if t.Kind != engine.TriggerWebhook {
				continue
			}
			tok, err := NewTriggerToken()
			if err != nil {
				return err
			}
			if _, err := a.store.TriggerToken(ctx, t.Workflow, t.Name, tok); err != nil {
				return err
			}
		}
	}
	s, err := a.engine.Scheduler()
	if err != nil {
		return err
	}
	if s.Len() == 0 {
		return nil
	}
	a.loops.Add(1)
	go func() {
		defer a.loops.Done()
		tick := time.NewTicker(TriggerTick)
		defer tick.Stop()
		for {
			if _, err := s.Tick(loop, time.Now()); err != nil && loop.Err() == nil {
				a.logger.Warn("firing scheduled triggers", "err", err)
			}
			select {
			case <-loop.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return nil
}

// runLimits are the bounds on runs executing at once: the workflows'
// own (a definition's concurrency.runs), overridden by
// QUARRY_WORKFLOW_LIMITS for the workflows it names, and
// QUARRY_MAX_ACTIVE_RUNS for all of them together.
func runLimits(cfg Config, reg *engine.Registry) store.RunLimits {
	l := store.RunLimits{Max: cfg.MaxActiveRuns}
	for _, wf := range reg.List() {
		if wf.MaxActiveRuns > 0 {
			if l.PerWorkflow == nil {
				l.PerWorkflow = map[string]int{}
			}
			l.PerWorkflow[wf.Name] = wf.MaxActiveRuns
		}
	}
	for name, n := range cfg.WorkflowLimits {
		if l.PerWorkflow == nil {
			l.PerWorkflow = map[string]int{}
		}
		l.PerWorkflow[name] = n
	}
	return l
}
