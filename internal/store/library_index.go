package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"quarry/internal/research"
)

// fillPendingCompounds computes papers.compounds at Open for the rows
// that lack it (rows from a schema before the column), in one
// transaction, so the full-text index covers their joined compounds. A
// schema without the library (tests that bring their own migrations) has
// nothing to fill.
func (s *Store) fillPendingCompounds(ctx context.Context) error {
	if ok, err := s.write.hasColumn(ctx, "papers", "compounds"); err != nil || !ok {
		return err
	}
	var pending bool
	if err := s.write.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM papers WHERE compounds IS NULL)`).Scan(&pending); err != nil {
		return fmt.Errorf("store: library compounds: %w", err)
	}
	if !pending {
		return nil
	}
	s.log.Info("store: computing the joined compounds of the library's papers")
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: library compounds: %w", err)
	}
	defer tx.Rollback()
	if err := fillCompoundsTx(ctx, tx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return tx.Commit()
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
func fillCompoundsTx(ctx context.Context, tx *tx) error {
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
