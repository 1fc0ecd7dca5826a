-- Runs started at a stage (issue 18 §4): a run started somewhere other
-- than its workflow's first stage, or with part of its state given,
-- records where it started, which state keys were given and by whom.

-- +goose Up
CREATE TABLE run_starts (
    run_id     TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    stage      TEXT NOT NULL,
    given      TEXT NOT NULL DEFAULT '[]',
    started_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE run_starts;
