-- Hyphenated compounds: writers spell "pre-training", "pretraining" and
-- "pre training" for one idea, and FTS5's tokenizer splits on hyphens, so a
-- search for "pretraining" missed every "pre-training" paper.
-- papers.compounds holds the joined form of each hyphenated word of the
-- title and abstract ("pretraining"), computed in Go (research.Compounds) and
-- indexed as a fifth FTS column. NULL means "not computed yet": rows from
-- before this migration, and rows an import has just written. The store
-- fills them (and rebuilds or updates the index) in the same transaction
-- as the import, and on Open for rows migrated from an older schema; the
-- partial index finds them without a scan.

-- +goose Up
ALTER TABLE papers ADD COLUMN compounds TEXT;
CREATE INDEX papers_compounds_pending ON papers (docid) WHERE compounds IS NULL;
ALTER TABLE import_staging ADD COLUMN compounds TEXT NOT NULL DEFAULT '';
DROP TABLE papers_fts;
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, authors, venue, compounds,
    content = 'papers',
    content_rowid = 'docid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
UPDATE library_index SET stale = 1;

-- +goose Down
DROP TABLE papers_fts;
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, authors, venue,
    content = 'papers',
    content_rowid = 'docid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
ALTER TABLE import_staging DROP COLUMN compounds;
DROP INDEX papers_compounds_pending;
ALTER TABLE papers DROP COLUMN compounds;
UPDATE library_index SET stale = 1;
