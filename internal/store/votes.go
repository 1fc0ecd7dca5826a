package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// Vote records a vote at a gate that waits for several people, replacing
// the voter's earlier counted vote at the checkpoint, and asks resolve
// whether the counted votes now decide the gate: if so the decision is
// recorded, the run put back to running and its advance queued, all in
// the same transaction. The writer connection serialises voters, so of
// any number racing exactly one resolves the gate (and decisions'
// UNIQUE checkpoint_id would refuse a second). A vote on a checkpoint
// decided already is kept (late) and answered fault.EConflict naming who
// decided. A counted vote bumps the run's version, so pages redraw.
func (s *Store) Vote(ctx context.Context, v engine.Vote, resolve func([]engine.Vote) *engine.DecisionRecord) (engine.Ballot, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return engine.Ballot{}, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	cp, prev, err := scanCheckpoint(tx.QueryRowContext(ctx, `SELECT `+checkpointColumns+`
		FROM checkpoints c LEFT JOIN decisions d ON d.checkpoint_id = c.id WHERE c.id = ?`, v.CheckpointID))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && cp.RunID != v.RunID) {
		return engine.Ballot{}, fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", v.RunID, v.CheckpointID)
	}
	if err != nil {
		return engine.Ballot{}, fmt.Errorf("store: vote: %w", err)
	}
	if prev != nil || cp.Status != engine.CheckpointPending {
		v.Late = true
		if err := insertVote(ctx, tx, v); err != nil {
			return engine.Ballot{}, err
		}
		if err := tx.Commit(); err != nil {
			return engine.Ballot{}, fmt.Errorf("store: commit vote: %w", err)
		}
		if prev != nil {
			return engine.Ballot{}, engine.ConflictDecided(*prev)
		}
		return engine.Ballot{}, fault.Errorf(fault.EConflict, "this checkpoint is %s; the run has moved on", cp.Status)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE gate_votes SET replaced_at = ?
		WHERE checkpoint_id = ? AND voter = ? AND replaced_at IS NULL AND late = 0`,
		formatTime(v.VotedAt), v.CheckpointID, v.Voter); err != nil {
		return engine.Ballot{}, fmt.Errorf("store: vote: %w", err)
	}
	if err := insertVote(ctx, tx, v); err != nil {
		return engine.Ballot{}, err
	}
	counted, err := queryVotes(ctx, tx, `checkpoint_id = ? AND replaced_at IS NULL AND late = 0`, v.CheckpointID)
	if err != nil {
		return engine.Ballot{}, err
	}
	b := engine.Ballot{Votes: counted}
	if d := resolve(counted); d != nil {
		if err := s.decideTx(ctx, tx, v.RunID, cp, *d); err != nil {
			return engine.Ballot{}, err
		}
		b.Decision = d
	} else if _, err := tx.ExecContext(ctx, `UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ?`,
		formatTime(s.Now()), v.RunID); err != nil {
		return engine.Ballot{}, fmt.Errorf("store: vote: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return engine.Ballot{}, fmt.Errorf("store: commit vote: %w", err)
	}
	return b, nil
}

// Votes returns every vote cast at the run's gates (replaced and late
// ones too), oldest first.
func (s *Store) Votes(ctx context.Context, runID string) ([]engine.Vote, error) {
	return queryVotes(ctx, s.read, `run_id = ?`, runID)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func insertVote(ctx context.Context, tx *tx, v engine.Vote) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO gate_votes (run_id, checkpoint_id, voter, option, input, note, voted_at, late)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, v.RunID, v.CheckpointID, v.Voter, v.Option, v.Input, v.Note, formatTime(v.VotedAt), v.Late)
	if err != nil {
		return fmt.Errorf("store: insert vote: %w", err)
	}
	return nil
}

func queryVotes(ctx context.Context, q querier, where string, arg any) ([]engine.Vote, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, run_id, checkpoint_id, voter, option, input, note, voted_at, replaced_at IS NOT NULL, late
		FROM gate_votes WHERE `+where+` ORDER BY seq`, arg)
	if err != nil {
		return nil, fmt.Errorf("store: votes: %w", err)
	}
	defer rows.Close()
	var out []engine.Vote
	for rows.Next() {
		var v engine.Vote
		var at string
		if err := rows.Scan(&v.Seq, &v.RunID, &v.CheckpointID, &v.Voter, &v.Option, &v.Input, &v.Note, &at, &v.Replaced, &v.Late); err != nil {
			return nil, fmt.Errorf("store: votes: %w", err)
		}
		v.VotedAt = parseTime(at)
		out = append(out, v)
	}
	return out, rows.Err()
}
