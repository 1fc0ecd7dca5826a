package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// insertCheckpointState keeps the run's state at a checkpoint a person is
// asked at, in the commit that raises it, so a fork can start from there.
func insertCheckpointState(ctx context.Context, tx *tx, cpID string, st engine.State) error {
	enc, err := encodeState(st)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_states (checkpoint_id, state) VALUES (?, ?)
		ON CONFLICT (checkpoint_id) DO UPDATE SET state = excluded.state`, cpID, enc); err != nil {
		return fmt.Errorf("store: keep checkpoint state: %w", err)
	}
	return nil
}

// CheckpointState returns the run's state as it was at checkpoint id; a
// checkpoint raised before states were kept is fault.ENotFound.
func (s *Store) CheckpointState(ctx context.Context, id string) (engine.State, error) {
	var raw string
	err := s.read.QueryRowContext(ctx, `SELECT state FROM checkpoint_states WHERE checkpoint_id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fault.Errorf(fault.ENotFound, "checkpoint %s has no kept state (it was raised before forks were possible)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: checkpoint state %s: %w", id, err)
	}
	var st engine.State
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, fmt.Errorf("store: checkpoint state %s: %w", id, err)
	}
	return st, nil
}

// CreateFork inserts a fork's run, its origin, the marks it starts with
// (copyForkMarks) and its first advance job in one transaction.
func (s *Store) CreateFork(ctx context.Context, r engine.Run, from engine.ForkOrigin) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := insertRun(ctx, tx, r); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_forks (run_id, from_run, from_checkpoint, forked_by, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.ID, from.Run, from.Checkpoint, from.By, formatTime(r.CreatedAt)); err != nil {
		return fmt.Errorf("store: record fork: %w", err)
	}
	if err := copyForkMarks(ctx, tx, r.ID, from); err != nil {
		return err
	}
	if err := s.scheduleAdvanceTx(ctx, tx, r.ID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit fork: %w", err)
	}
	return nil
}

// ForkOf returns where run id was forked from (nil for a run that is not
// a fork).
func (s *Store) ForkOf(ctx context.Context, id string) (*engine.ForkOrigin, error) {
	var f engine.ForkOrigin
	err := s.read.QueryRowContext(ctx, `SELECT from_run, from_checkpoint, forked_by FROM run_forks WHERE run_id = ?`, id).Scan(&f.Run, &f.Checkpoint, &f.By)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: fork of %s: %w", id, err)
	}
	return &f, nil
}

// copyForkMarks gives a fork the marks its origin had at the checkpoint it
// forks from: marks live outside the run's state (paper_marks), so a fork
// that took only the state would show its first review unmarked and lose
// the relevant papers earlier reviews accumulated. Every mark of the
// origin is copied except those made at its checkpoints raised after the
// fork's (by rowid: the order they were inserted in), so a fork of a fork
// keeps the marks its own origin gave it. Rows keep their checkpoint,
// author and time: they say where each mark was made.
func copyForkMarks(ctx context.Context, tx *tx, runID string, from engine.ForkOrigin) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO paper_marks
		(run_id, paper_id, checkpoint_id, iteration, mark, note, reason, marked_by, marked_at, resolution)
		SELECT ?, paper_id, checkpoint_id, iteration, mark, note, reason, marked_by, marked_at, resolution
		FROM paper_marks WHERE run_id = ? AND checkpoint_id NOT IN (
			SELECT id FROM checkpoints WHERE run_id = ? AND rowid > (SELECT rowid FROM checkpoints WHERE id = ?))
		ORDER BY seq`, runID, from.Run, from.Run, from.Checkpoint); err != nil {
		return fmt.Errorf("store: copy marks to fork: %w", err)
	}
	return nil
}
