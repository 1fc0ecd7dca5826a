-- The text of every workflow definition file a run was started from, by
-- its SHA-256 (the hash the run's state stamps): a run of an edited or
-- removed file is finished by the text it began with. Written with the
-- run (INSERT OR IGNORE: many runs share one text); never updated.

-- +goose Up
CREATE TABLE workflow_sources (
    hash       TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    file       TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE workflow_sources;
