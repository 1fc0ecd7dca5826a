-- Forks (issue 18): a run started from a past checkpoint of another run,
-- with the state as it was there. checkpoint_states keeps the run's state
-- at each checkpoint a person was asked at (written with the checkpoint,
-- in its commit); run_forks records where a fork came from.

-- +goose Up
CREATE TABLE checkpoint_states (
    checkpoint_id TEXT PRIMARY KEY REFERENCES checkpoints (id) ON DELETE CASCADE,
    state         TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE run_forks (
    run_id          TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    from_run        TEXT NOT NULL,
    from_checkpoint TEXT NOT NULL,
    forked_by       TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX run_forks_from ON run_forks (from_run);

-- +goose Down
DROP TABLE run_forks;
DROP TABLE checkpoint_states;
