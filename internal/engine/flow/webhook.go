package flow

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
)

// WebhookCall is a webhook stage's request, its templates filled, and what
// its answer must be.
type WebhookCall struct {
	Method  string
	URL     string
	Headers map[string]string
	// Body is sent as JSON when not nil.
	Body any
	// Status are the statuses that count as success (empty: any 2xx);
	// JSON, when not nil, a subset the answer's JSON must contain.
	Status []int
	JSON   any
}

// WebhookAnswer is what a webhook answered.
type WebhookAnswer struct {
	Status int
	JSON   any
}

// Webhook makes a webhook stage's call. The engine reaches no network
// itself: main passes a caller (internal/webhook) that knows the host
// allowlist, and whose errors carry no secret.
type Webhook func(ctx context.Context, call WebhookCall) (WebhookAnswer, error)

// webhookStep calls the stage's webhook and records the answer as
// outputs.<stage>.status and outputs.<stage>.json. A failed call is a
// failed attempt, which on_error retries, escalates, or leaves by goto.
// The request's secrets are filled in for the call only: neither the
// request nor its secrets are stored.
func (c *compiler) webhookStep(s *def.Stage, next string) engine.StepDef {
	return c.workStep(s, next, func(ctx context.Context, sc engine.StepContext, env map[string]any, u engine.Update) (engine.Outcome, engine.Update, error) {
		call, err := c.webhookCall(s, env)
		if err != nil {
			return "", nil, err
		}
		run := ctx
		if s.Timeout > 0 {
			var cancel context.CancelFunc
			run, cancel = context.WithTimeout(ctx, s.Timeout)
			defer cancel()
		}
		a, err := c.webhook(run, call)
		if err != nil {
			if ctx.Err() == nil && errors.Is(run.Err(), context.DeadlineExceeded) {
				return "", nil, fmt.Errorf("timed out after %s: %w", s.Timeout, err)
			}
			return "", nil, err
		}
		if err := u.Set(outputsKey+s.ID, map[string]any{"status": a.Status, "json": a.JSON}); err != nil {
			return "", nil, err
		}
		return engine.OK, u, nil
	})
}

// webhookCall fills the stage's request templates, with the secrets in
// scope (in the request only).
func (c *compiler) webhookCall(s *def.Stage, env map[string]any) (WebhookCall, error) {
	renv := make(map[string]any, len(env)+1)
	for k, v := range env {
		renv[k] = v
	}
	renv["secrets"] = c.secrets
	r := s.Request
	call := WebhookCall{Method: r.Method, Headers: map[string]string{}}
	u, err := c.value(r.URL, renv)
	if err != nil {
		return call, fmt.Errorf("request.url: %w", err)
	}
	call.URL = text(u)
	for _, f := range r.Headers {
		v, err := c.value(f.Value, renv)
		if err != nil {
			return call, fmt.Errorf("request.headers.%s: %w", f.Key, err)
		}
		call.Headers[f.Key] = text(v)
	}
	if r.Body != nil {
		if call.Body, err = c.value(r.Body, renv); err != nil {
			return call, fmt.Errorf("request.body: %w", err)
		}
	}
	if e := s.Expect; e != nil {
		call.Status = e.Status
		if e.JSON != nil {
			if call.JSON, err = c.value(e.JSON, env); err != nil {
				return call, fmt.Errorf("expect.json: %w", err)
			}
		}
	}
	return call, nil
}
