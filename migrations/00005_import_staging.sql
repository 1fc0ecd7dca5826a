-- A bulk import stages its records here, batch by batch, and moves them
-- into papers (and rebuilds the full-text index) in one transaction at the
-- end. An import that is interrupted (cancelled, a broken file, the process
-- killed) therefore leaves nothing in the library: its staged rows are
-- deleted when it fails, or, if the process died, by the next Open once
-- they are a day old (a live import in another process may still own
-- younger ones).

-- +goose Up
CREATE TABLE import_staging (
    import_id   TEXT NOT NULL,
    seq         INTEGER NOT NULL,              -- order in the input: later records win
    staged_at   TEXT NOT NULL,
    id          TEXT NOT NULL,
    title       TEXT NOT NULL,
    authors     TEXT NOT NULL,
    year        INTEGER NOT NULL,
    venue       TEXT NOT NULL,
    abstract    TEXT NOT NULL,
    doi         TEXT NOT NULL,
    arxiv_id    TEXT NOT NULL,
    pmid        TEXT NOT NULL,
    url         TEXT NOT NULL,
    source      TEXT NOT NULL,
    extra       TEXT,
    volume      TEXT NOT NULL,
    issue       TEXT NOT NULL,
    pages       TEXT NOT NULL,
    PRIMARY KEY (import_id, seq)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE import_staging;
