-- Triggers and concurrency limits (issue 18 §2). workflow_triggers keeps
-- each trigger's state: a schedule's next due time (taken by
-- compare-and-swap when it fires, so a slot fires once across restarts
-- and processes) and a webhook's secret token. trigger_firings records
-- every firing with the run it started or the error that kept it from
-- starting. run_slots are the runs executing now (held while a worker
-- advances them, with a lease a dead process cannot keep) and the runs
-- queued behind a concurrency limit, with why.

-- +goose Up
CREATE TABLE workflow_triggers (
    workflow   TEXT NOT NULL,
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    spec       TEXT NOT NULL DEFAULT '',
    next_due   TEXT,
    token      TEXT,
    token_at   TEXT,
    PRIMARY KEY (workflow, name)
) WITHOUT ROWID;

CREATE TABLE trigger_firings (
    id       INTEGER PRIMARY KEY,
    workflow TEXT NOT NULL,
    trigger  TEXT NOT NULL,
    kind     TEXT NOT NULL,
    at       TEXT NOT NULL,
    due      TEXT,
    missed   INTEGER NOT NULL DEFAULT 0,
    run_id   TEXT,
    error    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX trigger_firings_workflow ON trigger_firings (workflow, id);

CREATE TABLE run_slots (
    run_id      TEXT PRIMARY KEY,
    workflow    TEXT NOT NULL,
    state       TEXT NOT NULL, -- executing | queued
    lease_until TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    since       TEXT NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE run_slots;
DROP TABLE trigger_firings;
DROP TABLE workflow_triggers;
