-- The local paper library: imported paper metadata and its FTS5 index.
--
-- papers.id is the paper's skills.StableID and is what everything else
-- refers to (UNIQUE NOT NULL, the upsert key). docid is an explicit INTEGER
-- PRIMARY KEY only because an external-content FTS5 table addresses rows by
-- integer rowid, and SQLite may renumber implicit rowids on VACUUM (and the
-- store takes its backups with VACUUM INTO); an explicit alias never moves,
-- so the index and its content table cannot drift apart.
--
-- There are deliberately no row triggers: bulk imports insert rows, then
-- run one INSERT INTO papers_fts(papers_fts) VALUES('rebuild') (about 4x
-- faster than per-row triggers here); small upserts maintain the index
-- explicitly in their own transaction. library_index.stale records that
-- rows were committed without their index entries (an interrupted import),
-- so the next import or RebuildLibraryIndex repairs it.

-- +goose Up
CREATE TABLE papers (
    docid       INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,          -- skills.StableID
    title       TEXT NOT NULL,
    authors     TEXT NOT NULL DEFAULT '[]',    -- JSON array of names
    year        INTEGER NOT NULL DEFAULT 0,    -- 0 = unknown
    venue       TEXT NOT NULL DEFAULT '',
    abstract    TEXT NOT NULL DEFAULT '',
    doi         TEXT NOT NULL DEFAULT '',
    arxiv_id    TEXT NOT NULL DEFAULT '',
    pmid        TEXT NOT NULL DEFAULT '',
    url         TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL DEFAULT '',      -- where the record was imported from
    imported_at TEXT NOT NULL,
    extra       TEXT                           -- optional JSON object of corpus-specific fields
);

CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, authors, venue,
    content = 'papers',
    content_rowid = 'docid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE library_index (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    stale      INTEGER NOT NULL DEFAULT 0,
    rebuilt_at TEXT NOT NULL DEFAULT ''
);
INSERT INTO library_index (id) VALUES (1);

-- +goose Down
DROP TABLE library_index;
DROP TABLE papers_fts;
DROP TABLE papers;
