-- Gate timers (issue 18, "Time"): how long a person has at a gate. One
-- row per gate checkpoint with a timeout, written in the commit that asks
-- (with the job due when it runs out); an extension moves due_at and
-- counts, a firing or a person's decision ends it (fired / canceled).
-- gate_notices records every event of a gate's timer and notify
-- (entered, extended, timed_out), whom it was for and whether it was sent
-- (pending: committed, not yet attempted; start-up sends those again).

-- +goose Up
CREATE TABLE gate_timers (
    checkpoint_id  TEXT PRIMARY KEY REFERENCES checkpoints (id) ON DELETE CASCADE,
    run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    stage          TEXT NOT NULL,
    iteration      INTEGER NOT NULL,
    due_at         TEXT NOT NULL,
    extensions     INTEGER NOT NULL DEFAULT 0,
    max_extensions INTEGER NOT NULL DEFAULT 0,
    default_option TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('pending', 'fired', 'canceled')),
    outcome        TEXT NOT NULL DEFAULT '',   -- default, escalate, fail, goto:<stage>
    fired_at       TEXT,
    created_at     TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX gate_timers_run ON gate_timers (run_id);
CREATE INDEX gate_timers_due ON gate_timers (due_at) WHERE status = 'pending';

CREATE TABLE gate_notices (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    checkpoint_id TEXT NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
    stage         TEXT NOT NULL,
    event         TEXT NOT NULL CHECK (event IN ('entered', 'extended', 'timed_out')),
    due_at        TEXT NOT NULL DEFAULT '',
    extensions    INTEGER NOT NULL DEFAULT 0,
    outcome       TEXT NOT NULL DEFAULT '',
    targets       TEXT NOT NULL DEFAULT '[]',  -- JSON [{webhook} | {email}]
    status        TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'recorded')),
    error         TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    attempted_at  TEXT
);
CREATE INDEX gate_notices_run ON gate_notices (run_id, seq);
CREATE INDEX gate_notices_pending ON gate_notices (seq) WHERE status = 'pending';

-- +goose Down
DROP TABLE gate_notices;
DROP TABLE gate_timers;
