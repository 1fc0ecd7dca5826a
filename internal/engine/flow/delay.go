package flow

import (
	"context"
	"fmt"
	"time"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
)

// timersKey holds a delay stage's due time while the run waits for it, so
// a restart waits for the same moment rather than starting over.
const timersKey = "timers."

// delayStep waits durably: the step returns engine.WaitUntil, the engine
// parks the run (waiting, no checkpoint) with a job scheduled for the due
// time, and when the job runs the step finds the time has come. With a
// poll, it wakes every interval and ends early once the condition holds.
func (c *compiler) delayStep(s *def.Stage, next string) engine.StepDef {
	return c.workStep(s, next, func(ctx context.Context, sc engine.StepContext, env map[string]any, u engine.Update) (engine.Outcome, engine.Update, error) {
		due, _, err := engine.Get[time.Time](sc.State, timersKey+s.ID)
		if err != nil {
			return "", nil, err
		}
		if due.IsZero() {
			if due, err = c.due(s, sc.Now, env); err != nil {
				return "", nil, err
			}
		}
		done := !sc.Now.Before(due)
		if !done && s.Poll != nil {
			if done, err = c.evalBool(s.Poll.Condition.Src, env); err != nil {
				return "", nil, fmt.Errorf("poll: %w", err)
			}
		}
		if done {
			// The timer is spent: a later visit (a loop) waits anew.
			if err := u.Set(timersKey+s.ID, nil); err != nil {
				return "", nil, err
			}
			return engine.OK, u, nil
		}
		wake := due
		if s.Poll != nil && sc.Now.Add(s.Poll.Interval).Before(due) {
			wake = sc.Now.Add(s.Poll.Interval)
		}
		w := engine.Update{}
		if err := w.Set(timersKey+s.ID, due); err != nil {
			return "", nil, err
		}
		return "", w, engine.WaitUntil(wake)
	})
}

// due is when a delay entered now ends: now + duration, or until.
func (c *compiler) due(s *def.Stage, now time.Time, env map[string]any) (time.Time, error) {
	if s.Until == "" {
		return now.Add(s.Duration).UTC(), nil
	}
	v, err := c.value(s.Until, env)
	if err != nil {
		return time.Time{}, fmt.Errorf("until %w", err)
	}
	str, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("until %q is %v, not a time", s.Until, v)
	}
	t, err := time.Parse(time.RFC3339, str)
	if err != nil {
		return time.Time{}, fmt.Errorf("until %q is not an RFC 3339 time: %v", str, err)
	}
	return t.UTC(), nil
}
