-- Files a researcher attaches to a run at the strategy checkpoint: an
-- export from another database (Embase, Scopus, Web of Science, ...) whose
-- records then flow through the run's dedup, scoring and review like
-- searched ones. The parsed records are kept here, once, as a JSON array of
-- papers; strategies refer to a file by id, so a decision or a strategy in
-- the run state stays small however big the file.

-- +goose Up
CREATE TABLE run_files (
    id          TEXT PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,                 -- the uploaded file's name
    format      TEXT NOT NULL,                 -- biblio format read
    records     INTEGER NOT NULL,              -- readable records kept
    skipped     TEXT NOT NULL DEFAULT '[]',    -- JSON [{line, reason}] of records left out
    uploaded_by TEXT NOT NULL DEFAULT '',
    uploaded_at TEXT NOT NULL,
    papers      TEXT NOT NULL                  -- JSON array of skills.RawPaper
);
CREATE INDEX run_files_run ON run_files (run_id);

-- +goose Down
DROP TABLE run_files;
