-- Paper vectors for semantic retrieval (issue 19 §5): one embedding per
-- library paper and model, a little-endian float32 BLOB of dim values.
-- Vectors of different models cannot be compared, so the model is part of
-- the key, and a changed model simply has no vectors yet.
--
-- A paper whose title or abstract changes (a re-import that corrects it)
-- or that is deleted loses its vectors, by trigger, so the background job
-- embeds it again; the triggers fire on updates and deletes only, so bulk
-- inserts of new papers (the import's hot path) pay nothing for them.
-- vector_generation counts every change to the vectors, so a process that
-- holds them in memory knows with one row read when to read them again.

-- +goose Up
CREATE TABLE paper_vectors (
    model  TEXT NOT NULL,
    docid  INTEGER NOT NULL,
    dim    INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, docid)
) WITHOUT ROWID;
CREATE INDEX paper_vectors_docid ON paper_vectors (docid);

CREATE TABLE vector_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL DEFAULT 0
);
INSERT INTO vector_generation (id) VALUES (1);

-- +goose StatementBegin
CREATE TRIGGER papers_text_changed_drop_vectors AFTER UPDATE OF title, abstract ON papers
WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract
BEGIN
    DELETE FROM paper_vectors WHERE docid = old.docid;
    UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER papers_deleted_drop_vectors AFTER DELETE ON papers
BEGIN
    DELETE FROM paper_vectors WHERE docid = old.docid;
    UPDATE vector_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER papers_deleted_drop_vectors;
DROP TRIGGER papers_text_changed_drop_vectors;
DROP TABLE vector_generation;
DROP TABLE paper_vectors;
