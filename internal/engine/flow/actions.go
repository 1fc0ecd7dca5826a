package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// Message is a notify action's notice: a JSON POST to Webhook (when set)
// and a mail to Email (when set), both saying Text. internal/notify
// sends it; gate notices can use the same shape.
type Message struct {
	Webhook string
	Email   []string
	Subject string
	Text    string
}

// Export is an export action's request: Papers (each a paper as the
// named skills give them: id, title, authors, …) written in Format to a
// file named File ("" = one named after the run and stage) in the
// configured export directory.
type Export struct {
	RunID  string
	Stage  string
	Papers []map[string]any
	Format string
	File   string
}

// ExportResult is where an export went.
type ExportResult struct {
	Path   string
	Count  int
	Format string
}

// SnapshotResult is the backup a snapshot action made.
type SnapshotResult struct {
	Path  string
	Bytes int64
}

// Actions are the built-in actions' effects outside the run: files,
// notices and backups. main passes them (internal/actions); the engine
// reaches no network or disk itself. Record keeps each attempt in the
// run's audit (engine.ActionRecord).
type Actions interface {
	Export(ctx context.Context, e Export) (ExportResult, error)
	Notify(ctx context.Context, m Message) error
	Snapshot(ctx context.Context, runID string) (SnapshotResult, error)
	Record(ctx context.Context, r engine.ActionRecord) error
}

// Defaults of an action's own retry (Options.ActionAttempts and
// ActionBackoff): a target that does not answer is tried a few times,
// soon, before the failure is recorded.
const (
	DefaultActionAttempts = 3
	DefaultActionBackoff  = 2 * time.Second
)

// The hook steps' ids (engine.Workflow.OnComplete and OnFailure).
const (
	HookComplete = "on_complete"
	HookError    = "on_error"
)

// childrenKey holds the child run a waiting start_workflow stage started,
// and which try it is.
const childrenKey = "children."

type childRecord struct {
	RunID   string `json:"run_id"`
	Attempt int    `json:"attempt"`
}

// actionStep is an action stage naming a built-in. export, notify and
// snapshot run with a few tries of their own, each recorded; when all
// fail the stage goes on with outputs {ok: false, error} unless the stage
// says required: true, when the attempt fails and on_error applies.
// start_workflow starts a child run through the engine.
func (c *compiler) actionStep(s *def.Stage, next string) engine.StepDef {
	return c.workStep(s, next, func(ctx context.Context, sc engine.StepContext, env map[string]any, u engine.Update) (engine.Outcome, engine.Update, error) {
		with, err := c.fields(s.With, env)
		if err != nil {
			return "", nil, fmt.Errorf("with %w", err)
		}
		if s.Action == def.ActionStartWorkflow {
			return c.startWorkflow(ctx, sc, s, with, u)
		}
		if s.Action == def.ActionNotify && text(with["text"]) == "" {
			with["text"] = fmt.Sprintf("Quarry: run %s of %s reached %s", sc.RunID, c.d.Metadata.Name, s.ID)
		}
		out, err := c.runAction(ctx, sc.RunID, s.ID, s.Action, with)
		if err != nil {
			if s.Required || ctx.Err() != nil {
				return "", nil, err
			}
			out = map[string]any{"ok": false, "error": err.Error()}
		}
		if err := u.Set(outputsKey+s.ID, out); err != nil {
			return "", nil, err
		}
		return engine.OK, u, nil
	})
}

// runAction runs export, notify or snapshot, trying again after a short
// backoff while tries remain; every try is recorded under stage.
func (c *compiler) runAction(ctx context.Context, runID, stage, action string, with map[string]any) (map[string]any, error) {
	attempts := max(c.actionAttempts, 1)
	sent := map[string]bool{} // a notice's targets reached: not sent again
	for attempt := 1; ; attempt++ {
		out, err := c.doAction(ctx, runID, stage, action, with, sent)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rec := engine.ActionRecord{RunID: runID, Stage: stage, Action: action, Attempt: attempt, Status: engine.ActionOK}
		if err != nil {
			rec.Status, rec.Error = engine.ActionFailed, err.Error()
		}
		if rerr := c.record(ctx, rec); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		// A refusal (a host off the allowlist, nothing configured, a bad
		// value) is not tried again: only an unreachable target is.
		var invalid *invalidAction
		if err == nil || attempt >= attempts || errors.As(err, &invalid) || fault.ErrorCode(err) == fault.EInvalid {
			return out, err
		}
		t := time.NewTimer(c.actionBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// record keeps an action attempt in the run's audit; without Actions (a
// definition whose hooks only start runs) there is nowhere to keep it.
func (c *compiler) record(ctx context.Context, r engine.ActionRecord) error {
	if c.actions == nil {
		return nil
	}
	return c.actions.Record(ctx, r)
}

// invalidAction is a with value no retry can fix (wrong type).
type invalidAction struct{ msg string }

func (e *invalidAction) Error() string { return e.msg }

func invalid(format string, args ...any) error {
	return &invalidAction{msg: fmt.Sprintf(format, args...)}
}

// doAction makes one attempt; sent records which of a notice's targets
// (webhook, email) it reached, so a try after a failure sends only to
// the others.
func (c *compiler) doAction(ctx context.Context, runID, stage, action string, with map[string]any, sent map[string]bool) (map[string]any, error) {
	switch action {
	case def.ActionExport:
		e := Export{RunID: runID, Stage: stage}
		papers, ok := with["papers"].([]any)
		if !ok && with["papers"] != nil {
			return nil, invalid("export: papers is %T, not a list of papers", with["papers"])
		}
		for i, p := range papers {
			m, ok := p.(map[string]any)
			if !ok {
				return nil, invalid("export: papers[%d] is %T, not a paper", i, p)
			}
			e.Papers = append(e.Papers, m)
		}
		e.Format, _ = with["format"].(string)
		e.File = text(with["file"])
		res, err := c.actions.Export(ctx, e)
		if err != nil {
			return nil, err
		}
		return map[string]any{"path": res.Path, "count": res.Count, "format": res.Format}, nil
	case def.ActionNotify:
		m := Message{Webhook: text(with["webhook"]), Subject: text(with["subject"]), Text: text(with["text"])}
		switch to := with["email"].(type) {
		case nil:
		case string:
			m.Email = []string{to}
		case []any:
			for _, a := range to {
				m.Email = append(m.Email, text(a))
			}
		default:
			return nil, invalid("notify: email is %T, not an address or a list", to)
		}
		var errs []error
		if m.Webhook != "" && !sent["webhook"] {
			one := m
			one.Email = nil
			if err := c.actions.Notify(ctx, one); err != nil {
				errs = append(errs, err)
			} else {
				sent["webhook"] = true
			}
		}
		if len(m.Email) > 0 && !sent["email"] {
			one := m
			one.Webhook = ""
			if err := c.actions.Notify(ctx, one); err != nil {
				errs = append(errs, err)
			} else {
				sent["email"] = true
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		return map[string]any{"ok": true}, nil
	case def.ActionSnapshot:
		res, err := c.actions.Snapshot(ctx, runID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"path": res.Path, "bytes": res.Bytes}, nil
	}
	return nil, invalid("action %q is not a built-in", action)
}

// startWorkflow starts the child run. Without wait the stage ends at once
// with outputs {run_id}. With wait the run waits (durably: the engine
// commits the child with the parent's waiting state) and the stage runs
// again when the child ends: completed, its outputs are {run_id, status,
// outputs, context} of the child; failed or canceled, a new child is
// started while on_error.retry allows, and then the stage stops with
// on_error.then.
func (c *compiler) startWorkflow(ctx context.Context, sc engine.StepContext, s *def.Stage, with map[string]any, u engine.Update) (engine.Outcome, engine.Update, error) {
	name, _ := with["workflow"].(string)
	params, _ := with["params"].(map[string]any)
	wait := true
	if w, ok := with["wait"].(bool); ok {
		wait = w
	}
	if !wait {
		return "", nil, engine.StartChild(engine.ChildRun{Workflow: name, Params: params, Record: func(id string) (engine.Update, error) {
			out := engine.Update{}
			for k, v := range u {
				out[k] = v
			}
			return out, out.Set(outputsKey+s.ID, map[string]any{"run_id": id})
		}})
	}
	spawn := func(attempt int) error {
		return engine.StartChild(engine.ChildRun{Workflow: name, Params: params, Wait: true, Record: func(id string) (engine.Update, error) {
			return engine.NewUpdate(map[string]any{childrenKey + s.ID: childRecord{RunID: id, Attempt: attempt}})
		}})
	}
	rec, ok, err := engine.Get[childRecord](sc.State, childrenKey+s.ID)
	if err != nil {
		return "", nil, err
	}
	if !ok || rec.RunID == "" {
		return "", nil, spawn(1)
	}
	child, err := sc.ReadRun(ctx, rec.RunID)
	if err != nil {
		return "", nil, err
	}
	if !child.IsComplete() {
		return "", nil, engine.WaitUntil(time.Time{}) // woken by the child's end
	}
	forget, err := engine.NewUpdate(map[string]any{childrenKey + s.ID: nil})
	if err != nil {
		return "", nil, err
	}
	if child.Status != engine.StatusCompleted {
		if rec.Attempt < retry(s).MaxAttempts {
			return "", nil, spawn(rec.Attempt + 1)
		}
		return "", nil, engine.StopWith(fmt.Errorf("sub-workflow %s run %s %s: %s", name, child.ID, child.Status, child.Error), retry(s).Then, forget)
	}
	outs, err := Outputs(child.State)
	if err != nil {
		return "", nil, err
	}
	cx, err := Context(child.State)
	if err != nil {
		return "", nil, err
	}
	out, err := plainJSON(map[string]any{"run_id": child.ID, "status": string(child.Status), "outputs": outs, "context": cx})
	if err != nil {
		return "", nil, err
	}
	for k, v := range forget {
		u[k] = v
	}
	if err := u.Set(outputsKey+s.ID, out); err != nil {
		return "", nil, err
	}
	return engine.OK, u, nil
}

// plainJSON turns v into the plain values expressions read (maps, lists,
// float64 numbers).
func plainJSON(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// hookStep runs a workflow's on_complete or on_error actions in order
// (start_workflow last, without waiting: a hook starts a run, it does not
// wait for one). A failed action is recorded and the others still run;
// a required one's failure fails the step: for on_complete the run then
// fails (and its on_error hooks run), for on_error it fails anyway.
func (c *compiler) hookStep(id string, hooks []*def.Hook) engine.StepDef {
	h := func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		env, err := c.env(sc.Params, sc.State)
		if err != nil {
			return "", nil, err
		}
		var failed []error
		var child *engine.ChildRun
		for _, hk := range hooks {
			with, err := c.fields(hk.With, env)
			if err != nil {
				// A value that cannot be evaluated is the hook's failure,
				// recorded like one, not the run's.
				err = fmt.Errorf("with %w", err)
				rec := engine.ActionRecord{RunID: sc.RunID, Stage: id, Action: hk.Action, Attempt: 1, Status: engine.ActionFailed, Error: err.Error()}
				if rerr := c.record(ctx, rec); rerr != nil {
					return "", nil, rerr
				}
				if hk.Required {
					failed = append(failed, fmt.Errorf("%s %s (required): %w", id, hk.Action, err))
				}
				continue
			}
			if hk.Action == def.ActionStartWorkflow {
				name, _ := with["workflow"].(string)
				params, _ := with["params"].(map[string]any)
				child = &engine.ChildRun{Workflow: name, Params: params}
				continue
			}
			if hk.Action == def.ActionNotify && text(with["text"]) == "" {
				with["text"] = c.hookText(sc, id)
			}
			if _, err := c.runAction(ctx, sc.RunID, id, hk.Action, with); err != nil {
				if ctx.Err() != nil {
					return "", nil, ctx.Err()
				}
				if hk.Required {
					failed = append(failed, fmt.Errorf("%s %s (required): %w", id, hk.Action, err))
				}
			}
		}
		if len(failed) > 0 {
			return "", nil, errors.Join(failed...)
		}
		if child != nil {
			return "", nil, engine.StartChild(*child)
		}
		return engine.OK, nil, nil
	}
	return engine.StepDef{ID: id, Title: id, Handler: h, Next: engine.Next{engine.OK: engine.End},
		Retry: engine.RetryPolicy{MaxAttempts: 1, Then: engine.Fail}}
}

// hookText is a hook notice's default text.
func (c *compiler) hookText(sc engine.StepContext, id string) string {
	if id == HookError {
		msg, _, _ := engine.Get[string](sc.State, engine.FailureKey)
		return fmt.Sprintf("Quarry: run %s of %s failed: %s", sc.RunID, c.d.Metadata.Name, msg)
	}
	return fmt.Sprintf("Quarry: run %s of %s completed", sc.RunID, c.d.Metadata.Name)
}
