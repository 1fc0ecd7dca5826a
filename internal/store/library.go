package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"quarry/internal/research"
)

// LibraryCount returns the number of papers in the local library, for the
// import report and the settings page.
func (s *Store) LibraryCount(ctx context.Context) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM papers`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: library count: %w", err)
	}
	return n, nil
}

// paperColumns are the columns scanPaper reads, in its order.
const paperColumns = `p.id, p.title, p.authors, p.year, p.venue, p.abstract, p.doi, p.arxiv_id, p.pmid, p.url, p.volume, p.issue, p.pages`

// scanPaper reads one row of paperColumns, after the leading columns a
// query put before them (lead, scanned as they are).
func scanPaper(rows *sql.Rows, lead ...any) (research.RawPaper, error) {
	var p research.RawPaper
	var authors string
	if err := rows.Scan(append(lead, &p.ID, &p.Title, &authors, &p.Year, &p.Venue, &p.Abstract, &p.DOI, &p.ArxivID, &p.PMID, &p.URL, &p.Volume, &p.Issue, &p.Pages)...); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(authors), &p.Authors); err != nil {
		return p, fmt.Errorf("authors of %s: %w", p.ID, err)
	}
	return p, nil
}

// LibraryPaper is a stored paper with what an import kept beside it.
type LibraryPaper struct {
	research.RawPaper
	// Extra is the papers.extra JSON object (type, keywords, corpus fields).
	Extra json.RawMessage
}

// EachLibraryPaper calls fn for every paper of the library in import order,
// streaming rows from one read transaction (a consistent snapshot), so an
// export of a large library needs memory for one paper at a time. An error
// from fn stops the walk and is returned as is.
func (s *Store) EachLibraryPaper(ctx context.Context, fn func(LibraryPaper) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: export library: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+paperColumns+`, p.source, coalesce(p.extra, '') FROM papers p ORDER BY p.docid`)
	if err != nil {
		return fmt.Errorf("store: export library: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var lp LibraryPaper
		var authors, extra string
		p := &lp.RawPaper
		if err := rows.Scan(&p.ID, &p.Title, &authors, &p.Year, &p.Venue, &p.Abstract, &p.DOI, &p.ArxivID, &p.PMID, &p.URL, &p.Volume, &p.Issue, &p.Pages, &p.Source, &extra); err != nil {
			return fmt.Errorf("store: export library: %w", err)
		}
		if err := json.Unmarshal([]byte(authors), &p.Authors); err != nil {
			return fmt.Errorf("store: export library: authors of %s: %w", p.ID, err)
		}
		if extra != "" {
			lp.Extra = json.RawMessage(extra)
		}
		if err := fn(lp); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: export library: %w", err)
	}
	return nil
}
