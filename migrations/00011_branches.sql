-- Parallel stages (issue 17). A visit of a parallel stage is a "fan": its
-- branches are rows here, inserted with the commit that parks the run
-- (fan = the run version that commit produced, the seq of its step_runs
-- row). Each branch advances as its own job and commits on its own: a
-- crash re-runs only open branches, and the run's join reads the rows.
-- branch_steps is each branch step attempt, as step_runs is for the run.

-- +goose Up
CREATE TABLE branch_runs (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    fan         INTEGER NOT NULL,
    branch      TEXT NOT NULL,
    step        TEXT NOT NULL,              -- the parallel stage
    position    INTEGER NOT NULL,           -- order in the definition or for_each list
    status      TEXT NOT NULL CHECK (status IN ('pending','running','completed','failed','skipped','canceled')),
    cursor      TEXT NOT NULL DEFAULT '',   -- the branch's next stage; '' once finished
    attempt     INTEGER NOT NULL DEFAULT 0, -- failed attempts of cursor
    state       TEXT NOT NULL DEFAULT '{}', -- the branch's own outputs, context and item
    error       TEXT NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 0,
    started_at  TEXT NOT NULL DEFAULT '',
    finished_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, fan, branch)
) WITHOUT ROWID;
CREATE INDEX branch_runs_open ON branch_runs (status) WHERE status IN ('pending', 'running');
CREATE INDEX branch_runs_step ON branch_runs (run_id, step, fan);

CREATE TABLE branch_steps (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    fan         INTEGER NOT NULL,
    branch      TEXT NOT NULL,
    seq         INTEGER NOT NULL,           -- the branch version the attempt produced
    step        TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    outcome     TEXT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    duration_ms REAL NOT NULL DEFAULT 0,
    output      TEXT,
    PRIMARY KEY (run_id, fan, branch, seq)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE branch_steps;
DROP TABLE branch_runs;
