-- PostgreSQL's papers.text_search is redefined with a text search
-- configuration that tokenizes as FTS5 did (postgres/00027_fts5_like_tsconfig.sql).
-- SQLite has no text_search (its library index is in memory, with FTS5's
-- tokenizer already), so here there is nothing to change; the file keeps
-- the two dialects at one version (TestPostgresMigrationsPaired).

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
