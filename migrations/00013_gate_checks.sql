-- Stage runs and gate checks as the audit trail keeps them (issue 17,
-- "State machines"). step_runs gains the status a record leaves its stage
-- in (engine.StepRecord.Status) and the step's max attempts; gate_checks
-- holds every automatic check a gate made, committed with the step
-- record of its visit (same run_id and seq).

-- +goose Up
ALTER TABLE step_runs ADD COLUMN status TEXT NOT NULL DEFAULT 'completed'
    CHECK (status IN ('pending','waiting','completed','failed','skipped','canceled'));
ALTER TABLE step_runs ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 0; -- 0: not an attempt, or not known

-- Records written before: the same derivation as StepRecord.Status.
UPDATE step_runs SET status = CASE
    WHEN outcome IN ('waiting','checkpoint') THEN 'waiting'
    WHEN outcome = 'retry' THEN 'pending'
    WHEN outcome IN ('aborted','canceled') THEN 'canceled'
    WHEN error <> '' OR outcome IN ('error','failed','escalated','fail') THEN 'failed'
    WHEN outcome = 'skip' OR output = '{"gate":"skipped"}' THEN 'skipped'
    ELSE 'completed' END;

-- Clustered by (run_id, seq, n) like step_runs: a visit's checks sit
-- beside each other and beside the run's other checks.
CREATE TABLE gate_checks (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,            -- the step_runs record of the visit
    n          INTEGER NOT NULL,            -- the check's place in the visit
    stage      TEXT NOT NULL,
    iteration  INTEGER NOT NULL,
    type       TEXT NOT NULL,               -- 'condition'
    config     TEXT NOT NULL,               -- what was checked (the expression)
    passed     INTEGER NOT NULL CHECK (passed IN (0, 1)),
    result     TEXT,                        -- JSON; NULL when it could not be evaluated
    error      TEXT NOT NULL DEFAULT '',
    checked_at TEXT NOT NULL,
    PRIMARY KEY (run_id, seq, n)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE gate_checks;
ALTER TABLE step_runs DROP COLUMN max_attempts;
ALTER TABLE step_runs DROP COLUMN status;
