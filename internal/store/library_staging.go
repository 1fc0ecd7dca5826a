package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"quarry/internal/fault"

	"golang.org/x/sync/errgroup"
)

// stageColumns are import_staging's columns in the order stagePapers
// binds them: the stage's key, then a paperRow (staged_at stands where
// papers has imported_at).
const stageColumns = `import_id, seq, id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, staged_at, extra, volume, issue, pages, compounds`

// stageValuesPerRow is the number of stageColumns.
const stageValuesPerRow = 19

// stageRowsPerInsert is how many rows one staging INSERT writes: a
// statement per row spent more time crossing into SQLite than storing the
// row. 19 values a row stay far below SQLite's 32766 bound variables.
const stageRowsPerInsert = 256

// stageSQL stages n paperRows in one statement.
func stageSQL(n int) string {
	row := "(" + strings.Repeat("?, ", stageValuesPerRow-1) + "?)"
	return `INSERT INTO import_staging (` + stageColumns + `) VALUES ` + strings.Repeat(row+", ", n-1) + row
}

// mergeStagedSQL moves one batch of an import's staged rows (seq in
// (?3, ?4]) into papers in input order, so a later record of the same paper
// wins, as with upsertPaperSQL row by row. "WHERE" is required: without it
// SQLite would read ON CONFLICT as a join constraint.
//
// PostgreSQL refuses a statement that upserts one row twice, so there it
// moves the staged rows in rounds: round ?5 takes each paper's ?5-th
// record in the batch (mergeRounds).
func mergeStagedSQL(d dialect) string {
	if d.kind == dialectPostgres {
		return `INSERT INTO papers (` + importColumns + `)
	SELECT id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, ?2, extra, volume, issue, pages, compounds
	FROM (SELECT s.*, row_number() OVER (PARTITION BY id ORDER BY seq) AS occurrence
		FROM import_staging s WHERE import_id = ?1 AND seq > ?3 AND seq <= ?4) batch
	WHERE occurrence = ?5 ORDER BY seq
	` + paperConflictSQL(d)
	}
	return `INSERT INTO papers (` + importColumns + `)
	SELECT id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, ?2, extra, volume, issue, pages, compounds
	FROM import_staging WHERE import_id = ?1 AND seq > ?3 AND seq <= ?4 ORDER BY seq
	` + paperConflictSQL(d)
}

// StagePapers adds one batch of a bulk import to the stage named stage
// (any name no other running import uses), in its own transaction, so
// other writers (the workflow engine) are not held up while a large file
// is read. Nothing staged is in the library until MergeStaged.
//
// A bulk import rewrites much of the library, so before it stages its
// first papers the database as it was is backed up (BackupImport;
// retention applies), whoever started it: an upload or quarry import.
// Backing up before the stage fills, not before the merge, keeps the
// staged rows (the whole file) out of the copy.
func (s *Store) StagePapers(ctx context.Context, stage string, papers []ImportPaper) error {
	if err := s.checkReserve(); err != nil {
		return err
	}
	if err := s.backupBeforeStage(ctx, stage, papers); err != nil {
		return err
	}
	began := time.Now()
	// The rows (their compounds above all) are computed on every core
	// before the write lock is taken.
	rows, err := newPaperRows(papers, formatTime(s.Now()))
	if err != nil {
		return err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: import: begin: %w", err)
	}
	defer tx.Rollback()
	if err := stagePapers(ctx, tx, stage, papers, rows); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: import: commit: %w", err)
	}
	return yield(ctx, time.Since(began))
}

// backupBeforeStage backs the database up when papers are the first a
// stage holds (see StagePapers); an in-memory database has no file to copy.
func (s *Store) backupBeforeStage(ctx context.Context, stage string, papers []ImportPaper) error {
	if len(papers) == 0 || s.postgres() || s.path == ":memory:" || strings.HasPrefix(s.path, "file::memory:") {
		return nil
	}
	var started bool
	if err := s.write.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM import_staging WHERE import_id = ?)`, stage).Scan(&started); err != nil {
		return fmt.Errorf("store: import: %w", err)
	}
	if started {
		return nil
	}
	b, err := s.Backup(ctx, BackupImport, "")
	if err != nil {
		return err
	}
	s.log.Info("store: backed up the database before a bulk import", "backup", b.Path, "bytes", b.Size)
	return nil
}

// newPaperRows is newPaperRow of each of papers, computed in parallel.
func newPaperRows(papers []ImportPaper, now string) ([]paperRow, error) {
	rows := make([]paperRow, len(papers))
	var g errgroup.Group
	workers := runtime.GOMAXPROCS(0)
	per := (len(papers) + workers - 1) / workers
	for lo := 0; lo < len(papers); lo += per {
		g.Go(func() error {
			for i := lo; i < min(lo+per, len(papers)); i++ {
				row, err := newPaperRow(papers[i], now)
				if err != nil {
					return err
				}
				rows[i] = row
			}
			return nil
		})
	}
	return rows, g.Wait()
}

// stagePapers appends papers (and their rows) to the stage inside tx,
// numbered after what it holds, so the merge keeps the input order.
func stagePapers(ctx context.Context, tx *tx, stage string, papers []ImportPaper, rows []paperRow) error {
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM import_staging WHERE import_id = ?`, stage).Scan(&seq); err != nil {
		return fmt.Errorf("store: import: %w", err)
	}
	if len(papers) == 0 {
		return nil
	}
	perInsert := min(stageRowsPerInsert, len(papers))
	full, err := tx.PrepareContext(ctx, stageSQL(perInsert))
	if err != nil {
		return fmt.Errorf("store: import: prepare: %w", err)
	}
	defer full.Close()
	args := make([]any, 0, perInsert*stageValuesPerRow)
	for len(papers) > 0 {
		chunk := papers[:min(perInsert, len(papers))]
		chunkRows := rows[:len(chunk)]
		papers, rows = papers[len(chunk):], rows[len(chunk):]
		args = args[:0]
		for _, row := range chunkRows {
			seq++
			args = append(append(args, stage, seq), row...)
		}
		if len(chunk) == perInsert {
			_, err = full.ExecContext(ctx, args...)
		} else { // the last few
			_, err = tx.ExecContext(ctx, stageSQL(len(chunk)), args...)
		}
		if err != nil {
			return fmt.Errorf("store: import lines %d-%d: %w", chunk[0].Line, chunk[len(chunk)-1].Line, err)
		}
	}
	return nil
}

// Merge transactions are kept short so that other writers (the workflow
// engine, a server next to a `quarry import`) wait at most about a second
// for the write lock: a batch starts at firstMergeRows rows and doubles or
// halves to take about mergeTxTarget, within [minMergeRows, maxMergeRows].
const (
	mergeTxTarget  = 300 * time.Millisecond
	firstMergeRows = 500
	minMergeRows   = 50
	maxMergeRows   = 10000
)

// MergeStaged moves a bulk import's staged rows into papers in batches,
// each its own transaction, so the library is searchable after every batch
// (the full-text index follows library_log) and no transaction holds the
// write lock for long. Between batches it pauses briefly so a writer in
// another process, polling for the lock, gets it. An interrupted merge
// leaves the batches committed so far in the library (importing the file
// again completes it; imports are idempotent) and the rest staged for
// DropStaged. The database was backed up when the stage began
// (StagePapers). At the end it brings this process's index up to date,
// if it has one, so the import is searchable as soon as it returns.
func (s *Store) MergeStaged(ctx context.Context, stage string) (ImportCounts, error) {
	var total ImportCounts
	rows, after := s.mergeRows, int64(0)
	for {
		if err := s.checkReserve(); err != nil {
			return total, err
		}
		began := time.Now()
		counts, last, err := s.mergeBatch(ctx, stage, after, rows)
		if err != nil {
			return total, err
		}
		if last == after {
			break
		}
		total.add(counts)
		after = last
		s.followLibraryIndex()
		took := time.Since(began)
		s.log.Debug("store: import: merged a batch", "rows", counts.Inserted+counts.Updated+counts.Unchanged, "took", took)
		switch {
		case took < mergeTxTarget/2:
			rows = min(rows*2, s.mergeRowsMax)
		case took > mergeTxTarget*2:
			rows = min(max(rows/2, minMergeRows), s.mergeRowsMax)
		}
		if err := yield(ctx, took); err != nil {
			return total, err
		}
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return total, fmt.Errorf("store: import: %w", err)
	}
	defer tx.Rollback()
	if err := pruneLibraryLog(ctx, tx); err != nil {
		return total, err
	}
	if err := tx.Commit(); err != nil {
		return total, fmt.Errorf("store: import: %w", err)
	}
	return total, s.SyncLibraryIndex(ctx)
}

// checkReserve refuses to go on with a bulk import once the disk holding
// the database has less than the import reserve free (see
// Options.ImportReserve).
func (s *Store) checkReserve() error {
	if s.importReserve < 0 || s.postgres() {
		return nil
	}
	free := diskFree(filepath.Dir(s.path))
	if free < 0 || free >= s.importReserve {
		return nil
	}
	return &fault.Error{Code: fault.EStorageFull, Message: fmt.Sprintf(
		"the disk holding the database is nearly full (%d MiB free): imports stop while less than %d MiB is free, so that runs can go on; free some space and import again",
		free>>20, s.importReserve>>20)}
}

// yield pauses a bulk writer after a transaction that took took, so that
// a writer in another process gets the lock: SQLite's busy handler there
// polls for it, at most 100 ms apart once it has waited a while, so a pause
// as long as the transaction (capped just above that period) lets it in
// without slowing the bulk writer more than twofold.
func yield(ctx context.Context, took time.Duration) error {
	return sleep(ctx, min(max(took, 5*time.Millisecond), 110*time.Millisecond))
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// mergeBatch merges the next rows staged rows after seq after in one
// transaction and returns what it did and the last seq it merged (after
// itself when nothing is left).
func (s *Store) mergeBatch(ctx context.Context, stage string, after int64, rows int) (ImportCounts, int64, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: begin: %w", err)
	}
	defer tx.Rollback()
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM (SELECT seq FROM import_staging
		WHERE import_id = ? AND seq > ? ORDER BY seq LIMIT ?) batch`, stage, after, rows).Scan(&last); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: next batch: %w", err)
	}
	if !last.Valid {
		return ImportCounts{}, after, nil
	}
	now := formatTime(s.Now())
	args := []any{stage, now, after, last.Int64}
	var staged, fresh, same int
	// The count binds no time (PostgreSQL cannot type a parameter a
	// query does not use).
	if err := tx.QueryRowContext(ctx, `SELECT count(*), (SELECT count(DISTINCT s.id) FROM import_staging s
		WHERE s.import_id = ?1 AND s.seq > ?2 AND s.seq <= ?3 AND NOT EXISTS (SELECT 1 FROM papers p WHERE p.id = s.id)),
		(SELECT count(*) FROM import_staging n JOIN papers o ON o.id = n.id
		WHERE n.import_id = ?1 AND n.seq > ?2 AND n.seq <= ?3 AND NOT `+paperChangedSQL(tx.d)+`)
		FROM import_staging WHERE import_id = ?1 AND seq > ?2 AND seq <= ?3`, stage, after, last.Int64).Scan(&staged, &fresh, &same); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: count staged: %w", err)
	}
	if tx.d.kind == dialectPostgres {
		var rounds int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(n), 0) FROM (SELECT count(*) AS n FROM import_staging
			WHERE import_id = ?1 AND seq > ?2 AND seq <= ?3 GROUP BY id) batch`, stage, after, last.Int64).Scan(&rounds); err != nil {
			return ImportCounts{}, after, fmt.Errorf("store: import: count rounds: %w", err)
		}
		for round := 1; round <= rounds; round++ {
			if _, err := tx.ExecContext(ctx, mergeStagedSQL(tx.d), append(args, round)...); err != nil {
				return ImportCounts{}, after, fmt.Errorf("store: import: move staged records: %w", err)
			}
		}
	} else if _, err := tx.ExecContext(ctx, mergeStagedSQL(tx.d), args...); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: move staged records: %w", err)
	}
	if err := fillCompoundsTx(ctx, tx); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM import_staging WHERE import_id = ?1 AND seq > ?2 AND seq <= ?3`, stage, after, last.Int64); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: clear merged rows: %w", err)
	}
	// The stage's newest row is its heartbeat: Open and the sweep leave a
	// stage alone while it is recent (see dropAbandonedStaging).
	if _, err := tx.ExecContext(ctx, `UPDATE import_staging SET staged_at = ?2
		WHERE import_id = ?1 AND seq = (SELECT max(seq) FROM import_staging WHERE import_id = ?1)`, stage, now); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return ImportCounts{}, after, fmt.Errorf("store: import: commit: %w", err)
	}
	return ImportCounts{Inserted: fresh, Updated: staged - fresh - same, Unchanged: same}, last.Int64, nil
}

func (c *ImportCounts) add(o ImportCounts) {
	c.Inserted += o.Inserted
	c.Updated += o.Updated
	c.Unchanged += o.Unchanged
}

// DropStaged deletes what a failed import staged. It runs even when ctx is
// cancelled (that is often why the import failed). An import that failed
// because the disk is full must still give its space back, and deleting
// rows needs room in the write-ahead log too; so the stage is deleted a
// chunk at a time with a checkpoint after each (which lets the log be
// reused from its start instead of growing), smaller chunks when even one
// does not fit, and the log is finally truncated, which returns its space
// to the disk. The freed pages stay in the database file for its next
// writes.
func (s *Store) DropStaged(ctx context.Context, stage string) error {
	ctx = context.WithoutCancel(ctx)
	rows, failures := 2000, 0
	for {
		res, err := s.write.ExecContext(ctx, `DELETE FROM import_staging WHERE import_id = ?1 AND seq IN
			(SELECT seq FROM import_staging WHERE import_id = ?1 ORDER BY seq LIMIT ?2)`, stage, rows)
		if err != nil {
			if failures++; !Transient(err) || failures > 8 {
				return fmt.Errorf("store: import: clear stage: %w", err)
			}
			rows = max(rows/4, 10)
			s.checkpoint(ctx, "RESTART")
			time.Sleep(time.Duration(failures) * 50 * time.Millisecond)
			continue
		}
		if n, _ := res.RowsAffected(); n == 0 {
			break
		}
		s.checkpoint(ctx, "PASSIVE")
	}
	s.checkpoint(ctx, "TRUNCATE")
	return nil
}

// checkpoint copies the write-ahead log into the database (mode PASSIVE,
// RESTART or TRUNCATE, see SQLite's wal_checkpoint); best effort, since a
// reader in another process can keep it from completing, which is harmless.
func (s *Store) checkpoint(ctx context.Context, mode string) {
	if s.postgres() {
		return // PostgreSQL checkpoints its WAL itself
	}
	if _, err := s.write.ExecContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`); err != nil {
		s.log.Warn("store: checkpoint the write-ahead log", "mode", mode, "err", err)
	}
}

// stagingTTL is how long a stage may go without news before it counts as
// abandoned: a live import stages a batch, or merges one, every few
// seconds, and each refreshes the stage's newest row (its heartbeat).
const stagingTTL = 10 * time.Minute

// dropAbandonedStaging deletes the stages of imports whose process died:
// those whose newest row is older than stagingTTL. A schema without the
// table (tests that bring their own migrations) has nothing to clear.
func (s *Store) dropAbandonedStaging(ctx context.Context) error {
	if ok, err := s.write.hasTable(ctx, "import_staging"); err != nil || !ok {
		return err
	}
	res, err := s.write.ExecContext(ctx, `DELETE FROM import_staging WHERE import_id IN
		(SELECT import_id FROM import_staging GROUP BY import_id HAVING max(staged_at) < ?)`, formatTime(s.Now().Add(-stagingTTL)))
	if err != nil {
		return fmt.Errorf("store: clear abandoned imports: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		s.log.Info("store: cleared rows staged by imports that did not finish", "rows", n)
		s.checkpoint(ctx, "TRUNCATE")
	}
	return nil
}
