package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// TriggerDue returns the schedule's stored next due time. A schedule
// seen for the first time, or whose spec changed since, is stored as due
// at first (its next slot after now), so it does not fire at once.
func (s *Store) TriggerDue(ctx context.Context, t engine.Trigger, first time.Time) (time.Time, error) {
	var spec string
	var next sql.NullString
	err := s.read.QueryRowContext(ctx, `SELECT spec, next_due FROM workflow_triggers WHERE workflow = ? AND name = ?`, t.Workflow, t.Name).Scan(&spec, &next)
	if err == nil && spec == t.Schedule && next.Valid {
		return parseTime(next.String), nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("store: trigger %s/%s: %w", t.Workflow, t.Name, err)
	}
	// The upsert re-checks the spec, so two processes seeing a new spec
	// at once store one due time.
	due := formatTime(first)
	if _, err := s.write.ExecContext(ctx, `INSERT INTO workflow_triggers (workflow, name, kind, spec, next_due) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (workflow, name) DO UPDATE SET kind = excluded.kind, spec = excluded.spec, next_due = excluded.next_due
		WHERE workflow_triggers.spec IS DISTINCT FROM excluded.spec OR workflow_triggers.next_due IS NULL`,
		t.Workflow, t.Name, string(t.Kind), t.Schedule, due); err != nil {
		return time.Time{}, fmt.Errorf("store: trigger %s/%s: %w", t.Workflow, t.Name, err)
	}
	if err := s.write.QueryRowContext(ctx, `SELECT next_due FROM workflow_triggers WHERE workflow = ? AND name = ?`, t.Workflow, t.Name).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("store: trigger %s/%s: %w", t.Workflow, t.Name, err)
	}
	return parseTime(next.String), nil
}

// FireSchedule takes slot f.Due of a schedule by compare-and-swap and, in
// the same transaction, stores the run it starts (with its first
// advance) and records the firing: a crash either fired the slot with its
// run or left it due. false: the slot was taken already.
func (s *Store) FireSchedule(ctx context.Context, f engine.Firing, next time.Time, run *engine.Run) (bool, error) {
	if f.Due == nil {
		return false, errors.New("store: a schedule's firing has no due time")
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE workflow_triggers SET next_due = ? WHERE workflow = ? AND name = ? AND next_due = ?`,
		formatTime(next), f.Workflow, f.Trigger, formatTime(*f.Due))
	if err != nil {
		return false, fmt.Errorf("store: take trigger slot: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := s.fireTx(ctx, tx, f, run); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: commit trigger firing: %w", err)
	}
	return true, nil
}

// RecordFiring records a webhook's firing and the run it starts (nil:
// none) in one transaction.
func (s *Store) RecordFiring(ctx context.Context, f engine.Firing, run *engine.Run) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.fireTx(ctx, tx, f, run); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit trigger firing: %w", err)
	}
	return nil
}

func (s *Store) fireTx(ctx context.Context, tx *tx, f engine.Firing, run *engine.Run) error {
	if run != nil {
		if err := s.createRunTx(ctx, tx, *run); err != nil {
			return err
		}
	}
	var due any
	if f.Due != nil {
		due = formatTime(*f.Due)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO trigger_firings (workflow, trigger, kind, at, due, missed, run_id, error) VALUES (?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?)`,
		f.Workflow, f.Trigger, string(f.Kind), formatTime(f.At), due, f.Missed, f.RunID, f.Error); err != nil {
		return fmt.Errorf("store: record trigger firing: %w", err)
	}
	return nil
}

// Firings returns the last limit firings of workflow's triggers, newest
// first.
func (s *Store) Firings(ctx context.Context, workflow string, limit int) ([]engine.Firing, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, workflow, trigger, kind, at, due, missed, COALESCE(run_id, ''), error
		FROM trigger_firings WHERE workflow = ? ORDER BY id DESC LIMIT ?`, workflow, limit)
	if err != nil {
		return nil, fmt.Errorf("store: firings of %s: %w", workflow, err)
	}
	defer rows.Close()
	out := []engine.Firing{}
	for rows.Next() {
		var f engine.Firing
		var kind, at string
		var due sql.NullString
		if err := rows.Scan(&f.ID, &f.Workflow, &f.Trigger, &kind, &at, &due, &f.Missed, &f.RunID, &f.Error); err != nil {
			return nil, fmt.Errorf("store: firings of %s: %w", workflow, err)
		}
		f.Kind, f.At = engine.TriggerKind(kind), parseTime(at)
		if due.Valid {
			d := parseTime(due.String)
			f.Due = &d
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// TriggerState is what the store keeps of a trigger: a schedule's next
// due time, a webhook's token.
type TriggerState struct {
	Name    string
	Kind    engine.TriggerKind
	NextDue *time.Time
	Token   string
}

// TriggerStates returns the kept state of workflow's triggers by name.
func (s *Store) TriggerStates(ctx context.Context, workflow string) (map[string]TriggerState, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name, kind, next_due, COALESCE(token, '') FROM workflow_triggers WHERE workflow = ?`, workflow)
	if err != nil {
		return nil, fmt.Errorf("store: triggers of %s: %w", workflow, err)
	}
	defer rows.Close()
	out := map[string]TriggerState{}
	for rows.Next() {
		var t TriggerState
		var kind string
		var next sql.NullString
		if err := rows.Scan(&t.Name, &kind, &next, &t.Token); err != nil {
			return nil, fmt.Errorf("store: triggers of %s: %w", workflow, err)
		}
		t.Kind = engine.TriggerKind(kind)
		if next.Valid {
			n := parseTime(next.String)
			t.NextDue = &n
		}
		out[t.Name] = t
	}
	return out, rows.Err()
}

// TriggerToken returns a webhook trigger's token, storing fresh as its
// token when it has none yet (the trigger's first sight).
func (s *Store) TriggerToken(ctx context.Context, workflow, name, fresh string) (string, error) {
	if fresh == "" {
		return "", errors.New("store: a trigger token cannot be empty")
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO workflow_triggers (workflow, name, kind, token, token_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (workflow, name) DO UPDATE SET token = excluded.token, token_at = excluded.token_at WHERE workflow_triggers.token IS NULL`,
		workflow, name, string(engine.TriggerWebhook), fresh, formatTime(s.Now())); err != nil {
		return "", fmt.Errorf("store: trigger token %s/%s: %w", workflow, name, err)
	}
	var tok string
	if err := s.write.QueryRowContext(ctx, `SELECT token FROM workflow_triggers WHERE workflow = ? AND name = ?`, workflow, name).Scan(&tok); err != nil {
		return "", fmt.Errorf("store: trigger token %s/%s: %w", workflow, name, err)
	}
	return tok, nil
}

// RotateTriggerToken replaces a webhook trigger's token by fresh: the old
// one stops working at once.
func (s *Store) RotateTriggerToken(ctx context.Context, workflow, name, fresh string) error {
	if fresh == "" {
		return errors.New("store: a trigger token cannot be empty")
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO workflow_triggers (workflow, name, kind, token, token_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (workflow, name) DO UPDATE SET token = excluded.token, token_at = excluded.token_at`,
		workflow, name, string(engine.TriggerWebhook), fresh, formatTime(s.Now())); err != nil {
		return fmt.Errorf("store: rotate trigger token %s/%s: %w", workflow, name, err)
	}
	return nil
}

// StoredTriggerToken returns a webhook trigger's token; fault.ENotFound
// when it has none.
func (s *Store) StoredTriggerToken(ctx context.Context, workflow, name string) (string, error) {
	var tok sql.NullString
	err := s.read.QueryRowContext(ctx, `SELECT token FROM workflow_triggers WHERE workflow = ? AND name = ?`, workflow, name).Scan(&tok)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !tok.Valid) {
		return "", fault.Errorf(fault.ENotFound, "trigger %s of workflow %s has no token", name, workflow)
	}
	if err != nil {
		return "", fmt.Errorf("store: trigger token %s/%s: %w", workflow, name, err)
	}
	return tok.String, nil
}
