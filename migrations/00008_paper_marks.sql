-- Screening marks, stored the moment a researcher clicks (issue 16): one
-- row per mark event, never updated, so who marked what and when is kept;
-- a paper's current mark in a run is its row with the highest seq. Marks
-- live outside the run's state, which only the engine writes, so marking
-- never races the engine's versioned commits.

-- +goose Up
CREATE TABLE paper_marks (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    paper_id      TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,            -- the review it was made in
    iteration     INTEGER NOT NULL,
    mark          TEXT NOT NULL CHECK (mark IN ('relevant','irrelevant','unsure')),
    note          TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '', -- exclusion reason (irrelevant only)
    marked_by     TEXT NOT NULL DEFAULT '',
    marked_at     TEXT NOT NULL
);
CREATE INDEX paper_marks_run_paper ON paper_marks (run_id, paper_id, seq);

-- +goose Down
DROP TABLE paper_marks;
