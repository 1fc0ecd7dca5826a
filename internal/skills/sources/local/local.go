// Package local is the "local" search source: the paper library imported
// into Quarry's own database (see `quarry import`), searched with SQLite
// FTS5. It depends only on the small Library interface, so the skills side
// never imports the store or SQL.
package local

import (
	"context"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
)

// Library is what the source needs from the store: a full-text search that
// takes an FTS5 MATCH expression (the query package's local rendering),
// returns papers best match first from an offset (the next page), and
// reports a malformed expression as fault.EInvalid; and the count of the
// same match without its limit.
type Library interface {
	SearchLibraryPage(ctx context.Context, match string, years research.YearRange, offset, limit int) ([]research.RawPaper, error)
	CountLibrary(ctx context.Context, match string, years research.YearRange) (int, error)
}

// Source searches the local library.
type Source struct {
	lib Library
}

var _ sources.Counter = (*Source)(nil)

// New returns the local source over lib. A nil lib is EInvalid rather than
// a panic at the first search, so a wiring mistake shows at start-up.
func New(lib Library) (*Source, error) {
	if lib == nil {
		return nil, fault.Errorf(fault.EInvalid, "local source: no library")
	}
	return &Source{lib: lib}, nil
}

// Name implements sources.Source.
func (s *Source) Name() string { return research.SourceLocal }

// Search implements sources.Source: SearchCounted without the total.
func (s *Source) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter: req.Query is the FTS5
// expression, the year range is applied by the library (papers of unknown
// year are kept, as YearRange.Contains does), Rank follows the library's
// bm25 order from req.Offset (a next page), and the total is the library's
// count of the same match. The count is asked only when the page is full:
// a shorter page is the last.
func (s *Source) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	unknown := sources.Page{Total: sources.TotalUnknown}
	if err := req.Check(s.Name()); err != nil {
		return unknown, err
	}
	limit := min(req.MaxResults, research.MaxResultsLimit)
	papers, err := s.lib.SearchLibraryPage(ctx, req.Query, req.YearRange, req.Offset, limit)
	if err != nil {
		return unknown, err
	}
	total := req.Offset + len(papers)
	if len(papers) >= limit {
		if total, err = s.lib.CountLibrary(ctx, req.Query, req.YearRange); err != nil {
			return unknown, err
		}
	}
	out := make([]research.RawPaper, 0, len(papers))
	for _, p := range papers {
		p.Source = s.Name()
		p.Rank = len(out) + 1
		out = append(out, p)
	}
	return sources.Page{Papers: out, Total: sources.AtLeast(total, len(out))}, nil
}
