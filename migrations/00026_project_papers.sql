-- A project's library selection (issue 20): the library stays the
-- installation's (one copy of each paper, deduplicated across every
-- import), and each project picks the papers it works with, by importing
-- into it or adding library papers. A search run of the project may
-- search only its selection. paper_id is papers.id, the paper's stable ID;
-- it is not a foreign key because papers are upserted by id (an import
-- replaces a row's fields, never its id), and a selection row of a paper
-- gone from the library simply matches nothing.

-- +goose Up
CREATE TABLE project_papers (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    paper_id   TEXT NOT NULL,
    added_by   TEXT NOT NULL DEFAULT '',   -- display name of who added it
    added_at   TEXT NOT NULL,
    PRIMARY KEY (project_id, paper_id)
) WITHOUT ROWID;
CREATE INDEX project_papers_paper ON project_papers (paper_id);

-- +goose Down
DROP TABLE project_papers;
