-- The write probe: when a full disk (or the database's size cap) stopped
-- work, the job queue writes a little here, then deletes it, to learn that
-- the database takes writes again before it resumes the work (see
-- store.Writable). It holds no data between probes.

-- +goose Up
CREATE TABLE write_probe (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    pad BLOB NOT NULL
);

-- +goose Down
DROP TABLE write_probe;
