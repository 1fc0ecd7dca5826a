package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"quarry/internal/research"
	"quarry/internal/textindex"
)

// On PostgreSQL the library can be ranked by the database itself
// (Options.LibraryRanking "postgres"): a MATCH expression becomes a
// tsquery over papers.text_search (its GIN index finds the matches) and
// FTS5's bm25 ranks them, computed from text_search's positions and
// labels (library_tsbm25.go). No process then holds an index in memory:
// docs/search.md compares the two rankings on the search benchmark.

// Library rankings, Options.LibraryRanking's values.
const (
	RankMemory   = "memory"
	RankPostgres = "postgres"
)

// tsConfig is the text search configuration of papers.text_search
// (migrations/postgres/00027_fts5_like_tsconfig.sql: FTS5's tokenizer as
// near as PostgreSQL allows), and tsSeparate the function its text goes
// through first (ASCII punctuation to spaces, so tokens are runs of
// letters and digits as in FTS5): a query's words must be normalised by
// the same two to meet the document's lexemes.
const (
	tsConfig   = "quarry"
	tsSeparate = "quarry_separate"
)

// tsPhrase is the tsquery of a phrase's text in the SQL parameter ?n:
// its words in order, normalised as the documents' were.
func tsPhrase(n int) string {
	return "phraseto_tsquery('" + tsConfig + "', " + tsSeparate + "(?" + strconv.Itoa(n) + "))"
}

// maxNearDistance is the largest NEAR distance translated exactly (as
// every distance up to it, both ways round); a larger one is read as AND,
// which finds the same papers and more.
const maxNearDistance = 32

// tsquerySQL writes e as a SQL expression of type tsquery, appending the
// phrases' text to args and naming them by number (?N, from len(args)+1):
// no text of the query is ever part of the SQL. A phrase is tsPhrase;
// AND, OR and NOT are tsquery's &&, || and !!; NEAR of two phrases
// is each distance up to its own, either way round (tsquery_phrase); of
// more, every pair near each other, which FTS5's NEAR implies.
func tsquerySQL(e *textindex.Expr, args *[]any) string {
	switch e.Op {
	case textindex.OpPhrase:
		*args = append(*args, e.Text)
		return tsPhrase(len(*args))
	case textindex.OpAnd, textindex.OpOr:
		op := " && "
		if e.Op == textindex.OpOr {
			op = " || "
		}
		parts := make([]string, len(e.Kids))
		for i, k := range e.Kids {
			parts[i] = tsquerySQL(k, args)
		}
		return "(" + strings.Join(parts, op) + ")"
	case textindex.OpNot:
		return "(" + tsquerySQL(e.Kids[0], args) + " && !!" + tsquerySQL(e.Kids[1], args) + ")"
	case textindex.OpNear:
		kids := make([]string, len(e.Kids))
		for i, k := range e.Kids {
			kids[i] = tsquerySQL(k, args)
		}
		if len(kids) == 1 {
			return kids[0]
		}
		if e.Dist > maxNearDistance {
			return "(" + strings.Join(kids, " && ") + ")"
		}
		var pairs []string
		for i := range kids {
			for j := i + 1; j < len(kids); j++ {
				var alts []string
				for d := 1; d <= e.Dist+1; d++ {
					alts = append(alts,
						fmt.Sprintf("tsquery_phrase(%s, %s, %d)", kids[i], kids[j], d),
						fmt.Sprintf("tsquery_phrase(%s, %s, %d)", kids[j], kids[i], d))
				}
				pairs = append(pairs, "("+strings.Join(alts, " || ")+")")
			}
		}
		return "(" + strings.Join(pairs, " && ") + ")"
	}
	panic(fmt.Sprintf("store: tsquery of unknown operator %d", e.Op))
}

// libraryTsquery turns match into a tsquery's text, evaluated by the
// server so it normalises the words; "" when no word of it is a lexeme
// (only stop words or punctuation), which matches nothing.
func (s *Store) libraryTsquery(ctx context.Context, match string) (string, error) {
	q, err := parseMatch(match)
	if err != nil {
		return "", err
	}
	return s.tsqueryOf(ctx, q)
}

// tsqueryOf is libraryTsquery of a parsed expression.
func (s *Store) tsqueryOf(ctx context.Context, q *textindex.Expr) (string, error) {
	var args []any
	expr := tsquerySQL(q, &args)
	var text string
	if err := s.read.QueryRowContext(ctx, `SELECT CAST(`+expr+` AS text)`, args...).Scan(&text); err != nil {
		return "", fmt.Errorf("store: search library: %w", err)
	}
	return text, nil
}

// tsFilter is the WHERE clause (after the match) keeping papers inside
// years, and those of unknown year, and inside ctx's library selection
// when it names one: what the in-memory path's inYears and within keep.
// It appends its parameters to args, numbered after those there.
func tsFilter(ctx context.Context, years research.YearRange, args *[]any) string {
	var b strings.Builder
	n := func(v any) string {
		*args = append(*args, v)
		return "?" + strconv.Itoa(len(*args))
	}
	if years != (research.YearRange{}) {
		fmt.Fprintf(&b, " AND (p.year = 0 OR ((%s = 0 OR p.year >= %[1]s) AND (%s = 0 OR p.year <= %[2]s)))", "CAST("+n(years.From)+" AS bigint)", "CAST("+n(years.To)+" AS bigint)")
	}
	if project := research.LibrarySelection(ctx); project != "" {
		fmt.Fprintf(&b, " AND p.id IN (SELECT s.paper_id FROM project_papers s WHERE s.project_id = %s)", n(project))
	}
	return b.String()
}

// countLibraryTsvector is countLibrary on PostgreSQL's text_search.
func (s *Store) countLibraryTsvector(ctx context.Context, match string, years research.YearRange) (int, error) {
	tsq, err := s.libraryTsquery(ctx, match)
	if err != nil || tsq == "" {
		return 0, err
	}
	args := []any{tsq}
	where := tsFilter(ctx, years, &args)
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM papers p WHERE p.text_search @@ CAST(?1 AS tsquery)`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count library matches: %w", err)
	}
	return n, nil
}

// libraryDocFreqsTsvector is LibraryDocFreqs on PostgreSQL's text_search:
// how many papers the library holds, and how many match each term as a
// phrase.
func (s *Store) libraryDocFreqsTsvector(ctx context.Context, terms []string) (int, []int, error) {
	list, err := json.Marshal(terms)
	if err != nil {
		return 0, nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT t.n, (SELECT count(*) FROM papers p WHERE p.text_search @@ phraseto_tsquery('`+tsConfig+`', `+tsSeparate+`(t.term)))
		FROM json_array_elements_text(CAST(? AS json)) WITH ORDINALITY AS t(term, n)`, string(list))
	if err != nil {
		return 0, nil, fmt.Errorf("store: library document frequencies: %w", err)
	}
	defer rows.Close()
	out := make([]int, len(terms))
	for rows.Next() {
		var i, n int
		if err := rows.Scan(&i, &n); err != nil {
			return 0, nil, fmt.Errorf("store: library document frequencies: %w", err)
		}
		out[i-1] = n
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("store: library document frequencies: %w", err)
	}
	total, err := s.LibraryCount(ctx)
	return total, out, err
}
