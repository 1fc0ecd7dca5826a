package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"quarry/internal/engine"
)

// insertParent records where a child run was started (engine.StartChild).
func insertParent(ctx context.Context, tx *tx, r engine.Run) error {
	if r.Parent == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_parents (run_id, parent_run, parent_step, wait, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.ID, r.Parent.RunID, r.Parent.Step, r.Parent.Wait, formatTime(r.CreatedAt)); err != nil {
		return fmt.Errorf("store: record parent run: %w", err)
	}
	return nil
}

// wakeParent queues the advance of the run waiting for child runID, if
// any, in the transaction that ends the child: the parent is woken exactly
// when the child's end is committed. It reports whether it queued a job.
func (s *Store) wakeParent(ctx context.Context, tx *tx, runID string) (bool, error) {
	var parent string
	err := tx.QueryRowContext(ctx, `SELECT parent_run FROM run_parents WHERE run_id = ? AND wait = 1`, runID).Scan(&parent)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: find parent run: %w", err)
	}
	return true, s.scheduleAdvanceTx(ctx, tx, parent)
}

// RunParent returns where run id was started from (nil for a run no step
// started).
func (s *Store) RunParent(ctx context.Context, id string) (*engine.Parent, error) {
	var p engine.Parent
	err := s.read.QueryRowContext(ctx, `SELECT parent_run, parent_step, wait FROM run_parents WHERE run_id = ?`, id).Scan(&p.RunID, &p.Step, &p.Wait)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: parent run: %w", err)
	}
	return &p, nil
}

// RunChildren lists the runs run id's steps started, oldest first.
func (s *Store) RunChildren(ctx context.Context, id string) ([]engine.ChildLink, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT p.run_id, r.workflow, p.parent_step, p.wait, r.status
		FROM run_parents p JOIN runs r ON r.id = p.run_id WHERE p.parent_run = ? ORDER BY p.created_at, p.run_id`, id)
	if err != nil {
		return nil, fmt.Errorf("store: child runs: %w", err)
	}
	defer rows.Close()
	out := []engine.ChildLink{}
	for rows.Next() {
		var c engine.ChildLink
		var st string
		if err := rows.Scan(&c.RunID, &c.Workflow, &c.Step, &c.Wait, &st); err != nil {
			return nil, err
		}
		c.Status = engine.Status(st)
		out = append(out, c)
	}
	return out, rows.Err()
}

// RecordAction appends one attempt of a built-in action to the run's
// audit.
func (s *Store) RecordAction(ctx context.Context, a engine.ActionRecord) error {
	if a.At.IsZero() {
		a.At = s.Now()
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO run_actions (run_id, stage, action, attempt, status, error, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.RunID, a.Stage, a.Action, a.Attempt, a.Status, a.Error, formatTime(a.At)); err != nil {
		return fmt.Errorf("store: record action: %w", err)
	}
	return nil
}

// RunActions lists run id's recorded actions in the order they ran.
func (s *Store) RunActions(ctx context.Context, id string) ([]engine.ActionRecord, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT stage, action, attempt, status, error, at FROM run_actions WHERE run_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("store: run actions: %w", err)
	}
	defer rows.Close()
	out := []engine.ActionRecord{}
	for rows.Next() {
		a := engine.ActionRecord{RunID: id}
		var at string
		if err := rows.Scan(&a.Stage, &a.Action, &a.Attempt, &a.Status, &a.Error, &at); err != nil {
			return nil, err
		}
		a.At = parseTime(at)
		out = append(out, a)
	}
	return out, rows.Err()
}
