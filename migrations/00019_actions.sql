-- Actions and sub-workflows (issue 18 §3). run_parents records the run a
-- start_workflow stage started: its parent run and stage, and whether the
-- parent waits (a waiting parent is woken by the child's last commit).
-- run_actions is the audit of built-in actions (action stages and the
-- workflow's on_complete / on_error hooks): every attempt that failed, and
-- the one that succeeded, so a notice that could not be sent is visible
-- on the run page without failing the run.

-- +goose Up
CREATE TABLE run_parents (
    run_id      TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    parent_run  TEXT NOT NULL,
    parent_step TEXT NOT NULL,
    wait        INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX run_parents_parent ON run_parents (parent_run);

CREATE TABLE run_actions (
    id      INTEGER PRIMARY KEY,
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    stage   TEXT NOT NULL,             -- the action stage, or on_complete / on_error
    action  TEXT NOT NULL,             -- export, notify, snapshot, start_workflow
    attempt INTEGER NOT NULL,
    status  TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error   TEXT NOT NULL DEFAULT '',
    at      TEXT NOT NULL
);
CREATE INDEX run_actions_run ON run_actions (run_id, id);

-- +goose Down
DROP TABLE run_actions;
DROP TABLE run_parents;
