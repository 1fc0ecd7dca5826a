package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"quarry/internal/research"
)

// RebuildLibraryIndex rebuilds the full-text index from the papers table
// and clears the stale mark, in one transaction. It holds the database's
// single writer for its duration (seconds for ~10^5 papers).
func (s *Store) RebuildLibraryIndex(ctx context.Context) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: rebuild library index: %w", err)
	}
	defer tx.Rollback()
	if err := rebuildIndex(ctx, tx, formatTime(s.Now())); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: rebuild library index: %w", err)
	}
	return nil
}

// rebuildIndex rebuilds the full-text index from the papers table (one
// FTS5 'rebuild', 4x faster than row triggers for bulk loads) and clears
// the stale mark, inside the caller's transaction, so a bulk import's rows
// and their index commit together. Rows whose compounds are not computed
// yet get them first, so the index covers them.
func rebuildIndex(ctx context.Context, tx *sql.Tx, now string) error {
	if err := fillCompoundsTx(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')`); err != nil {
		return fmt.Errorf("rebuild library index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE library_index SET stale = 0, rebuilt_at = ? WHERE id = 1`, now); err != nil {
		return fmt.Errorf("rebuild library index: mark fresh: %w", err)
	}
	return nil
}

// LibraryIndexStale reports whether the full-text index may not cover the
// library: a migration that changes its columns marks it stale, and until
// a rebuild (Open's repair, or a bulk import's merge) its entries cannot be
// replaced row by row (see deleteFTSEntry).
func (s *Store) LibraryIndexStale(ctx context.Context) (bool, error) {
	var stale bool
	if err := s.write.QueryRowContext(ctx, `SELECT stale FROM library_index WHERE id = 1`).Scan(&stale); err != nil {
		return false, fmt.Errorf("store: library index state: %w", err)
	}
	return stale, nil
}

// repairLibraryIndex rebuilds the full-text index at Open when it does not
// cover the library: after a migration that changed its columns (which
// marks it stale and leaves rows without compounds). A schema without the
// library (tests that bring their own migrations) has nothing to repair.
func (s *Store) repairLibraryIndex(ctx context.Context) error {
	var n int
	if err := s.write.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('papers') WHERE name = 'compounds'`).Scan(&n); err != nil || n == 0 {
		return err
	}
	stale, err := s.LibraryIndexStale(ctx)
	if err != nil {
		return err
	}
	var pending bool
	if err := s.write.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM papers WHERE compounds IS NULL)`).Scan(&pending); err != nil {
		return fmt.Errorf("store: library index state: %w", err)
	}
	if !stale && !pending {
		return nil
	}
	s.log.Info("store: rebuilding the library's full-text index")
	return s.RebuildLibraryIndex(ctx)
}

// ftsEntry is what papers_fts indexes of a paper: its docid and, in the
// index's column order, the text of its five columns.
type ftsEntry struct {
	docid                                      int64
	title, abstract, authors, venue, compounds string
}

// insertFTSEntry indexes a paper's stored values, inside the writer's
// transaction, so a small import is searchable without a rebuild.
func insertFTSEntry(ctx context.Context, tx *sql.Tx, e ftsEntry) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO papers_fts (rowid, title, abstract, authors, venue, compounds) VALUES (?, ?, ?, ?, ?, ?)`,
		e.docid, e.title, e.abstract, e.authors, e.venue, e.compounds)
	return err
}

// deleteFTSEntry removes a paper's current index entry, if it has one. An
// external-content FTS5 table can only delete an entry given the exact
// values it indexed, which are the row's current values while the index is
// not stale.
func deleteFTSEntry(ctx context.Context, tx *sql.Tx, id string) error {
	var e ftsEntry
	err := tx.QueryRowContext(ctx, `SELECT docid, title, abstract, authors, venue, coalesce(compounds, '') FROM papers WHERE id = ?`, id).
		Scan(&e.docid, &e.title, &e.abstract, &e.authors, &e.venue, &e.compounds)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: import: read old row: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO papers_fts (papers_fts, rowid, title, abstract, authors, venue, compounds) VALUES ('delete', ?, ?, ?, ?, ?, ?)`,
		e.docid, e.title, e.abstract, e.authors, e.venue, e.compounds); err != nil {
		return fmt.Errorf("store: import: unindex old row: %w", err)
	}
	return nil
}

// paperCompounds is the papers.compounds value of a title and abstract: the
// joined form of each hyphenated word, space-separated (see
// migrations/00006_fts_compounds.sql).
func paperCompounds(title, abstract string) string {
	return strings.Join(research.Compounds(title+"\n"+abstract), " ")
}

// compoundsChunk is how many pending rows fillCompoundsTx reads at a time:
// it updates the rows it selects by the partial index on pending rows, so
// it reads a chunk, updates it, and asks again.
const compoundsChunk = 2000

// fillCompoundsTx computes papers.compounds for every row that lacks it
// (rows migrated from a schema without the column, and imported rows whose
// stored abstract was kept), inside the caller's transaction.
func fillCompoundsTx(ctx context.Context, tx *sql.Tx) error {
	type pending struct {
		docid int64
		value string
	}
	for {
		rows, err := tx.QueryContext(ctx, `SELECT docid, title, abstract FROM papers WHERE compounds IS NULL LIMIT ?`, compoundsChunk)
		if err != nil {
			return fmt.Errorf("compute compounds: %w", err)
		}
		var chunk []pending
		for rows.Next() {
			var docid int64
			var title, abstract string
			if err := rows.Scan(&docid, &title, &abstract); err != nil {
				rows.Close()
				return fmt.Errorf("compute compounds: %w", err)
			}
			chunk = append(chunk, pending{docid, paperCompounds(title, abstract)})
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("compute compounds: %w", err)
		}
		if len(chunk) == 0 {
			return nil
		}
		for _, p := range chunk {
			if _, err := tx.ExecContext(ctx, `UPDATE papers SET compounds = ? WHERE docid = ?`, p.value, p.docid); err != nil {
				return fmt.Errorf("compute compounds: %w", err)
			}
		}
	}
}
