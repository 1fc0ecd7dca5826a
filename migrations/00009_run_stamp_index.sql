-- The run stamp (store.RunStamp) is read on every run page and GET
-- /api/runs/:id: a run's version and its newest mark's seq. The version
-- column comes after the run's state in the row, so reading it from the
-- table walks the state's overflow pages (megabytes for a run of
-- thousands of papers); these covering indexes answer both from a few
-- index pages whatever the run's size.

-- +goose Up
CREATE INDEX runs_id_version ON runs (id, version);
CREATE INDEX paper_marks_run_seq ON paper_marks (run_id, seq);

-- +goose Down
DROP INDEX paper_marks_run_seq;
DROP INDEX runs_id_version;
