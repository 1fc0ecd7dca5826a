package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"quarry/internal/research"
)

// paperConflictSQL is how an imported paper meets one already stored under
// the same stable ID: the newer record wins field by field, except that a
// field it leaves empty keeps the stored value. Extra is merged the same
// way key by key (json_patch), so re-importing an export in a format with
// no place for a corpus's own fields (arXiv categories in RIS) keeps them.
// The JSON functions are the dialect's (jsonValid, jsonPatch).
func paperConflictSQL(d dialect) string {
	return `ON CONFLICT (id) DO UPDATE SET
		title = excluded.title,
		authors = CASE WHEN excluded.authors <> '[]' THEN excluded.authors ELSE papers.authors END,
		year = CASE WHEN excluded.year <> 0 THEN excluded.year ELSE papers.year END,
		venue = CASE WHEN excluded.venue <> '' THEN excluded.venue ELSE papers.venue END,
		abstract = CASE WHEN excluded.abstract <> '' THEN excluded.abstract ELSE papers.abstract END,
		doi = CASE WHEN excluded.doi <> '' THEN excluded.doi ELSE papers.doi END,
		arxiv_id = CASE WHEN excluded.arxiv_id <> '' THEN excluded.arxiv_id ELSE papers.arxiv_id END,
		pmid = CASE WHEN excluded.pmid <> '' THEN excluded.pmid ELSE papers.pmid END,
		url = CASE WHEN excluded.url <> '' THEN excluded.url ELSE papers.url END,
		volume = CASE WHEN excluded.volume <> '' THEN excluded.volume ELSE papers.volume END,
		issue = CASE WHEN excluded.issue <> '' THEN excluded.issue ELSE papers.issue END,
		pages = CASE WHEN excluded.pages <> '' THEN excluded.pages ELSE papers.pages END,
		source = excluded.source,
		imported_at = excluded.imported_at,
		extra = CASE WHEN excluded.extra IS NULL THEN papers.extra WHEN ` + d.jsonValid("papers.extra") + ` AND ` + d.jsonValid("excluded.extra") + `
			THEN ` + d.jsonPatch("papers.extra", "excluded.extra") + ` ELSE excluded.extra END,
		compounds = CASE WHEN excluded.abstract <> '' THEN excluded.compounds ELSE NULL END`
}

// paperChangedSQL is true when the imported row n would change the stored
// row o under paperConflictSQL's rules: a field n leaves empty keeps o's
// value, so it changes nothing. Where the record came from (source) and
// when (imported_at) are not content. It lets an import tell a re-import of
// the same file ("unchanged") from one that corrects records ("updated").
//
// The JSON functions are the dialect's (see paperConflictSQL).
func paperChangedSQL(d dialect) string {
	return `(n.title IS DISTINCT FROM o.title
		OR (n.authors <> '[]' AND n.authors IS DISTINCT FROM o.authors)
		OR (n.year <> 0 AND n.year IS DISTINCT FROM o.year)
		OR (n.venue <> '' AND n.venue IS DISTINCT FROM o.venue)
		OR (n.abstract <> '' AND n.abstract IS DISTINCT FROM o.abstract)
		OR (n.doi <> '' AND n.doi IS DISTINCT FROM o.doi)
		OR (n.arxiv_id <> '' AND n.arxiv_id IS DISTINCT FROM o.arxiv_id)
		OR (n.pmid <> '' AND n.pmid IS DISTINCT FROM o.pmid)
		OR (n.url <> '' AND n.url IS DISTINCT FROM o.url)
		OR (n.volume <> '' AND n.volume IS DISTINCT FROM o.volume)
		OR (n.issue <> '' AND n.issue IS DISTINCT FROM o.issue)
		OR (n.pages <> '' AND n.pages IS DISTINCT FROM o.pages)
		OR (n.extra IS NOT NULL AND (CASE WHEN ` + d.jsonValid("o.extra") + ` AND ` + d.jsonValid("n.extra") + `
			THEN ` + d.jsonChanged("o.extra", "n.extra") + ` ELSE n.extra IS DISTINCT FROM o.extra END)))`
}

// unchangedPaperSQL says whether a paper with the bound values (a paperRow)
// is stored already with the same content.
// PostgreSQL types a bare parameter in a select list as text: year is cast.
func unchangedPaperSQL(d dialect) string {
	year := "?"
	if d.kind == dialectPostgres {
		year = "CAST(? AS bigint)"
	}
	return `SELECT EXISTS (SELECT 1 FROM papers o,
	(SELECT ? AS id, ? AS title, ? AS authors, ` + year + ` AS year, ? AS venue, ? AS abstract, ? AS doi, ? AS arxiv_id,
		? AS pmid, ? AS url, ? AS source, ? AS imported_at, ? AS extra, ? AS volume, ? AS issue, ? AS pages, ? AS compounds) n
	WHERE o.id = n.id AND NOT ` + paperChangedSQL(d) + `)`
}

// importColumns are the papers columns an import writes, in the order of a
// paperRow's values.
const importColumns = `id, title, authors, year, venue, abstract, doi, arxiv_id, pmid, url, source, imported_at, extra, volume, issue, pages, compounds`

func upsertPaperSQL(d dialect) string {
	return `INSERT INTO papers (` + importColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	` + paperConflictSQL(d) + `
	RETURNING docid, title, abstract, compounds`
}

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

// WritePapers stores papers in one transaction, the way to write an import
// that fits in one batch; they are searchable when it returns (the
// full-text index follows library_log, see SyncLibraryIndex). A paper
// stored already under the same ID is updated (see paperConflictSQL).
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
	if err := pruneLibraryLog(ctx, tx); err != nil {
		return ImportCounts{}, err
	}
	if err := tx.Commit(); err != nil {
		return ImportCounts{}, fmt.Errorf("store: import: commit: %w", err)
	}
	return counts, s.SyncLibraryIndex(ctx)
}

// upsertPapers writes papers inside tx.
func upsertPapers(ctx context.Context, tx *tx, papers []ImportPaper, now string) (ImportCounts, error) {
	var c ImportCounts
	var maxBefore int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(docid), 0) FROM papers`).Scan(&maxBefore); err != nil {
		return c, fmt.Errorf("store: import: %w", err)
	}
	unchanged, err := tx.PrepareContext(ctx, unchangedPaperSQL(tx.d))
	if err != nil {
		return c, fmt.Errorf("store: import: prepare: %w", err)
	}
	defer unchanged.Close()
	upsert, err := tx.PrepareContext(ctx, upsertPaperSQL(tx.d))
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
		var docid int64
		var title, abstract string
		var compounds sql.NullString
		if err := upsert.QueryRowContext(ctx, row...).Scan(&docid, &title, &abstract, &compounds); err != nil {
			return c, fmt.Errorf("store: import line %d: %w", p.Line, err)
		}
		if !compounds.Valid { // the stored abstract was kept: recompute from what is stored
			if _, err := tx.ExecContext(ctx, `UPDATE papers SET compounds = ? WHERE docid = ?`, paperCompounds(title, abstract), docid); err != nil {
				return c, fmt.Errorf("store: import line %d: %w", p.Line, err)
			}
		}
		if docid > maxBefore && !seen[docid] {
			c.Inserted++
		} else {
			c.Updated++
		}
		seen[docid] = true
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// StoredWork is what tells one work from another under the same stable
// ID: its title and publication type (papers.extra's "type", "" when
// unknown).
type StoredWork struct {
	Title, Type string
}

// LibraryWorks returns the stored title and type of each of ids the
// library holds, so an import can keep a different work that shares a DOI
// apart instead of overwriting it.
func (s *Store) LibraryWorks(ctx context.Context, ids []string) (map[string]StoredWork, error) {
	out := map[string]StoredWork{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	d := s.read.d
	rows, err := s.read.QueryContext(ctx, `SELECT id, title, coalesce(CASE WHEN `+d.jsonValid("extra")+` THEN `+d.jsonField("extra", "?2")+` END, '')
		FROM papers WHERE id IN `+d.jsonTexts("?1"), string(list), d.jsonKey("type"))
	if err != nil {
		return nil, fmt.Errorf("store: library works: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var w StoredWork
		if err := rows.Scan(&id, &w.Title, &w.Type); err != nil {
			return nil, fmt.Errorf("store: library works: %w", err)
		}
		out[id] = w
	}
	return out, rows.Err()
}
