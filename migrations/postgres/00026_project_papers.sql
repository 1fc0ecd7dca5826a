-- A project's library selection (see ../00026_project_papers.sql).

-- +goose Up
CREATE TABLE project_papers (
    project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    paper_id   TEXT COLLATE "C" NOT NULL,
    added_by   TEXT COLLATE "C" NOT NULL DEFAULT '',
    added_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project_id, paper_id)
);
CREATE INDEX project_papers_paper ON project_papers (paper_id);

-- +goose Down
DROP TABLE project_papers;
