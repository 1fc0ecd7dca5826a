-- The workflow engine's durable state. Every engine transition commits
-- runs + step_runs (+ checkpoints/decisions) in one transaction.

-- +goose Up
CREATE TABLE runs (
    id            TEXT PRIMARY KEY,            -- unguessable: the share link
    workflow      TEXT NOT NULL,
    params        TEXT NOT NULL DEFAULT '{}',  -- immutable JSON parameters
    state         TEXT NOT NULL DEFAULT '{}',  -- JSON state carried between steps
    current_step  TEXT NOT NULL DEFAULT '',    -- next step to execute; '' once ended
    status        TEXT NOT NULL CHECK (status IN ('pending','running','waiting','completed','failed','escalated','canceled')),
    iteration     INTEGER NOT NULL DEFAULT 1 CHECK (iteration >= 1),
    attempt       INTEGER NOT NULL DEFAULT 0,  -- failed attempts of current_step
    checkpoint_id TEXT,                        -- checkpoint the run is stopped at
    version       INTEGER NOT NULL DEFAULT 0,  -- optimistic lock, +1 per commit
    error         TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX runs_status ON runs (status);

-- Clustered by (run_id, seq): a run's history is contiguous on disk, so a
-- step commit dirties one step_runs page and needs no secondary index.
-- seq is the run's version that the transition produced.
CREATE TABLE step_runs (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    step        TEXT NOT NULL,
    iteration   INTEGER NOT NULL,
    attempt     INTEGER NOT NULL,
    outcome     TEXT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    duration_ms REAL NOT NULL DEFAULT 0,
    output      TEXT,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE checkpoints (
    id         TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    iteration  INTEGER NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('pending','decided','expired')),
    created_at TEXT NOT NULL
);
CREATE INDEX checkpoints_run ON checkpoints (run_id, created_at);

-- UNIQUE(checkpoint_id): the schema itself forbids a second decision.
CREATE TABLE decisions (
    id            INTEGER PRIMARY KEY,
    checkpoint_id TEXT NOT NULL UNIQUE REFERENCES checkpoints (id) ON DELETE CASCADE,
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    action        TEXT NOT NULL CHECK (action IN ('approve','edit','reject')),
    revised_data  TEXT,
    note          TEXT NOT NULL DEFAULT '',
    decided_by    TEXT NOT NULL,
    decided_at    TEXT NOT NULL
);
CREATE INDEX decisions_run ON decisions (run_id, decided_at);

-- Online backups taken before applying migrations to an existing database.
CREATE TABLE backups (
    id           INTEGER PRIMARY KEY,
    path         TEXT NOT NULL,
    from_version INTEGER NOT NULL,
    created_at   TEXT NOT NULL
);

-- Small server settings (e.g. the generated session key).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE backups;
DROP TABLE decisions;
DROP TABLE checkpoints;
DROP TABLE step_runs;
DROP TABLE runs;
