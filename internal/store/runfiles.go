package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// RunFile is a file attached to a run: an export from another database
// whose records join the run's searched ones.
type RunFile struct {
	ID     string
	RunID  string
	Name   string
	Format string
	// Papers are the file's readable records; Skipped the ones left out,
	// with their line and why.
	Papers     []research.RawPaper
	Skipped    []research.RecordError
	UploadedBy string
	UploadedAt time.Time
}

// AttachRunFile stores f for its run and returns it with its ID and time
// set. The run must exist (ENotFound otherwise).
func (s *Store) AttachRunFile(ctx context.Context, f RunFile) (RunFile, error) {
	b := make([]byte, 12)
	rand.Read(b)
	f.ID = hex.EncodeToString(b)
	f.UploadedAt = s.Now().UTC()
	papers, err := json.Marshal(nonNilPapers(f.Papers))
	if err != nil {
		return f, fmt.Errorf("store: attach file: %w", err)
	}
	skipped, err := json.Marshal(nonNilErrors(f.Skipped))
	if err != nil {
		return f, fmt.Errorf("store: attach file: %w", err)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return f, fmt.Errorf("store: attach file: %w", err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, f.RunID).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return f, fault.Errorf(fault.ENotFound, "run %q not found", f.RunID)
		}
		return f, fmt.Errorf("store: attach file: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_files (id, run_id, name, format, records, skipped, uploaded_by, uploaded_at, papers)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, f.ID, f.RunID, f.Name, f.Format, len(f.Papers), string(skipped), f.UploadedBy, formatTime(f.UploadedAt), string(papers)); err != nil {
		return f, fmt.Errorf("store: attach file: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return f, fmt.Errorf("store: attach file: %w", err)
	}
	return f, nil
}

// RunFilePapers returns the papers of the attached file id of run runID
// (ENotFound if the run has no such file: a strategy naming a file of
// another run must not read it). A fork reads the files of the runs it
// was forked from: its state, copied from theirs, names them, and files
// are never changed once attached, so sharing them is copying them.
func (s *Store) RunFilePapers(ctx context.Context, runID, id string) ([]research.RawPaper, error) {
	var raw string
	err := s.read.QueryRowContext(ctx, `WITH RECURSIVE lineage(run_id) AS (
			SELECT `+s.read.d.textParam("?")+` UNION SELECT f.from_run FROM run_forks f JOIN lineage l ON f.run_id = l.run_id)
		SELECT papers FROM run_files WHERE id = ? AND run_id IN (SELECT run_id FROM lineage)`, runID, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fault.Errorf(fault.ENotFound, "run %s has no attached file %q", runID, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: attached file: %w", err)
	}
	var papers []research.RawPaper
	if err := json.Unmarshal([]byte(raw), &papers); err != nil {
		return nil, fmt.Errorf("store: attached file %s: %w", id, err)
	}
	return papers, nil
}

func nonNilPapers(p []research.RawPaper) []research.RawPaper {
	if p == nil {
		return []research.RawPaper{}
	}
	return p
}

func nonNilErrors(e []research.RecordError) []research.RecordError {
	if e == nil {
		return []research.RecordError{}
	}
	return e
}
