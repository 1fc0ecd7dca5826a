-- Votes at gates that wait for several people (issue 18, "Human gates
-- with several people"). Every vote is a row: a person's later vote at
-- the same checkpoint sets replaced_at on their earlier one (one counted
-- vote per person), and a vote arriving after the gate resolved is kept
-- with late = 1. The vote that resolves the gate is written in the same
-- transaction as its decision (decisions' UNIQUE checkpoint_id).

-- +goose Up
CREATE TABLE gate_votes (
    seq           INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    checkpoint_id TEXT NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
    voter         TEXT NOT NULL,
    option        TEXT NOT NULL,
    input         TEXT NOT NULL DEFAULT '',
    note          TEXT NOT NULL DEFAULT '',
    voted_at      TEXT NOT NULL,
    replaced_at   TEXT,                      -- set when the same voter voted again
    late          INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1))
);
CREATE INDEX gate_votes_run ON gate_votes (run_id, seq);
-- One counted vote per person and checkpoint.
CREATE UNIQUE INDEX gate_votes_counted ON gate_votes (checkpoint_id, voter) WHERE replaced_at IS NULL AND late = 0;

-- +goose Down
DROP TABLE gate_votes;
