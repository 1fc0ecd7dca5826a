package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"quarry/internal/engine"
)

// CreateRunAt inserts a run started at a stage (engine.StartAt), where it
// started, its definition text and its first advance job in one
// transaction.
func (s *Store) CreateRunAt(ctx context.Context, r engine.Run, from engine.StartOrigin) error {
	given, err := json.Marshal(from.Given)
	if err != nil {
		return fmt.Errorf("store: encode given keys: %w", err)
	}
	if from.Given == nil {
		given = []byte("[]")
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := insertRun(ctx, tx, r); err != nil {
		return err
	}
	if r.Source != nil {
		if err := insertSource(ctx, tx, *r.Source, r.CreatedAt); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_starts (run_id, stage, given, started_by, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.ID, from.Stage, string(given), from.By, formatTime(r.CreatedAt)); err != nil {
		return fmt.Errorf("store: record where the run started: %w", err)
	}
	if err := s.scheduleAdvanceTx(ctx, tx, r.ID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit run: %w", err)
	}
	return nil
}

// StartOf returns where run id was started when it was started at a
// stage (nil for a run started the ordinary way).
func (s *Store) StartOf(ctx context.Context, id string) (*engine.StartOrigin, error) {
	var o engine.StartOrigin
	var given string
	err := s.read.QueryRowContext(ctx, `SELECT stage, given, started_by FROM run_starts WHERE run_id = ?`, id).Scan(&o.Stage, &given, &o.By)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: start of %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(given), &o.Given); err != nil {
		return nil, fmt.Errorf("store: start of %s: %w", id, err)
	}
	return &o, nil
}
