package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// The local library's FTS5 ranking weights, in column order (title,
// abstract, authors, venue, compounds): a term in the title says more about
// what a paper is about than the same term somewhere in its abstract; a
// joined hyphenated compound (see research.Compounds) weighs like an
// abstract word.
const libraryBM25 = `bm25(papers_fts, 10.0, 3.0, 1.0, 1.0, 3.0)`

// searchLibraryAnyYearSQL is searchLibrarySQL without a year range: it
// ranks from the index alone and reads only the page's papers (joining
// papers for every match costs several times the ranking on a common
// word).
const searchLibraryAnyYearSQL = `SELECT ` + paperColumns + `
	FROM (SELECT rowid, ` + libraryBM25 + ` AS score FROM papers_fts
		WHERE papers_fts MATCH ?1 ORDER BY score, rowid LIMIT ?2 OFFSET ?3) f
	JOIN papers p ON p.docid = f.rowid
	ORDER BY f.score, f.rowid`

// searchLibraryWidenedSQL is searchLibrarySQL over the index's best ?4
// matches only: it joins those to papers for their years, so a year range
// costs the page's join and not every match's. A full page from it is the
// page searchLibrarySQL returns (the papers inside the years keep their
// order); a short one may not be, and the full query answers instead.
const searchLibraryWidenedSQL = `SELECT ` + paperColumns + `
	FROM (SELECT rowid, ` + libraryBM25 + ` AS score FROM papers_fts
		WHERE papers_fts MATCH ?1 ORDER BY score, rowid LIMIT ?4) f
	JOIN papers p ON p.docid = f.rowid
	WHERE (p.year = 0 OR ((?2 = 0 OR p.year >= ?2) AND (?3 = 0 OR p.year <= ?3)))
	ORDER BY f.score, f.rowid
	LIMIT ?5 OFFSET ?6`

const countLibraryAnyYearSQL = `SELECT count(*) FROM papers_fts WHERE papers_fts MATCH ?1`

const searchLibrarySQL = `SELECT ` + paperColumns + `
	FROM papers_fts JOIN papers p ON p.docid = papers_fts.rowid
	WHERE papers_fts MATCH ?1
	  AND (p.year = 0 OR ((?2 = 0 OR p.year >= ?2) AND (?3 = 0 OR p.year <= ?3)))
	ORDER BY ` + libraryBM25 + `, p.docid
	LIMIT ?4 OFFSET ?5`

const countLibrarySQL = `SELECT count(*)
	FROM papers_fts JOIN papers p ON p.docid = papers_fts.rowid
	WHERE papers_fts MATCH ?1
	  AND (p.year = 0 OR ((?2 = 0 OR p.year >= ?2) AND (?3 = 0 OR p.year <= ?3)))`

// CountLibrary counts the papers SearchLibrary would find for match and
// years without its limit, so a capped search can say how many there are.
func (s *Store) CountLibrary(ctx context.Context, match string, years research.YearRange) (int, error) {
	if strings.TrimSpace(match) == "" {
		return 0, fault.Errorf(fault.EInvalid, "the library search query is empty")
	}
	var n int
	query, args := countLibraryAnyYearSQL, []any{match}
	if years != (research.YearRange{}) {
		query, args = countLibrarySQL, []any{match, years.From, years.To}
	}
	if err := s.read.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, searchError(ctx, match, err)
	}
	return n, nil
}

// SearchLibrary runs an FTS5 MATCH expression (as the query package's local
// renderer writes it) over the library, best bm25 match first, keeping
// papers inside years (and those of unknown year, as YearRange.Contains
// does). A match expression FTS5 cannot parse is fault.EInvalid: the text
// may come from a researcher, and their typo is not our failure.
func (s *Store) SearchLibrary(ctx context.Context, match string, years research.YearRange, limit int) ([]research.RawPaper, error) {
	return s.SearchLibraryPage(ctx, match, years, 0, limit)
}

// SearchLibraryPage is SearchLibrary from the offset-th match on: the
// next page of a search whose first offset papers were shown ("Show
// more"). Ties in rank are broken by the paper's row, so pages never
// overlap or skip a paper of equal rank.
func (s *Store) SearchLibraryPage(ctx context.Context, match string, years research.YearRange, offset, limit int) ([]research.RawPaper, error) {
	if strings.TrimSpace(match) == "" {
		return nil, fault.Errorf(fault.EInvalid, "the library search query is empty")
	}
	if limit <= 0 {
		return nil, fault.Errorf(fault.EInvalid, "the library search limit must be positive, not %d", limit)
	}
	if offset < 0 {
		return nil, fault.Errorf(fault.EInvalid, "the library search offset must not be negative, not %d", offset)
	}
	limit = min(limit, research.MaxResultsLimit)
	if years == (research.YearRange{}) {
		return s.searchPage(ctx, match, searchLibraryAnyYearSQL, match, limit, offset)
	}
	page, err := s.searchPage(ctx, match, searchLibraryWidenedSQL, match, years.From, years.To, (offset+limit)*yearsWiden, limit, offset)
	if err != nil || len(page) == limit {
		return page, err
	}
	return s.searchPage(ctx, match, searchLibrarySQL, match, years.From, years.To, limit, offset)
}

// searchPage runs one of the library search statements.
func (s *Store) searchPage(ctx context.Context, match, query string, args ...any) ([]research.RawPaper, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, searchError(ctx, match, err)
	}
	defer rows.Close()
	var out []research.RawPaper
	for rows.Next() {
		p, err := scanPaper(rows)
		if err != nil {
			return nil, fmt.Errorf("store: search library: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, searchError(ctx, match, err)
	}
	return out, nil
}

// searchError tells a malformed MATCH expression (EInvalid) from a real
// failure. The statement's SQL is fixed and only the MATCH argument varies,
// so a plain SQLITE_ERROR ("fts5: syntax error", "unknown special query",
// "no such column" for a column filter naming no column) can only come
// from the expression.
func searchError(ctx context.Context, match string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("store: search library: %w", ctx.Err())
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_ERROR {
		return &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("the library cannot search for %q: check quotes, parentheses and operators", truncate(match, 200)), Err: err}
	}
	return fmt.Errorf("store: search library: %w", err)
}

// truncate shortens s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
