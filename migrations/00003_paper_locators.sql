-- Volume, issue and pages locate a journal article. Imports from reference
-- managers (BibTeX, RIS, MEDLINE, ...) carry them, exports must give them
-- back, and the deduplicator uses them to tell a conference abstract from
-- the journal paper of the same title; so they get columns rather than a
-- place in papers.extra. Existing rows get '' (unknown).

-- +goose Up
ALTER TABLE papers ADD COLUMN volume TEXT NOT NULL DEFAULT '';
ALTER TABLE papers ADD COLUMN issue  TEXT NOT NULL DEFAULT '';
ALTER TABLE papers ADD COLUMN pages  TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE papers DROP COLUMN pages;
ALTER TABLE papers DROP COLUMN issue;
ALTER TABLE papers DROP COLUMN volume;
