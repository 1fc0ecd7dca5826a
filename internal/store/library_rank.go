package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// LibraryHits runs an FTS5 MATCH expression over the library and returns
// up to limit papers (their docids and bm25 scores), best first, keeping
// papers inside years and those of unknown year. titleWeight is how much
// more a title match counts than an abstract match. A malformed expression
// is fault.EInvalid, as for SearchLibrary.
func (s *Store) LibraryHits(ctx context.Context, match string, years research.YearRange, titleWeight float64, limit int) ([]research.LibraryHit, error) {
	if strings.TrimSpace(match) == "" {
		return nil, fault.Errorf(fault.EInvalid, "the library search query is empty")
	}
	if limit <= 0 {
		return nil, fault.Errorf(fault.EInvalid, "the library search limit must be positive, not %d", limit)
	}
	// An author or a venue named like a topic word says nothing about
	// what a paper is about: only the title (weighted), abstract and
	// joined compounds score. bm25 is negative (lower is better); it is
	// negated so higher is better.
	hits, _, err := s.rankLibrary(ctx, match, []float64{titleWeight, 1, 0, 0, 1}, years, 0, limit)
	if err != nil {
		return nil, err
	}
	out := make([]research.LibraryHit, len(hits))
	for i, h := range hits {
		out[i] = research.LibraryHit{Doc: h.Docid, Score: -h.Score}
	}
	return out, nil
}

// LibraryPapersByDoc returns the papers with the given docids, in the
// order given; a docid no paper has (deleted since it was ranked) is left
// out.
func (s *Store) LibraryPapersByDoc(ctx context.Context, docs []int64) ([]research.RawPaper, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(docs)
	if err != nil {
		return nil, fmt.Errorf("store: library papers: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT p.docid, `+paperColumns+` FROM papers p WHERE p.docid IN `+s.read.d.jsonInts("?"), string(list))
	if err != nil {
		return nil, fmt.Errorf("store: library papers: %w", err)
	}
	defer rows.Close()
	byDoc := make(map[int64]research.RawPaper, len(docs))
	for rows.Next() {
		var doc int64
		p, err := scanPaper(rows, &doc)
		if err != nil {
			return nil, fmt.Errorf("store: library papers: %w", err)
		}
		byDoc[doc] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: library papers: %w", err)
	}
	out := make([]research.RawPaper, 0, len(byDoc))
	for _, d := range docs {
		if p, ok := byDoc[d]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// LibraryDocFreqs returns how many papers the library holds and, for each
// of terms (single words, stemmed by the index as a query is), how many
// papers contain it: the statistics pseudo-relevance feedback weighs a
// candidate expansion term by. Both come from the index, so they agree
// with each other and with bm25's, with no count of the table.
func (s *Store) LibraryDocFreqs(ctx context.Context, terms []string) (int, []int, error) {
	if s.tsRanking {
		return s.libraryDocFreqsTsvector(ctx, terms)
	}
	li, err := s.libraryIndex(ctx)
	if err != nil {
		return 0, nil, err
	}
	out := make([]int, len(terms))
	for i, t := range terms {
		q, err := parseMatch(`"` + strings.ReplaceAll(t, `"`, `""`) + `"`)
		if err != nil {
			return 0, nil, err
		}
		out[i] = li.ix.Count(q, nil)
	}
	return li.ix.Len(), out, nil
}
