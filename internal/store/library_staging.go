package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// stageSQL stages a paperRow; staged_at stands where papers has imported_at.
const stageSQL = `INSERT INTO import_staging (import_id, seq, id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, staged_at, extra, volume, issue, pages, compounds)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// mergeStagedSQL moves one import's staged rows into papers in input order
// (so a later record of the same paper wins, as with upsertPaperSQL row by
// row). "WHERE" is required: without it SQLite would read ON CONFLICT as a
// join constraint.
const mergeStagedSQL = `INSERT INTO papers (` + importColumns + `)
	SELECT id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, ?2, extra, volume, issue, pages, compounds
	FROM import_staging WHERE import_id = ?1 ORDER BY seq
	` + paperConflictSQL

// StagePapers adds one batch of a bulk import to the stage named stage
// (any name no other running import uses), in its own transaction, so
// other writers (the workflow engine) are not held up while a large file
// is read. Nothing staged is in the library until MergeStaged.
func (s *Store) StagePapers(ctx context.Context, stage string, papers []ImportPaper) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: import: begin: %w", err)
	}
	defer tx.Rollback()
	if err := stagePapers(ctx, tx, stage, papers, formatTime(s.Now())); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: import: commit: %w", err)
	}
	return nil
}

// stagePapers appends papers to the stage inside tx, numbered after what
// it holds, so the merge keeps the input order.
func stagePapers(ctx context.Context, tx *sql.Tx, stage string, papers []ImportPaper, now string) error {
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM import_staging WHERE import_id = ?`, stage).Scan(&seq); err != nil {
		return fmt.Errorf("store: import: %w", err)
	}
	insert, err := tx.PrepareContext(ctx, stageSQL)
	if err != nil {
		return fmt.Errorf("store: import: prepare: %w", err)
	}
	defer insert.Close()
	for _, p := range papers {
		row, err := newPaperRow(p, now)
		if err != nil {
			return err
		}
		seq++
		if _, err := insert.ExecContext(ctx, append([]any{stage, seq}, row...)...); err != nil {
			return fmt.Errorf("store: import line %d: %w", p.Line, err)
		}
	}
	return nil
}

// MergeStaged moves a bulk import's staged rows into papers, rebuilds the
// full-text index (one FTS 'rebuild', 4x faster than row by row for a bulk
// load) and clears the stage, all in one transaction, so the import is in
// the library, searchable, or not at all.
func (s *Store) MergeStaged(ctx context.Context, stage string) (ImportCounts, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: begin: %w", err)
	}
	defer tx.Rollback()
	counts, err := mergeStaged(ctx, tx, stage, formatTime(s.Now()))
	if err != nil {
		return ImportCounts{}, err
	}
	if err := tx.Commit(); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: commit: %w", err)
	}
	return counts, nil
}

func mergeStaged(ctx context.Context, tx *sql.Tx, stage, now string) (ImportCounts, error) {
	var staged, fresh, same int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), (SELECT count(DISTINCT s.id) FROM import_staging s
		WHERE s.import_id = ?1 AND NOT EXISTS (SELECT 1 FROM papers p WHERE p.id = s.id)),
		(SELECT count(*) FROM import_staging n JOIN papers o ON o.id = n.id
		WHERE n.import_id = ?1 AND NOT `+paperChangedSQL+`)
		FROM import_staging WHERE import_id = ?1`, stage).Scan(&staged, &fresh, &same); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: count staged: %w", err)
	}
	if _, err := tx.ExecContext(ctx, mergeStagedSQL, stage, now); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: move staged records: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM import_staging WHERE import_id = ?`, stage); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: clear stage: %w", err)
	}
	if err := rebuildIndex(ctx, tx, now); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: %w", err)
	}
	return ImportCounts{Inserted: fresh, Updated: staged - fresh - same, Unchanged: same}, nil
}

// DropStaged deletes what a failed import staged. It runs even when ctx is
// cancelled (that is often why the import failed).
func (s *Store) DropStaged(ctx context.Context, stage string) error {
	if _, err := s.write.ExecContext(context.WithoutCancel(ctx), `DELETE FROM import_staging WHERE import_id = ?`, stage); err != nil {
		return fmt.Errorf("store: import: clear stage: %w", err)
	}
	return nil
}

// stagingTTL is how old staged rows must be before Open deletes them: an
// import in another process may still be filling younger ones.
const stagingTTL = 24 * time.Hour

// dropAbandonedStaging deletes rows staged by imports whose process died.
// A schema without the table (tests that bring their own migrations) has
// nothing to clear.
func (s *Store) dropAbandonedStaging(ctx context.Context) error {
	var n int
	if err := s.write.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'import_staging'`).Scan(&n); err != nil || n == 0 {
		return err
	}
	if _, err := s.write.ExecContext(ctx, `DELETE FROM import_staging WHERE staged_at < ?`, formatTime(s.Now().Add(-stagingTTL))); err != nil {
		return fmt.Errorf("store: clear abandoned imports: %w", err)
	}
	return nil
}
