package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/textindex"
)

// CountLibrary counts the papers SearchLibrary would find for match and
// years without its limit, so a capped search can say how many there are.
func (s *Store) CountLibrary(ctx context.Context, match string, years research.YearRange) (int, error) {
	if strings.TrimSpace(match) == "" {
		return 0, fault.Errorf(fault.EInvalid, "the library search query is empty")
	}
	return s.countLibrary(ctx, match, years)
}

// SearchLibrary runs an FTS5 MATCH expression (as the query package's local
// renderer writes it) over the library, best bm25 match first, keeping
// papers inside years (and those of unknown year, as YearRange.Contains
// does). A match expression the index cannot read is fault.EInvalid (see
// parseMatch).
func (s *Store) SearchLibrary(ctx context.Context, match string, years research.YearRange, limit int) ([]research.RawPaper, error) {
	return s.SearchLibraryPage(ctx, match, years, 0, limit)
}

// SearchLibraryPage is SearchLibrary from the offset-th match on: the
// next page of a search whose first offset papers were shown ("Show
// more"). Ties in rank are broken by the paper's row, so pages never
// overlap or skip a paper of equal rank.
func (s *Store) SearchLibraryPage(ctx context.Context, match string, years research.YearRange, offset, limit int) ([]research.RawPaper, error) {
	if strings.TrimSpace(match) == "" {
		return nil, fault.Errorf(fault.EInvalid, "the library search query is empty")
	}
	if limit <= 0 {
		return nil, fault.Errorf(fault.EInvalid, "the library search limit must be positive, not %d", limit)
	}
	if offset < 0 {
		return nil, fault.Errorf(fault.EInvalid, "the library search offset must not be negative, not %d", offset)
	}
	limit = min(limit, research.MaxResultsLimit)
	hits, _, err := s.rankLibrary(ctx, match, libraryWeights, years, offset, limit)
	if err != nil {
		return nil, err
	}
	return s.LibraryPapersByDoc(ctx, docidsOf(hits))
}

// docidsOf lists the hits' docids, in rank order.
func docidsOf(hits []textindex.Hit) []int64 {
	docs := make([]int64, len(hits))
	for i, h := range hits {
		docs[i] = h.Docid
	}
	return docs
}

// parseMatch reads an FTS5 MATCH expression for the library's index. One
// it cannot read is fault.EInvalid: the text may come from a researcher,
// and their typo is not our failure.
func parseMatch(match string) (*textindex.Expr, error) {
	q, err := textindex.Parse(match)
	if err != nil {
		var qe *textindex.QueryError
		if errors.As(err, &qe) {
			return nil, &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("the library cannot search for %q: %s; check quotes, parentheses and operators", truncate(match, 200), qe.Msg), Err: err}
		}
		return nil, fmt.Errorf("store: search library: %w", err)
	}
	return q, nil
}

// rankLibrary ranks the library's papers matching match inside years (and
// those of unknown year), within ctx's library selection if it names one, by bm25 with weights, best first, ties by docid
// (FTS5's ORDER BY bm25(...), rowid), and returns the page from offset of
// at most limit and how many match in all.
func (s *Store) rankLibrary(ctx context.Context, match string, weights []float64, years research.YearRange, offset, limit int) ([]textindex.Hit, int, error) {
	if s.tsRanking {
		return s.rankLibraryTsvector(ctx, match, weights, years, offset, limit)
	}
	q, err := parseMatch(match)
	if err != nil {
		return nil, 0, err
	}
	sel, err := s.selectionOf(ctx)
	if err != nil {
		return nil, 0, err
	}
	li, err := s.libraryIndex(ctx)
	if err != nil {
		return nil, 0, err
	}
	li.mu.RLock()
	defer li.mu.RUnlock()
	return li.ix.Search(q, weights, offset, limit, both(li.inYears(years), within(sel)))
}

// countLibrary counts the papers matching match inside years (and ctx's
// library selection).
func (s *Store) countLibrary(ctx context.Context, match string, years research.YearRange) (int, error) {
	if s.tsRanking {
		return s.countLibraryTsvector(ctx, match, years)
	}
	q, err := parseMatch(match)
	if err != nil {
		return 0, err
	}
	sel, err := s.selectionOf(ctx)
	if err != nil {
		return 0, err
	}
	li, err := s.libraryIndex(ctx)
	if err != nil {
		return 0, err
	}
	li.mu.RLock()
	defer li.mu.RUnlock()
	return li.ix.Count(q, both(li.inYears(years), within(sel))), nil
}

// truncate shortens s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
