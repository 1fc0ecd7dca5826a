package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
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

// paperConflictSQL is how an imported paper meets one already stored under
// the same stable ID: the newer record wins field by field, except that a
// field it leaves empty keeps the stored value.
const paperConflictSQL = `ON CONFLICT (id) DO UPDATE SET
		title = excluded.title,
		authors = CASE WHEN excluded.authors <> '[]' THEN excluded.authors ELSE authors END,
		year = CASE WHEN excluded.year <> 0 THEN excluded.year ELSE year END,
		venue = CASE WHEN excluded.venue <> '' THEN excluded.venue ELSE venue END,
		abstract = CASE WHEN excluded.abstract <> '' THEN excluded.abstract ELSE abstract END,
		doi = CASE WHEN excluded.doi <> '' THEN excluded.doi ELSE doi END,
		arxiv_id = CASE WHEN excluded.arxiv_id <> '' THEN excluded.arxiv_id ELSE arxiv_id END,
		pmid = CASE WHEN excluded.pmid <> '' THEN excluded.pmid ELSE pmid END,
		url = CASE WHEN excluded.url <> '' THEN excluded.url ELSE url END,
		volume = CASE WHEN excluded.volume <> '' THEN excluded.volume ELSE volume END,
		issue = CASE WHEN excluded.issue <> '' THEN excluded.issue ELSE issue END,
		pages = CASE WHEN excluded.pages <> '' THEN excluded.pages ELSE pages END,
		source = excluded.source,
		imported_at = excluded.imported_at,
		extra = coalesce(excluded.extra, extra),
		compounds = CASE WHEN excluded.abstract <> '' THEN excluded.compounds ELSE NULL END`

// paperChangedSQL is true when the imported row n would change the stored
// row o under paperConflictSQL's rules: a field n leaves empty keeps o's
// value, so it changes nothing. Where the record came from (source) and
// when (imported_at) are not content. It lets an import tell a re-import of
// the same file ("unchanged") from one that corrects records ("updated").
const paperChangedSQL = `(n.title IS NOT o.title
		OR (n.authors <> '[]' AND n.authors IS NOT o.authors)
		OR (n.year <> 0 AND n.year IS NOT o.year)
		OR (n.venue <> '' AND n.venue IS NOT o.venue)
		OR (n.abstract <> '' AND n.abstract IS NOT o.abstract)
		OR (n.doi <> '' AND n.doi IS NOT o.doi)
		OR (n.arxiv_id <> '' AND n.arxiv_id IS NOT o.arxiv_id)
		OR (n.pmid <> '' AND n.pmid IS NOT o.pmid)
		OR (n.url <> '' AND n.url IS NOT o.url)
		OR (n.volume <> '' AND n.volume IS NOT o.volume)
		OR (n.issue <> '' AND n.issue IS NOT o.issue)
		OR (n.pages <> '' AND n.pages IS NOT o.pages)
		OR (n.extra IS NOT NULL AND n.extra IS NOT o.extra))`

// unchangedPaperSQL says whether a paper with the bound values (a paperRow)
// is stored already with the same content.
const unchangedPaperSQL = `SELECT EXISTS (SELECT 1 FROM papers o,
	(SELECT ? AS id, ? AS title, ? AS authors, ? AS year, ? AS venue, ? AS abstract, ? AS doi, ? AS arxiv_id,
		? AS pmid, ? AS url, ? AS source, ? AS imported_at, ? AS extra, ? AS volume, ? AS issue, ? AS pages, ? AS compounds) n
	WHERE o.id = n.id AND NOT ` + paperChangedSQL + `)`

// importColumns are the papers columns an import writes, in the order of a
// paperRow's values.
const importColumns = `id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, imported_at, extra, volume, issue, pages, compounds`

const upsertPaperSQL = `INSERT INTO papers (` + importColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	` + paperConflictSQL + `
	RETURNING docid, title, abstract, authors, venue, compounds`

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

// ImportPaper is a paper as an import hands it to the store: valid, with
// its ID set (research.StableID, the key that makes imports idempotent),
// the file it came from (papers.source), what the table has no column for
// (papers.extra, a JSON object) and its line in the file, which names it
// in errors.
type ImportPaper struct {
	research.RawPaper
	Origin string
	Extra  json.RawMessage
	Line   int
}

// ImportCounts is what a write did to the library: papers new to it,
// papers it changed, and papers it already held with the same content (so
// importing a file again reads as "nothing changed", not as an update).
type ImportCounts struct {
	Inserted, Updated, Unchanged int
}

// WritePapers stores papers in one transaction that also replaces each
// one's full-text entry, so they are searchable when it returns without an
// index rebuild: the way to write an import that fits in one batch. A paper
// stored already under the same ID is updated (see paperConflictSQL). The
// index must be fresh (LibraryIndexStale), since an entry can only be
// replaced given the values it indexed; a stale one is an error, and a bulk
// import (StagePapers, MergeStaged) rebuilds it.
func (s *Store) WritePapers(ctx context.Context, papers []ImportPaper) (ImportCounts, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: begin: %w", err)
	}
	defer tx.Rollback()
	counts, err := upsertPapers(ctx, tx, papers, formatTime(s.Now()))
	if err != nil {
		return ImportCounts{}, err
	}
	if err := tx.Commit(); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: commit: %w", err)
	}
	return counts, nil
}

// upsertPapers writes papers and their index entries inside tx: each row's
// old entry is deleted (given the values it indexed) and the stored
// values are indexed.
func upsertPapers(ctx context.Context, tx *sql.Tx, papers []ImportPaper, now string) (ImportCounts, error) {
	var c ImportCounts
	var stale bool
	var maxBefore int64
	if err := tx.QueryRowContext(ctx, `SELECT stale, (SELECT coalesce(max(docid), 0) FROM papers) FROM library_index WHERE id = 1`).
		Scan(&stale, &maxBefore); err != nil {
		return c, fmt.Errorf("store: import: %w", err)
	}
	if stale {
		return c, errors.New("store: import: the library's full-text index is stale; only a bulk import can write to it")
	}
	unchanged, err := tx.PrepareContext(ctx, unchangedPaperSQL)
	if err != nil {
		return c, fmt.Errorf("store: import: prepare: %w", err)
	}
	defer unchanged.Close()
	upsert, err := tx.PrepareContext(ctx, upsertPaperSQL)
	if err != nil {
		return c, fmt.Errorf("store: import: prepare: %w", err)
	}
	defer upsert.Close()
	seen := map[int64]bool{}
	for _, p := range papers {
		row, err := newPaperRow(p, now)
		if err != nil {
			return c, err
		}
		var same bool
		if err := unchanged.QueryRowContext(ctx, row...).Scan(&same); err != nil {
			return c, fmt.Errorf("store: import line %d: %w", p.Line, err)
		}
		if same {
			c.Unchanged++
			continue
		}
		if err := deleteFTSEntry(ctx, tx, p.ID); err != nil {
			return c, err
		}
		var docid int64
		var title, abstract, authors, venue string
		var compounds sql.NullString
		if err := upsert.QueryRowContext(ctx, row...).Scan(&docid, &title, &abstract, &authors, &venue, &compounds); err != nil {
			return c, fmt.Errorf("store: import line %d: %w", p.Line, err)
		}
		if !compounds.Valid { // the stored abstract was kept: recompute from what is stored
			compounds.String = paperCompounds(title, abstract)
			if _, err := tx.ExecContext(ctx, `UPDATE papers SET compounds = ? WHERE docid = ?`, compounds.String, docid); err != nil {
				return c, fmt.Errorf("store: import line %d: %w", p.Line, err)
			}
		}
		if docid > maxBefore && !seen[docid] {
			c.Inserted++
		} else {
			c.Updated++
		}
		seen[docid] = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO papers_fts (rowid, title, abstract, authors, venue, compounds) VALUES (?, ?, ?, ?, ?, ?)`,
			docid, title, abstract, authors, venue, compounds.String); err != nil {
			return c, fmt.Errorf("store: import: index line %d: %w", p.Line, err)
		}
	}
	return c, nil
}

// paperRow is an ImportPaper's values in importColumns order, bound alike
// by upsertPaperSQL, unchangedPaperSQL and (after the stage's key)
// stageSQL.
type paperRow []any

func newPaperRow(p ImportPaper, now string) (paperRow, error) {
	authors, err := json.Marshal(nonNil(p.Authors))
	if err != nil {
		return nil, fmt.Errorf("store: import: %w", err)
	}
	var extra any
	if len(p.Extra) > 0 {
		extra = string(p.Extra)
	}
	return paperRow{p.ID, p.Title, string(authors), p.Year, p.Venue, p.Abstract, p.DOI, p.ArxivID, p.PMID, p.URL,
		p.Origin, now, extra, p.Volume, p.Issue, p.Pages, paperCompounds(p.Title, p.Abstract)}, nil
}

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
	counts, err := s.mergeStaged(ctx, tx, stage)
	if err != nil {
		return ImportCounts{}, err
	}
	if err := tx.Commit(); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: commit: %w", err)
	}
	return counts, nil
}

func (s *Store) mergeStaged(ctx context.Context, tx *sql.Tx, stage string) (ImportCounts, error) {
	var staged, fresh, same int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), (SELECT count(DISTINCT s.id) FROM import_staging s
		WHERE s.import_id = ?1 AND NOT EXISTS (SELECT 1 FROM papers p WHERE p.id = s.id)),
		(SELECT count(*) FROM import_staging n JOIN papers o ON o.id = n.id
		WHERE n.import_id = ?1 AND NOT `+paperChangedSQL+`)
		FROM import_staging WHERE import_id = ?1`, stage).Scan(&staged, &fresh, &same); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: count staged: %w", err)
	}
	if _, err := tx.ExecContext(ctx, mergeStagedSQL, stage, formatTime(s.Now())); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: move staged records: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM import_staging WHERE import_id = ?`, stage); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: clear stage: %w", err)
	}
	if err := s.rebuildIndexTx(ctx, tx); err != nil {
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

// deleteFTSEntry removes a paper's current index entry, if it has one. An
// external-content FTS5 table can only delete an entry given the exact
// values it indexed, which are the row's current values while the index is
// not stale.
func deleteFTSEntry(ctx context.Context, tx *sql.Tx, id string) error {
	var docid int64
	var title, abstract, authors, venue, compounds string
	err := tx.QueryRowContext(ctx, `SELECT docid, title, abstract, authors, venue, coalesce(compounds, '') FROM papers WHERE id = ?`, id).
		Scan(&docid, &title, &abstract, &authors, &venue, &compounds)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: import: read old row: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO papers_fts (papers_fts, rowid, title, abstract, authors, venue, compounds) VALUES ('delete', ?, ?, ?, ?, ?, ?)`,
		docid, title, abstract, authors, venue, compounds); err != nil {
		return fmt.Errorf("store: import: unindex old row: %w", err)
	}
	return nil
}

// RebuildLibraryIndex rebuilds the full-text index from the papers table
// and clears the stale mark, in one transaction. It holds the database's
// single writer for its duration (seconds for ~10^5 papers).
func (s *Store) RebuildLibraryIndex(ctx context.Context) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: rebuild library index: %w", err)
	}
	defer tx.Rollback()
	if err := s.rebuildIndexTx(ctx, tx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: rebuild library index: %w", err)
	}
	return nil
}

// rebuildIndexTx rebuilds the full-text index from the papers table (one
// FTS5 'rebuild', 4x faster than row triggers for bulk loads) and clears
// the stale mark, inside the caller's transaction, so a bulk import's rows
// and their index commit together. Rows whose compounds are not computed
// yet get them first, so the index covers them.
func (s *Store) rebuildIndexTx(ctx context.Context, tx *sql.Tx) error {
	if err := fillCompoundsTx(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')`); err != nil {
		return fmt.Errorf("rebuild library index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE library_index SET stale = 0, rebuilt_at = ? WHERE id = 1`, formatTime(s.Now())); err != nil {
		return fmt.Errorf("rebuild library index: mark fresh: %w", err)
	}
	return nil
}

// LibraryIndexStale reports whether rows were committed that the full-text
// index does not cover yet (an interrupted bulk import).
func (s *Store) LibraryIndexStale(ctx context.Context) (bool, error) {
	var stale bool
	if err := s.write.QueryRowContext(ctx, `SELECT stale FROM library_index WHERE id = 1`).Scan(&stale); err != nil {
		return false, fmt.Errorf("store: library index state: %w", err)
	}
	return stale, nil
}

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

const searchLibrarySQL = `SELECT ` + paperColumns + `
	FROM papers_fts JOIN papers p ON p.docid = papers_fts.rowid
	WHERE papers_fts MATCH ?1
	  AND (p.year = 0 OR ((?2 = 0 OR p.year >= ?2) AND (?3 = 0 OR p.year <= ?3)))
	ORDER BY ` + libraryBM25 + `
	LIMIT ?4`

// SearchLibrary runs an FTS5 MATCH expression (as the query package's local
// renderer writes it) over the library, best bm25 match first, keeping
// papers inside years (and those of unknown year, as YearRange.Contains
// does). A match expression FTS5 cannot parse is fault.EInvalid: the text
// may come from a researcher, and their typo is not our failure.
func (s *Store) SearchLibrary(ctx context.Context, match string, years research.YearRange, limit int) ([]research.RawPaper, error) {
	if strings.TrimSpace(match) == "" {
		return nil, fault.Errorf(fault.EInvalid, "the library search query is empty")
	}
	if limit <= 0 {
		return nil, fault.Errorf(fault.EInvalid, "the library search limit must be positive, not %d", limit)
	}
	limit = min(limit, research.MaxResultsLimit)
	rows, err := s.read.QueryContext(ctx, searchLibrarySQL, match, years.From, years.To, limit)
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// scanPaper reads one row of paperColumns.
func scanPaper(rows *sql.Rows) (research.RawPaper, error) {
	var p research.RawPaper
	var authors string
	if err := rows.Scan(&p.ID, &p.Title, &authors, &p.Year, &p.Venue, &p.Abstract, &p.DOI, &p.ArxivID, &p.PMID, &p.URL, &p.Volume, &p.Issue, &p.Pages); err != nil {
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
