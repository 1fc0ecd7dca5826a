-- Which runs a paper appeared in, for the library's paper page (issue 16):
-- one row per paper a run showed for review, written with the review
-- checkpoint that showed it (store.Commit), so the page reads an index
-- instead of decoding every run's state. iteration is the first review
-- that showed it. Runs reviewed before this migration are filled from
-- their review checkpoints' payloads below.
--
-- runs_created serves the /runs list, newest first. papers_newest lets the
-- library's list skip to any page of 75,000 papers by walking a small
-- index (1 ms) instead of the papers themselves, abstracts and all (290
-- ms for the last page); it repeats the rowid, which is the point.

-- +goose Up
CREATE TABLE run_papers (
    paper_id  TEXT NOT NULL,
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    iteration INTEGER NOT NULL,
    PRIMARY KEY (paper_id, run_id)
) WITHOUT ROWID;
CREATE INDEX run_papers_run ON run_papers (run_id);
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX papers_newest ON papers (docid);

INSERT OR IGNORE INTO run_papers (paper_id, run_id, iteration)
SELECT json_extract(p.value, '$.id'), c.run_id, c.iteration
FROM checkpoints c,
     json_each(CASE WHEN json_valid(c.payload) THEN c.payload ELSE '{}' END, '$.collection.papers') p
WHERE c.kind = 'result_review'
  AND json_type(p.value, '$.id') = 'text' AND json_extract(p.value, '$.id') <> ''
ORDER BY c.iteration, c.created_at;

-- +goose Down
DROP INDEX papers_newest;
DROP INDEX runs_created;
DROP TABLE run_papers;
