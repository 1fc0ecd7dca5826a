-- The library's full-text index moves out of SQLite (papers_fts, FTS5)
-- into the server's memory (internal/textindex): the same matches, bm25
-- scores and order, several times faster to query and to build.
--
-- library_log is how every process keeps its in-memory index in step with
-- the papers table, whoever wrote it (a server, `quarry import` beside it,
-- another replica): a row per change of a paper's indexed text, written by
-- triggers in the writer's own transaction, so no write path can forget
-- it. An index remembers the last seq it applied and re-reads the papers
-- logged after it. Old entries are pruned (see store.pruneLibraryLog); an
-- index that fell behind the oldest entry left rebuilds from papers.
-- AUTOINCREMENT: a seq is never reused after a prune.

-- +goose Up
DROP TABLE papers_fts;
DROP TABLE library_index;
CREATE TABLE library_log (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    docid INTEGER NOT NULL
);
-- +goose StatementBegin
CREATE TRIGGER papers_logged_insert AFTER INSERT ON papers BEGIN
    INSERT INTO library_log (docid) VALUES (new.docid);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER papers_logged_update AFTER UPDATE OF title, abstract, authors, venue, compounds, year ON papers BEGIN
    INSERT INTO library_log (docid) VALUES (new.docid);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER papers_logged_delete AFTER DELETE ON papers BEGIN
    INSERT INTO library_log (docid) VALUES (old.docid);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER papers_logged_delete;
DROP TRIGGER papers_logged_update;
DROP TRIGGER papers_logged_insert;
DROP TABLE library_log;
CREATE TABLE library_index (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    stale      INTEGER NOT NULL DEFAULT 1,
    rebuilt_at TEXT NOT NULL DEFAULT ''
);
INSERT INTO library_index (id) VALUES (1);
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, authors, venue, compounds,
    content = 'papers',
    content_rowid = 'docid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
