-- Dual screening (issue 20): a row of paper_marks is either a reviewer's
-- own mark of a paper or the resolution of a conflict between the
-- reviewers' marks (research.Screen tells which mark counts).

-- +goose Up
ALTER TABLE paper_marks ADD COLUMN resolution INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE paper_marks DROP COLUMN resolution;
