-- papers.text_search tokenized as FTS5 did (the in-memory index does:
-- unicode61 with the porter stemmer), so the PostgreSQL library ranking
-- (Options.LibraryRanking "postgres") matches what SQLite's does, rather
-- than the 'english' configuration of 00025, which differs in three ways:
--   * it drops English stop words, FTS5 keeps every word: the dictionary
--     quarry_stem has no StopWords;
--   * it stems with Snowball's English (Porter2), FTS5 with Porter's
--     original algorithm: quarry_stem is Snowball's 'porter', that one;
--   * it indexes a hyphenated word whole and in parts ("self-report",
--     "self", "report"), FTS5 in parts only ("-" separates tokens): the
--     configuration quarry maps no compound token types, only their parts,
--     which also keeps a phrase's positions consecutive.
-- Every word type (numword and the parts with digits too) goes through
-- quarry_stem, as FTS5 stems every token.
--
-- FTS5's tokens are runs of letters and digits: any other character
-- separates them. PostgreSQL's parser instead reads "3.5", "1.2.3",
-- "mg/kg", "-19", e-mail addresses, URLs and paths as single tokens, and
-- no configuration can change its parser. quarry_separate replaces every
-- run of ASCII punctuation (the ranges !-/ :-@ [-` {-~; a regular
-- expression's ranges are by code point, whatever the collation) with a
-- space before parsing, so the parser sees only words and numbers, as
-- FTS5's tokenizer does; queries pass their phrases through it too.
-- regexp_replace is immutable, unlike unaccent, so a generated column may
-- call it; translate would do the same 15 times slower on UTF-8 text. Non-ASCII punctuation (dashes,
-- quotes) the parser already takes as a separator.
--
-- Still unlike FTS5: diacritics stay (FTS5 had remove_diacritics 2; the
-- unaccent dictionary would need CREATE EXTENSION unaccent in every
-- database, left out so migrating needs nothing beyond the schema).
--
-- text_search is dropped and added again (a generated column's
-- expression cannot be altered), and its GIN index with it, by the same
-- name; the column stays papers' last. Queries name the configuration
-- and the function too (internal/store/library_tsvector.go, tsConfig).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION quarry_separate(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT regexp_replace(t, '[!-/:-@\[-`{-~]+', ' ', 'g') $$;
-- +goose StatementEnd
CREATE TEXT SEARCH DICTIONARY quarry_stem (TEMPLATE = snowball, Language = porter);
CREATE TEXT SEARCH CONFIGURATION quarry (COPY = english);
ALTER TEXT SEARCH CONFIGURATION quarry
    ALTER MAPPING FOR asciiword, word, numword, hword_asciipart, hword_part, hword_numpart
    WITH quarry_stem;
ALTER TEXT SEARCH CONFIGURATION quarry
    DROP MAPPING FOR asciihword, hword, numhword;

DROP INDEX papers_text_search;
ALTER TABLE papers DROP COLUMN text_search;
ALTER TABLE papers ADD COLUMN text_search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('quarry', quarry_separate(title)), 'A') ||
    setweight(to_tsvector('quarry', quarry_separate(abstract)), 'B') ||
    setweight(to_tsvector('quarry', quarry_separate(coalesce(compounds, ''))), 'B') ||
    setweight(to_tsvector('quarry', quarry_separate(authors)), 'C') ||
    setweight(to_tsvector('quarry', quarry_separate(venue)), 'D')
) STORED;
CREATE INDEX papers_text_search ON papers USING GIN (text_search);

-- +goose Down
DROP INDEX papers_text_search;
ALTER TABLE papers DROP COLUMN text_search;
ALTER TABLE papers ADD COLUMN text_search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') ||
    setweight(to_tsvector('english', abstract), 'B') ||
    setweight(to_tsvector('english', coalesce(compounds, '')), 'B') ||
    setweight(to_tsvector('english', authors), 'C') ||
    setweight(to_tsvector('english', venue), 'D')
) STORED;
CREATE INDEX papers_text_search ON papers USING GIN (text_search);
DROP TEXT SEARCH CONFIGURATION quarry;
DROP TEXT SEARCH DICTIONARY quarry_stem;
DROP FUNCTION quarry_separate(text);
